"""What the wait that ends a timed block costs on its own: every GPU block's, and a CPU
block's where TensorFlow runs ops asynchronously (common.block_wait_op)."""

from . import engine
from .grid import DEVICES, DTYPES

# The wait reads one element, so its cost does not depend on the size.
SIZE = 2


def wait_block(device, dtype):
    """Run in the TensorFlow engine (engine.py): one read of an element of a computed
    tensor, or NotImplementedError with the reason the case cannot run here."""
    from .checks import skip_reason, wait_op
    from .common import TF_DEVICE, input_tensor, load_tensorflow, wait_for
    from .timing import InTurn

    reason = skip_reason(device, SIZE, dtype, "eager")
    if reason:
        raise NotImplementedError(reason)
    tf = load_tensorflow()
    tensor = input_tensor(device, SIZE, dtype)
    scope, op = TF_DEVICE[device], wait_op(device)

    def read_one_element():
        with tf.device(scope):
            wait_for(tensor, op)

    read_one_element.ops = 1
    # One read untimed before each timed one: the engine idled while asv took the last
    # sample (engine.Work.run). The tensor is never written: one copy, no turns.
    read_one_element.warm_up = read_one_element
    read_one_element()
    return InTurn([read_one_element])


class Wait:
    """Seconds to wait for (read one element of) a tensor that is already computed."""

    params = [DEVICES, DTYPES]
    param_names = ["device", "dtype"]
    version = "13"
    # As Multiply: samples from 4 moments of the run, 20-40 per case.
    rounds = 4
    repeat = (5, 10, 5.0)

    def setup(self, device, dtype):
        # Built and timed in the engine, as Multiply's blocks; skipped with the reason
        # where a check rules the case out.
        self.wait = engine.block("wait:wait_block", device, dtype)
        # asv's clock: the engine's time of each read.
        self.timer = self.wait.clock
        # asv re-runs setup before every sample: each sample waits for a quiet moment.
        self.wait.before_sample()

    def time_wait(self, device, dtype):
        """Seconds to read one element of a computed tensor back to the host."""
        self.wait()
