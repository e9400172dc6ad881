"""TensorFlow's side of the suite: devices, inputs, the multiply in each mode, the wait.

What runs here runs in the TensorFlow engine (engine.py), the one process per run
that imports TensorFlow; asv's benchmark processes ask it for their blocks.
TensorFlow is imported on first use (`load_tensorflow`), never at module level:
asv imports every benchmark module to discover the suite. Nothing here touches a
device at import.
"""

import functools
import importlib.util
import os
import shutil
import subprocess
import sys

from .grid import FACTOR, ITEMSIZE, input_copies, ops_per_block, warm_up_parts
from .timing import in_turn

TF_DEVICE = {"cpu": "/CPU:0", "gpu": "/GPU:0"}

# The module, once load_tensorflow() has imported it. A module global, not an
# import inside each function: the eager block calls tf.multiply per op, where
# even a cached `import` statement would cost a measurable share of 6 us.
tf = None


def tensorflow_missing():
    """Why TensorFlow cases cannot run in this environment, or None."""
    if tf is None and importlib.util.find_spec("tensorflow") is None:
        return "TensorFlow is not installed in this environment"
    return None


def load_tensorflow():
    """Import TensorFlow (once) and return it."""
    global tf
    if tf is None:
        import tensorflow

        tf = tensorflow
    return tf


# --- inputs and the multiply in each mode ----------------------------------------


@functools.lru_cache(maxsize=None)
def input_tensor(device, size, dtype, copy=0):
    """The size x size tensor of ones, resident on `device`; each `copy` is another
    tensor, in memory of its own (grid.input_copies)."""
    load_tensorflow()
    with tf.device(TF_DEVICE[device]):
        return tf.identity(tf.ones([size, size], dtype=dtype))


def _multiply(x):
    return tf.multiply(x, FACTOR)


# A block keeps only its last result, as a loop of `tf.multiply(x, 2)` does: a result
# still held while the next one is computed makes the allocator map fresh pages for
# each (4096x4096 float32 eager: 4.2 ms against 3.1 ms per op, median of 20 loops,
# this suite's 2-core VM, 2026-12-01; no difference at 2048x2048).
def _multiply_block(x, ops):
    for _ in range(ops - 1):
        tf.multiply(x, FACTOR)
    return tf.multiply(x, FACTOR)


def _multiply_chain(x, ops):
    # Each iteration depends on the last, so no optimizer can hoist the
    # multiply out of the loop or run fewer than `ops` of them.
    y = x
    for _ in tf.range(ops):
        y = tf.multiply(y, FACTOR)
    return y


def make_multiply_run(mode):
    """(make_run, functions) for `mode`.

    make_run(x, ops) returns a zero-argument callable running `ops` multiplies of
    the tensor `x` and returning the last result; functions are the tf.functions
    traced (tests check that timed calls never retrace them: every copy of an
    input has the same shape and dtype). Tensors are passed to tf.function as
    arguments: a captured constant would be folded away by Grappler and only the
    call would be timed.
    """
    load_tensorflow()
    if mode == "eager":
        # functools.partial is called without a Python frame of its own (see engine.py).
        return (lambda x, ops: functools.partial(_multiply_block, x, ops)), []
    if mode in ("function", "xla"):
        step = tf.function(_multiply, jit_compile=(mode == "xla"))

        def make_run(x, ops):
            def run():
                for _ in range(ops - 1):  # only the last result kept, as in eager
                    step(x)
                return step(x)

            return run

        return make_run, [step]
    if mode == "graph_loop":
        loop = tf.function(_multiply_chain)

        def make_run(x, ops):
            # The count is an argument: a new length does not retrace.
            return functools.partial(loop, x, tf.constant(ops))

        return make_run, [loop]
    raise ValueError(f"unknown mode {mode!r}")


# --- the wait: read one element back ------------------------------------------------

# Ops that read the first element of a tensor, in order of preference. The
# GPU self-check picks the first one this TensorFlow (and its plugin) places on
# the GPU: one placed on the CPU would copy the whole tensor to the host first.
WAIT_OPS = ("Slice", "StridedSlice")


@functools.lru_cache(maxsize=None)
def _first_element_window(rank):
    # Host-memory begin/size, made once: building them per wait would time
    # two constant conversions too.
    load_tensorflow()
    with tf.device("/CPU:0"):
        return tf.zeros([rank], tf.int32), tf.ones([rank], tf.int32)


def first_element(tensor, op="Slice"):
    """The first element of `tensor`, as a one-element tensor on the tensor's device."""
    begin, ones = _first_element_window(len(tensor.shape))
    if op == "Slice":
        return tf.raw_ops.Slice(input=tensor, begin=begin, size=ones)
    if op == "StridedSlice":
        return tf.raw_ops.StridedSlice(input=tensor, begin=begin, end=ones, strides=ones)
    raise ValueError(f"unknown wait op {op!r}; expected one of {WAIT_OPS}")


def executes_synchronously():
    """Whether TensorFlow runs each eager op and tf.function call to its end before the
    call returns (tf.config.experimental.get_synchronous_execution; True by default, and
    on stacks too old to say, which have no asynchronous mode to turn on)."""
    load_tensorflow()
    ask = getattr(tf.config.experimental, "get_synchronous_execution", None)
    return True if ask is None else bool(ask())


