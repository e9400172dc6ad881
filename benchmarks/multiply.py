"""tf.multiply(x, 2): time per op, GPU/CPU speedup and effective bandwidth."""

from . import engine
from .grid import DEVICES, DTYPES, MODES, SIZES, bytes_moved

# Sizes large enough that a multiply is limited by memory, not by dispatch.
LARGE_SIZES = [1000, 2048, 4096]


def multiply_block(device, size, dtype, mode):
    """Run in the TensorFlow engine (engine.py): the case's calibrated blocks of multiplies
    (ending with the wait where the device queues them), one per copy of the input, taken
    in turn (timing.InTurn), or NotImplementedError with the reason it cannot run here."""
    from .checks import skip_reason
    from .common import block_runner, block_wait_op

    reason = skip_reason(device, size, dtype, mode)
    if reason:
        raise NotImplementedError(reason)
    return block_runner(device, size, dtype, mode, block_wait_op(device))


# The classes below hold no TensorFlow and import none: each case's block is built, kept
# and timed in the engine, so the benchmark process asv starts for each case and round
# costs an interpreter, not a TensorFlow import (spawn) or a copy of one (forkserver).


class Multiply:
    """Seconds per `tf.multiply(x, 2)`, the op finished on its device.

    Waited for where the device queues ops (a GPU); on the CPU it has finished when it
    returns."""

    params = [DEVICES, SIZES, DTYPES, MODES]
    param_names = ["device", "size", "dtype", "mode"]
    # Bumped whenever the timed code changes (tests/suite/test_versions.py checks it).
    version = "15"
    # asv runs round k of every case before round k+1, so 4 rounds sample each case at
    # 4 moments of the run: load that comes and goes on a shared machine hits every case
    # alike instead of deciding a verdict (selfcheck: noise). A round costs a fork
    # (forkserver) or an interpreter start (spawn), ~0.2 s: TensorFlow stays in the engine.
    rounds = 4
    # setup makes asv time one block (>= 10 ms) per sample; 5-10 per round, 20-40 per case.
    repeat = (5, 10, 5.0)
    # No asv warm-up (its default is 0.1 s of calls before each round's first sample):
    # every sample warms up in the engine (grid.warm_up_parts) and waits for a quiet
    # moment in setup. Dropping it saves a quarter of the run (109.5 s -> 78.9 s, 2026-12-06)
    # and moved a case's round median by x1.006 quiet (99 % interval
    # 0.997-1.015) and x1.005 beside the self-check's bursty load (0.999-1.011): each
    # case run both ways a second apart, every round, in one asv run (512 pairs each;
    # scripts/asv_warm_up_cost.py, the README's second VM, 2026-12-07).
    warmup_time = 0

    def setup(self, device, size, dtype, mode):
        # Skipped with the reason (NotImplementedError) where a check rules the case out.
        self.block = engine.block("multiply:multiply_block", device, size, dtype, mode)
        # asv's clock: the engine's time of each block, divided by its ops.
        self.timer = self.block.clock
        # asv re-runs setup before every sample: each sample waits for a quiet moment.
        self.block.before_sample()

    def time_multiply(self, device, size, dtype, mode):
        """Seconds per multiply: a block of ops, then one wait for the last, per sample.

        On a GPU the wait reads one element back; on the CPU the last op's own call is the
        wait, as TensorFlow runs it to its end before returning (common.block_wait_op)."""
        self.block()


class Speedup:
    """GPU/CPU speedup of a multiply, both devices timed side by side in one process."""

    params = [SIZES, DTYPES, MODES]
    param_names = ["size", "dtype", "mode"]
    unit = "x"
    version = "14"

    def setup(self, size, dtype, mode):
        self.blocks = {d: engine.block("multiply:multiply_block", d, size, dtype, mode)
                       for d in ("gpu", "cpu")}

    def track_gpu_speedup(self, size, dtype, mode):
        """CPU seconds per op over GPU seconds per op; above 1 the GPU is faster."""
        return self.blocks["cpu"].per_op_seconds() / self.blocks["gpu"].per_op_seconds()


class Bandwidth:
    """Effective bandwidth of a float32 multiply: 4 bytes read, 4 written per element."""

    params = [DEVICES, LARGE_SIZES, MODES]
    param_names = ["device", "size", "mode"]
    unit = "GB/s"
    version = "14"

    def setup(self, device, size, mode):
        self.block = engine.block("multiply:multiply_block", device, size, "float32", mode)

    def track_effective_bandwidth(self, device, size, mode):
        """Bytes read and written per second by a float32 multiply, in GB/s."""
        return bytes_moved(size, "float32") / self.block.per_op_seconds() / 1e9
