"""tf.multiply(x, 2): time per op, GPU/CPU speedup and effective bandwidth."""

from .checks import skip_reason, wait_op
from .common import block_runner
from .grid import DEVICES, DTYPES, MODES, SIZES, bytes_moved
from .timing import before_sample, per_op_seconds, per_op_timer

# Sizes large enough that a multiply is limited by memory, not by dispatch.
LARGE_SIZES = [1000, 2048, 4096]


class Multiply:
    """Seconds per `tf.multiply(x, 2)`, the op finished (waited for) on its device."""

    params = [DEVICES, SIZES, DTYPES, MODES]
    param_names = ["device", "size", "dtype", "mode"]
    # Bumped whenever the timed code changes (tests/suite/test_versions.py checks it).
    version = "3"
    # asv runs round k of every case before round k+1, so 4 rounds sample each case at
    # 4 moments of the run: load that comes and goes on a shared machine hits every case
    # alike instead of deciding a verdict (selfcheck: noise). Needs launch_method
    # forkserver: a forked round costs ~0.1 s, a spawned one a ~3 s TensorFlow import.
    rounds = 4
    # setup makes asv time one block (>= 10 ms) per sample; 5-10 per round, 20-40 per case.
    repeat = (5, 10, 5.0)

    def setup(self, device, size, dtype, mode):
        reason = skip_reason(device, size, dtype, mode)
        if reason:
            raise NotImplementedError(reason)
        self.block = block_runner(device, size, dtype, mode, wait_op(device))
        # asv divides by calls, a call runs a block of ops: time per op.
        self.timer = per_op_timer(self.block.ops)
        # asv re-runs setup before every sample: each sample waits for a quiet moment.
        before_sample(self.block)

    def time_multiply(self, device, size, dtype, mode):
        """Seconds per multiply: a block of ops, then one wait for the last, per sample."""
        self.block()


class Speedup:
    """GPU/CPU speedup of a multiply, both devices timed side by side in one process."""

    params = [SIZES, DTYPES, MODES]
    param_names = ["size", "dtype", "mode"]
    unit = "x"
    version = "3"

    def setup(self, size, dtype, mode):
        reason = skip_reason("gpu", size, dtype, mode) or skip_reason("cpu", size, dtype, mode)
        if reason:
            raise NotImplementedError(reason)
        self.blocks = {d: block_runner(d, size, dtype, mode, wait_op(d)) for d in DEVICES}

    def track_gpu_speedup(self, size, dtype, mode):
        """CPU seconds per op over GPU seconds per op; above 1 the GPU is faster."""
        return per_op_seconds(self.blocks["cpu"]) / per_op_seconds(self.blocks["gpu"])


class Bandwidth:
    """Effective bandwidth of a float32 multiply: 4 bytes read, 4 written per element."""

    params = [DEVICES, LARGE_SIZES, MODES]
    param_names = ["device", "size", "mode"]
    unit = "GB/s"
    version = "3"

    def setup(self, device, size, mode):
        reason = skip_reason(device, size, "float32", mode)
        if reason:
            raise NotImplementedError(reason)
        self.block = block_runner(device, size, "float32", mode, wait_op(device))

    def track_effective_bandwidth(self, device, size, mode):
        """Bytes read and written per second by a float32 multiply, in GB/s."""
        return bytes_moved(size, "float32") / per_op_seconds(self.block) / 1e9