def block_wait_op(device):
    """The read-back op that ends each of `device`'s timed blocks (the one the checks
    chose: checks.wait_op), or None where nothing is left to wait for when the ops
    return: the CPU, while TensorFlow executes synchronously (its default; a program may
    turn it off, and then CPU ops queue too).

    Not reading back on the CPU is what a bare loop of the op does, and the read is not
    free there: right after a 10 ms block of 2x2 multiplies it took 40-111 us, against
    12 us for reads back to back, and blocks with it read 0.7-1.5 % slower than without
    (paired, 240 blocks per case, 2x2 to 256x256 eager, in the engine, the README's
    second VM, 2026-12-07). Wait.time_wait still times the read on the CPU.

    Here, not in checks.py, because it decides what a block times (tests/suite/
    test_versions.py follows it into every benchmark that runs a multiply block).
    """
    if device == "cpu" and executes_synchronously():
        return None
    from .checks import wait_op

    return wait_op(device)


def wait_for(tensor, op="Slice"):
    """Block until `tensor` is computed, on any device and TensorFlow version.

    Reading one element back waits for the producing op on CUDA streams and
    Metal command queues alike; sync_devices() exists only from TF 2.12 and
    does not wait on PluggableDevices. A raw read is the cheapest (~10 us on
    the CPU here, against ~90 us for .numpy() of a 1000x1000 tensor, which
    copies, and ~160 us for Python indexing). Its cost is measured on its own
    by Wait.time_wait; the GPU self-check proves it waits and stays on the GPU.
    """
    return first_element(tensor, op).numpy()


@functools.lru_cache(maxsize=None)
def block_runner(device, size, dtype, mode, wait_op="Slice"):
    """The case's timing.InTurn: one block per copy of the input (grid.input_copies),
    each a zero-argument callable running the ops and the wait (`wait_op`; none where it
    is None: block_wait_op), traced, warmed up and calibrated to last at least
    grid.MIN_BLOCK_SECONDS. Its `ops` attribute is the blocks' length, `functions` the
    tf.functions they call."""
    # Copy 0 is asked for as every other caller asks for the input (the cache keys on
    # the arguments as written), so it is the same tensor, not one more.
    inputs = [input_tensor(device, size, dtype)] + [
        input_tensor(device, size, dtype, copy) for copy in range(1, input_copies(size, dtype))]
    make_run, functions = make_multiply_run(mode)
    scope = TF_DEVICE[device]

    def make_block(ops, copy):
        run = make_run(inputs[copy], ops)

        if wait_op is None:
            def timed_block():
                with tf.device(scope):
                    run()
        else:
            def timed_block():
                # The wait's ops go on the same device: outside the scope TensorFlow
                # would place them on a GPU and copy a CPU result there first.
                with tf.device(scope):
                    wait_for(run(), wait_op)

        timed_block.ops = ops
        timed_block.functions = functions
        return timed_block

    blocks = in_turn(make_block, ops_per_block(size), len(inputs), warm_up_parts(size))
    blocks.functions = functions
    return blocks


# --- memory -------------------------------------------------------------------------


def parse_vm_stat(text):
    """Bytes macOS can give a process now, from `vm_stat`: free, inactive,
    speculative and purgeable pages (what the kernel reclaims on demand), or None."""
    lines = (text or "").splitlines()
    if not lines or "page size of" not in lines[0]:
        return None
    page = int(lines[0].split("page size of")[1].split()[0])
    wanted = ("Pages free", "Pages inactive", "Pages speculative", "Pages purgeable")
    pages = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip() in wanted:
            pages += int(value.strip().rstrip("."))
    return pages * page


def _output(command):
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def free_host_memory():
    """Bytes of host memory available now, or None where the OS won't say.

    Apple GPUs share this memory, so it is the GPU's limit on a Mac too.
    """
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    if sys.platform == "darwin" and shutil.which("vm_stat"):
        return parse_vm_stat(_output(["vm_stat"]))
    return None


def visible_nvidia_index(environ=os.environ):
    """nvidia-smi's index of TensorFlow's GPU:0: the first of CUDA_VISIBLE_DEVICES, else 0."""
    first = environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    return first if first else "0"


def free_gpu_memory():
    """Bytes free on TensorFlow's NVIDIA GPU per nvidia-smi, or None where unknown.

    True only because the suite sets TF_FORCE_GPU_ALLOW_GROWTH (benchmarks/
    __init__.py): by default TensorFlow maps nearly all GPU memory at its first
    GPU op, and nvidia-smi would then report only what TensorFlow left.
    Apple GPUs share host memory, which free_host_memory() covers.
    """
    if not shutil.which("nvidia-smi"):
        return None
    out = _output(["nvidia-smi", "--query-gpu=memory.free", "--format=csv,noheader,nounits",
                   "-i", visible_nvidia_index()])
    try:
        return int(out.split()[0]) * 2**20
    except (AttributeError, ValueError, IndexError):
        return None


def memory_skip_reason(size, dtype, available, copies=4, inputs=1):
    """Why size x size of dtype would not fit in `available` bytes, or None.

    A block holds the input, an output being written and one being freed;
    `copies` leaves room for the allocator on top; `inputs` - 1 more copies of
    the input come on top of that (TensorFlow's cases: grid.input_copies).
    """
    needed = (copies - 1 + inputs) * size * size * ITEMSIZE[dtype]
    if available is not None and needed > available:
        return (
            f"{size}x{size} {dtype} needs ~{needed / 2**20:.0f} MiB, "
            f"{available / 2**20:.0f} MiB free"
        )
    return None
