"""Axes, inputs, placement checks and timing helpers shared by the benchmarks.

asv imports every benchmark module in every benchmark process (and, with the
forkserver launch method, once before forking), so nothing here touches a
device at import time: TensorFlow is imported, devices are queried lazily.
"""

import functools
import os
import sys
import time

import numpy as np
import tensorflow as tf

from .grid import (  # noqa: F401  (the axes are re-exported for the benchmark modules)
    DEVICES,
    DTYPES,
    FACTOR,
    MODES,
    SIZES,
    bytes_moved,
    calibrated_ops,
    ops_per_block,
)

TF_DEVICE = {"cpu": "/CPU:0", "gpu": "/GPU:0"}


def per_op_timer(ops):
    """A clock whose differences are per-op times for a block of `ops` ops.

    asv divides a sample by the number of calls it made, not by the ops
    inside one call; handing it this clock makes the recorded time per op.
    """
    if ops == 1:
        return time.perf_counter

    def clock():
        return time.perf_counter() / ops

    return clock


# --- where a '/GPU:0' multiply really runs ----------------------------------

NO_GPU = "no GPU visible to TensorFlow: soft placement would run '/GPU:0' on the CPU"


def gpu_skip_reason(gpus, placed_on, host_memory_output):
    """Why a gpu multiply must not be measured, or None if it runs on a GPU.

    gpus: names of the GPUs TensorFlow lists; placed_on: the device a
    '/GPU:0' multiply reported; host_memory_output: whether the kernel
    TensorFlow selects for that dtype keeps its output in host memory (the
    int32 kernels for GPUs and PluggableDevices such as Metal do, and
    compute on the CPU).
    """
    if not gpus:
        return NO_GPU
    if placed_on is not None and "GPU" not in placed_on.upper():
        return f"soft placement ran the '/GPU:0' multiply on {placed_on}"
    if host_memory_output:
        return (
            "the GPU Mul kernel for this dtype keeps inputs and output in host memory "
            "and computes on the CPU"
        )
    return None


def mul_kernel_host_memory(dtype, device_type="GPU"):
    """Whether the Mul kernel TensorFlow picks for `dtype` on `device_type`
    keeps its output in host memory, from TensorFlow's kernel registry.

    A device's own kernel wins; PluggableDevices (Metal) fall back to the
    DEVICE_DEFAULT kernel, which for int32 is a HostMemory CPU kernel.
    Returns None when neither is registered (the op cannot run there).
    """
    from tensorflow.python.framework import kernels

    wanted = tf.as_dtype(dtype).as_datatype_enum
    by_device = {}
    for kernel in kernels.get_registered_kernels_for_op("Mul").kernel:
        allowed = [
            t for c in kernel.constraint if c.name == "T" for t in c.allowed_values.list.type
        ]
        if wanted in allowed:
            by_device[kernel.device_type] = "z" in kernel.host_memory_arg
    for candidate in (device_type, "DEFAULT"):
        if candidate in by_device:
            return by_device[candidate]
    return None


@functools.lru_cache(maxsize=None)
def device_skip_reason(device, dtype):
    """Why (device, dtype) is not measured here, or None. Checked once per process."""
    if device == "cpu":
        return None
    gpus = [d.name for d in tf.config.list_physical_devices("GPU")]
    if not gpus:
        return gpu_skip_reason(gpus, None, False)
    x = tf.zeros([2, 2], dtype=dtype)
    with tf.device(TF_DEVICE[device]):
        y = tf.multiply(x, FACTOR)
    host = mul_kernel_host_memory(dtype)
    # The buffer's location is the runtime's own word on HostMemory outputs.
    host = bool(host) or "CPU" in getattr(y, "backing_device", y.device).upper()
    return gpu_skip_reason(gpus, y.device, host)


# --- memory -----------------------------------------------------------------


