"""tf.multiply(x, 2): time per op, GPU/CPU speedup and effective bandwidth."""

from .common import (
    DEVICES,
    DTYPES,
    MODES,
    SIZES,
    block_runner,
    bytes_moved,
    per_op_seconds,
    per_op_timer,
    skip_reason,
)

# Sizes large enough that a multiply is limited by memory, not by dispatch.
LARGE_SIZES = [1000, 2048, 4096]


class Multiply:
    """Seconds per `tf.multiply(x, 2)`, the op finished (waited for) on its device."""

    params = [DEVICES, SIZES, DTYPES, MODES]
    param_names = ["device", "size", "dtype", "mode"]
    # Keep the history when the code around the timed call changes.
    version = "1"
    # asv runs round k of every case before round k+1, so 4 rounds sample each case at
    # 4 moments of the run: load that comes and goes on a shared machine hits every case
    # alike instead of deciding a verdict (selfcheck: noise). Needs launch_method
    # forkserver: a forked round costs ~0.1 s, a spawned one a ~3 s TensorFlow import.
    rounds = 4
    # setup makes asv time one block (>= 10 ms) per sample; 5-10 per round, 20-40 per case.
    repeat = (5, 10, 5.0)

    def setup(self, device, size, dtype, mode):
        reason = skip_reason(device, size, dtype)
        if reason:
            raise NotImplementedError(reason)
        self.block = block_runner(device, size, dtype, mode)
        # asv divides by calls, a call runs a block of ops: time per op.
        self.timer = per_op_timer(self.block.ops)

    def time_multiply(self, device, size, dtype, mode):
        self.block()


class Speedup:
    """GPU/CPU speedup of a multiply, both devices timed side by side in one process."""

    params = [SIZES, DTYPES, MODES]
    param_names = ["size", "dtype", "mode"]
    unit = "x"
    version = "1"

    def setup(self, size, dtype, mode):
        reason = skip_reason("gpu", size, dtype) or skip_reason("cpu", size, dtype)
        if reason:
            raise NotImplementedError(reason)
        self.blocks = {d: block_runner(d, size, dtype, mode) for d in DEVICES}

    def track_gpu_speedup(self, size, dtype, mode):
        cpu = per_op_seconds(self.blocks["cpu"], self.blocks["cpu"].ops)
        gpu = per_op_seconds(self.blocks["gpu"], self.blocks["gpu"].ops)
        return cpu / gpu


class Bandwidth:
    """Effective bandwidth of a float32 multiply: 4 bytes read, 4 written per element."""

    params = [DEVICES, LARGE_SIZES, MODES]
    param_names = ["device", "size", "mode"]
    unit = "GB/s"
    version = "1"

    def setup(self, device, size, mode):
        reason = skip_reason(device, size, "float32")
        if reason:
            raise NotImplementedError(reason)
        self.block = block_runner(device, size, "float32", mode)

    def track_effective_bandwidth(self, device, size, mode):
        seconds = per_op_seconds(self.block, self.block.ops)
        return bytes_moved(size, "float32") / seconds / 1e9
