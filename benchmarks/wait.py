"""What the wait that ends every timed block costs on its own."""

from .checks import skip_reason, wait_op
from .common import TF_DEVICE, input_tensor, load_tensorflow, wait_for
from .grid import DEVICES, DTYPES
from .timing import before_sample

# The wait reads one element, so its cost does not depend on the size.
SIZE = 2


class Wait:
    """Seconds to wait for (read one element of) a tensor that is already computed."""

    params = [DEVICES, DTYPES]
    param_names = ["device", "dtype"]
    version = "3"
    # As Multiply: samples from 4 moments of the run, 20-40 per case.
    rounds = 4
    repeat = (5, 10, 5.0)

    def setup(self, device, dtype):
        reason = skip_reason(device, SIZE, dtype, "eager")
        if reason:
            raise NotImplementedError(reason)
        self.tf = load_tensorflow()
        self.tensor = input_tensor(device, SIZE, dtype)
        self.scope = TF_DEVICE[device]
        self.op = wait_op(device)
        self.time_wait(device, dtype)
        # asv re-runs setup before every sample: each sample waits for a quiet moment.
        before_sample(lambda: self.time_wait(device, dtype))

    def time_wait(self, device, dtype):
        """Seconds to read one element of a computed tensor back to the host."""
        with self.tf.device(self.scope):
            wait_for(self.tensor, self.op)