def free_host_memory():
    """Bytes of host memory available now, or None where the OS won't say."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    if sys.platform == "darwin":
        # Unified memory on Apple silicon: the GPU shares this pool.
        try:
            pages = os.sysconf("SC_PHYS_PAGES")
            return pages * os.sysconf("SC_PAGE_SIZE") // 2
        except (ValueError, OSError):
            return None
    return None


def free_gpu_memory():
    """Bytes free on the first NVIDIA GPU per nvidia-smi, or None where unknown.

    TensorFlow reports what it has allocated, not what is free. Apple GPUs
    share host memory, which free_host_memory() already covers.
    """
    import shutil
    import subprocess

    if not shutil.which("nvidia-smi"):
        return None
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=memory.free", "--format=csv,noheader,nounits", "-i", "0"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
        return int(out.split()[0]) * 2**20
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


def memory_skip_reason(size, dtype, available, copies=4):
    """Why size x size of dtype would not fit in `available` bytes, or None.

    A block holds the input, an output being written and one being freed;
    `copies` leaves room for the allocator on top.
    """
    needed = copies * size * size * np.dtype(dtype).itemsize
    if available is not None and needed > available:
        return (
            f"{size}x{size} {dtype} needs ~{needed / 2**20:.0f} MiB, "
            f"{available / 2**20:.0f} MiB free"
        )
    return None


# --- inputs, functions and the wait -----------------------------------------


@functools.lru_cache(maxsize=None)
def input_tensor(device, size, dtype):
    """The size x size tensor of ones, resident on `device`."""
    with tf.device(TF_DEVICE[device]):
        return tf.identity(tf.ones([size, size], dtype=dtype))


@functools.lru_cache(maxsize=None)
def _first_element_window(rank):
    # Host-memory begin/size, made once: building them per wait would time
    # two constant conversions too.
    with tf.device("/CPU:0"):
        return tf.zeros([rank], tf.int32), tf.ones([rank], tf.int32)


def wait_for(tensor):
    """Block until `tensor` is computed, on any device and TensorFlow version.

    Reading one element back waits for the producing op on CUDA streams and
    Metal command queues alike; sync_devices() exists only from TF 2.12 and
    does not wait on PluggableDevices. A raw Slice is the cheapest read
    (~10 us on the CPU here, against ~90 us for .numpy() of a 1000x1000
    tensor, which copies, and ~160 us for Python indexing). Its cost is
    measured on its own by Wait.time_wait.
    """
    begin, size = _first_element_window(len(tensor.shape))
    return tf.raw_ops.Slice(input=tensor, begin=begin, size=size).numpy()


def _multiply(x):
    return tf.multiply(x, FACTOR)


def _multiply_block(x, ops):
    y = x
    for _ in range(ops):
        y = tf.multiply(x, FACTOR)
    return y


def _multiply_chain(x, ops):
    # Each iteration depends on the last, so no optimizer can hoist the
    # multiply out of the loop or run fewer than `ops` of them.
    y = x
    for _ in tf.range(ops):
        y = tf.multiply(y, FACTOR)
    return y


@functools.lru_cache(maxsize=None)
def block_runner(device, size, dtype, mode):
    """A zero-argument callable running one timed block; traced, warmed up and
    calibrated. Its `ops` attribute is the block length.

    Tensors are passed to tf.function as arguments: a captured constant
    would be folded away by Grappler and only the call would be timed.
    """
    x = input_tensor(device, size, dtype)
    functions = []
    if mode == "eager":

        def make_run(ops):
            return lambda: _multiply_block(x, ops)
    elif mode in ("function", "xla"):
        step = tf.function(_multiply, jit_compile=(mode == "xla"))
        functions.append(step)

        def make_run(ops):
            def run():
                y = x
                for _ in range(ops):
                    y = step(x)
                return y

            return run
    elif mode == "graph_loop":
        loop = tf.function(_multiply_chain)
        functions.append(loop)

        def make_run(ops):
            # The count is an argument: a new length does not retrace.
            count = tf.constant(ops)
            return lambda: loop(x, count)
    else:
        raise ValueError(f"unknown mode {mode!r}; expected one of {MODES}")

    def make_block(ops):
        run = make_run(ops)

        def timed_block():
            # The wait's ops go on the same device: outside the scope TensorFlow
            # would place them on a GPU and copy a CPU result there first.
            with tf.device(TF_DEVICE[device]):
                wait_for(run())

        timed_block.ops = ops
        # Exposed so tests can check that timed calls never retrace.
        timed_block.functions = functions
        return timed_block

    block = make_block(ops_per_block(size))
    try:
        block()  # trace, compile and allocate outside the timed region
    except (tf.errors.UnimplementedError, tf.errors.InvalidArgumentError) as error:
        if mode != "xla":
            raise
        # tensorflow-metal, for one, has no XLA backend: skip, don't fail.
        first_line = str(error).strip().splitlines()[0]
        raise NotImplementedError(f"XLA cannot compile for {device}: {first_line}") from None
    start = time.perf_counter()
    block()
    ops = calibrated_ops(block.ops, time.perf_counter() - start)
    if ops != block.ops:
        block = make_block(ops)
        block()
    return block


@functools.lru_cache(maxsize=None)
def skip_reason(device, size, dtype):
    """Why this combination is not measured here, or None. Checked before
    anything is allocated, so a size that cannot fit is skipped, not killed.

    Cached: asv re-runs setup before every sample, and once a block is
    allocated there is nothing left to check (and nvidia-smi is a subprocess)."""
    reason = device_skip_reason(device, dtype) or memory_skip_reason(
        size, dtype, free_host_memory()
    )
    if reason is None and device == "gpu" and sys.platform != "darwin":
        reason = memory_skip_reason(size, dtype, free_gpu_memory())
    return reason


def per_op_seconds(block, ops, min_time=0.2, min_blocks=5):
    """Median per-op time of `block` timed back to back for at least `min_time`.

    Used by track_ benchmarks that compare two devices side by side in one
    process; the time_ benchmarks leave sampling to asv.
    """
    samples = []
    spent = 0.0
    while len(samples) < min_blocks or spent < min_time:
        start = time.perf_counter()
        block()
        elapsed = time.perf_counter() - start
        samples.append(elapsed / ops)
        spent += elapsed
    return float(np.median(samples))
