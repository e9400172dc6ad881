"""What the wait that ends a timed block costs on its own: every GPU block's, and a CPU
block's where TensorFlow runs ops asynchronously (common.block_wait_op)."""

from . import engine
from .grid import DEVICES, DTYPES

# The wait reads one element, so its cost does not depend on the size.
SIZE = 2


def wait_block(device, dtype):
    """Run in the TensorFlow engine (engine.py): reads of one element of a computed tensor,
    back to back in a block of at least grid.MIN_BLOCK_SECONDS, or NotImplementedError
    with the reason the case cannot run here.

    A block, as every other case's sample: a sample of one read (27-47 us on the suite's
    second 2-core VM) is one draw of the interrupts and wake-ups around it. Timed so
    (version 13), the case was in the first pass's flags of the self-check's A/A in 4 of
    4 runs, and in 9 A/A pairs (scripts/aa_of_cases.py, 2026-12-07) its value moved
    x0.68-x1.60 between two runs of one stack, past x1.1 in 8 of 18, with a median 39-53 %
    of it between its quartiles; the 2x2 multiply, timed in blocks in the same runs, 3-4 %.
    In blocks: x0.95-x1.27, past x1.1 in 2 of 18 (as the 2x2 multiply, 2 of 18), 5-6 %.
    """
    from .checks import skip_reason, wait_op
    from .common import TF_DEVICE, input_tensor, load_tensorflow, wait_for
    from .grid import warm_up_parts
    from .timing import InTurn, calibrated_block

    reason = skip_reason(device, SIZE, dtype, "eager")
    if reason:
        raise NotImplementedError(reason)
    tf = load_tensorflow()
    tensor = input_tensor(device, SIZE, dtype)
    scope, op = TF_DEVICE[device], wait_op(device)

    def make_block(reads):
        def read_back_to_back():
            with tf.device(scope):
                for _ in range(reads):
                    wait_for(tensor, op)

        read_back_to_back.ops = reads
        return read_back_to_back

    # The tensor is never written: one copy, no turns.
    return InTurn([calibrated_block(make_block, 1, warm_up_parts(SIZE))])


class Wait:
    """Seconds to wait for (read one element of) a tensor that is already computed."""

    params = [DEVICES, DTYPES]
    param_names = ["device", "dtype"]
    version = "14"
    # As Multiply: samples from 4 moments of the run, 20-40 per case.
    rounds = 4
    repeat = (5, 10, 5.0)

    def setup(self, device, dtype):
        # Built and timed in the engine, as Multiply's blocks; skipped with the reason
        # where a check rules the case out.
        self.wait = engine.block("wait:wait_block", device, dtype)
        # asv's clock: the engine's time of each block, per read.
        self.timer = self.wait.clock
        # asv re-runs setup before every sample: each sample waits for a quiet moment.
        self.wait.before_sample()

    def time_wait(self, device, dtype):
        """Seconds to read one element of a computed tensor back to the host."""
        self.wait()
