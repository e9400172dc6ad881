"""jnp.multiply(x, 2) on JAX's devices, op by op and jitted, timed as multiply.py times
tf.multiply.

JAX is imported on first use (load_jax), never at module level; forkserver_preload.py
imports it once where asv forks. Importing JAX starts no backend (nor its threads): they
start at the first device query, in the benchmark process of each case, after the fork.
"""

import functools

from .comparators import (
    ComparatorMultiply,
    inputs,
    memory_reason,
    multiply_block,
    not_installed,
)
from .grid import DTYPES, FACTOR, JAX_DEVICES, JAX_MODES, SIZES

# The modules, once load_jax() has imported them: module globals, as common.tf, so the
# op-by-op block's per-op call pays no import statement.
jax = None
jnp = None
# Whether start_backend_for() started JAX's CPU backend alone in this process.
cpu_alone = False


def load_jax():
    """Import JAX (once) and return it."""
    global jax, jnp
    if jax is None:
        import jax as jax_module
        import jax.numpy as jnp_module

        jax, jnp = jax_module, jnp_module
    return jax


def backends_started():
    """Whether JAX has started its backends in this process (None: this JAX won't say)."""
    try:
        from jax._src import xla_bridge  # private: no public way to ask
    except ImportError:
        return None
    started = getattr(xla_bridge, "backends_are_initialized", None)
    return started() if started is not None else None


def start_backend_for(device):
    """Before JAX's first device query in this process: for a cpu case, start the CPU
    backend alone. Otherwise a cpu case starts the GPU client too, in each of asv's
    processes (one per case and round): time and GPU memory spent on no measurement,
    and a GPU runtime's threads beside the CPU being timed. A gpu case starts them all.
    """
    global cpu_alone
    load_jax()
    if device == "cpu" and backends_started() is False:
        jax.config.update("jax_platforms", "cpu")
        cpu_alone = True


def _first_line(error):
    text = str(error).strip()
    return text.splitlines()[0][:300] if text else type(error).__name__


@functools.lru_cache(maxsize=None)
def device_reason(device):
    """Why JAX cannot run on `device` here, or None."""
    start_backend_for(device)
    try:
        found = jax.devices(device)
    except RuntimeError as error:
        why = _first_line(error)
        if device != "cpu" and cpu_alone:
            why += " (a cpu case started JAX's CPU backend alone earlier in this process)"
        return f"no {device} device for JAX: {why}"
    return None if found else f"JAX lists no {device} device"


@functools.lru_cache(maxsize=None)
def skip_reason(device, size, dtype, mode):
    """Why this case is not measured here, or None. Cached: asv re-runs setup before
    every sample, and the memory guard asks nvidia-smi."""
    return (not_installed("jax", "JAX") or device_reason(device)
            or memory_reason(device, size, dtype))


@functools.lru_cache(maxsize=None)
def input_array(device, size, dtype, copy=0):
    """The size x size array of ones, committed to `device` (ops on it run there); each
    `copy` (0 to grid.input_copies - 1) in memory of its own."""
    import numpy

    load_jax()
    return jax.device_put(numpy.ones((size, size), dtype=dtype), jax.devices(device)[0])


def _multiply(x):
    return jnp.multiply(x, FACTOR)


def _multiply_block(x, ops):
    # Independent multiplies of x, only the last result kept: as multiply.py's eager block.
    for _ in range(ops - 1):
        jnp.multiply(x, FACTOR)
    return jnp.multiply(x, FACTOR)


def _multiply_chain(x, ops):
    # Each iteration depends on the last, so XLA can neither hoist the multiply out of
    # the loop nor run fewer than `ops` of them; `ops` is traced, so the loop's length
    # is not known when it compiles.
    return jax.lax.fori_loop(0, ops, lambda i, y: jnp.multiply(y, FACTOR), x)


@functools.lru_cache(maxsize=None)
def jitted(function):
    """jax.jit(function), made once: the copies of a case's input share it (one shape
    and dtype: one trace)."""
    load_jax()
    return jax.jit(function)


def make_multiply_run(mode, x):
    """(make_run, functions) for `mode` on the array `x`.

    make_run(ops) returns a zero-argument callable running `ops` multiplies and
    returning the last result; functions are the jitted functions it calls (tests
    check that timed calls never retrace them).
    """
    import numpy

    load_jax()
    if mode == "eager":
        return (lambda ops: lambda: _multiply_block(x, ops)), []
    if mode == "jit":
        step = jitted(_multiply)

        def make_run(ops):
            def run():
                for _ in range(ops - 1):  # only the last result kept, as in eager
                    step(x)
                return step(x)

            return run

        return make_run, [step]
    if mode == "fori_loop":
        loop = jitted(_multiply_chain)
        (device,) = x.devices()

        def make_run(ops):
            # The count is an argument on x's device, made once: a new length does not
            # retrace, and no call copies a Python int to the device first.
            count = jax.device_put(numpy.int32(ops), device)
            return lambda: loop(x, count)

        return make_run, [loop]
    raise ValueError(f"unknown mode {mode!r}; JAX's modes are {JAX_MODES}")


def wait_for(array):
    """Block until `array` is computed: JAX's own wait, which copies nothing.

    JAX dispatches asynchronously on every backend; block_until_ready() returns once
    the computation producing the array has finished. A block's ops run in order (one
    stream per GPU; the CPU client runs them one after another: tests check every
    result of a block is ready after waiting for the last), so waiting for the last
    waits for all. Reading an element back would wait too, but in JAX that read is
    one more dispatched op (a slice) and a copy; TensorFlow reads an element only
    because it has no wait that works on every device (common.wait_for).
    """
    return array.block_until_ready()


def placed_on(array):
    """The platform of the device(s) the array lives on: 'cpu' or 'gpu'."""
    return ",".join(sorted({device.platform for device in array.devices()}))


@functools.lru_cache(maxsize=None)
def block_runner(device, size, dtype, mode):
    """The case's timing.InTurn (comparators.multiply_block): one block per copy of the
    input, each compiled, warmed up and calibrated to last at least
    grid.MIN_BLOCK_SECONDS; `placed` is its device, `functions` the jitted functions
    its blocks call."""
    runs = [make_multiply_run(mode, x) for x in inputs(input_array, device, size, dtype)]
    blocks = multiply_block([make_run for make_run, _ in runs], wait_for, placed_on, size)
    blocks.functions = runs[0][1]
    return blocks


class JaxMultiply(ComparatorMultiply):
    """Seconds per `jnp.multiply(x, 2)`, the op finished (waited for) on its device."""

    params = [JAX_DEVICES, SIZES, DTYPES, JAX_MODES]
    # Bumped whenever the timed code changes.
    version = "12"
    skip_reason = staticmethod(skip_reason)
    block_runner = staticmethod(block_runner)

    def time_multiply(self, device, size, dtype, mode):
        """Seconds per multiply: a block of ops, then one wait for the last, per sample."""
        self.block()
