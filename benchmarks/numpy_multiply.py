"""np.multiply(x, 2) on the CPU, timed as multiply.py times tf.multiply: the floor of a
Python call per op, with no framework dispatch on top.

reference.NumpyScale writes into a preallocated output to measure the CPU's bandwidth;
this allocates its result, as every framework here does. numpy is imported on first use,
like the frameworks (it is cheap, but a comparator case must not need more than it uses).
"""

import functools

from .comparators import (
    ComparatorMultiply,
    inputs,
    memory_reason,
    multiply_block,
    not_installed,
)
from .grid import DTYPES, FACTOR, NUMPY_DEVICES, NUMPY_MODES, SIZES

# The module, once load_numpy() has imported it (a module global, as common.tf).
np = None


def load_numpy():
    """Import numpy (once) and return it."""
    global np
    if np is None:
        import numpy as numpy_module

        np = numpy_module
    return np


@functools.lru_cache(maxsize=None)
def skip_reason(device, size, dtype, mode):
    """Why this case is not measured here, or None."""
    return not_installed("numpy", "numpy") or memory_reason(device, size, dtype)


@functools.lru_cache(maxsize=None)
def input_array(device, size, dtype, copy=0):
    """The size x size array of ones (numpy's arrays live in host memory); each `copy`
    (0 to grid.input_copies - 1) in memory of its own."""
    load_numpy()
    return np.ones((size, size), dtype=dtype)


def _multiply_block(x, ops):
    # Independent multiplies of x, only the last result kept: as multiply.py's eager block.
    for _ in range(ops - 1):
        np.multiply(x, FACTOR)
    return np.multiply(x, FACTOR)


def make_multiply_run(mode, x):
    """make_run(ops) for `mode` on the array `x`."""
    if mode == "eager":
        return lambda ops: lambda: _multiply_block(x, ops)
    raise ValueError(f"unknown mode {mode!r}; numpy's modes are {NUMPY_MODES}")


def wait_for(array):
    """Read the first element: numpy computes before it returns, so this waits for
    nothing; it is there so that the comparators' blocks end alike (~0.1 us). (TensorFlow's
    CPU blocks read nothing back: theirs cost 40-111 us, common.block_wait_op.)"""
    return array.item(0)


def placed_on(array):
    """numpy has one device: host memory, computed on by the CPU."""
    return "cpu"


@functools.lru_cache(maxsize=None)
def block_runner(device, size, dtype, mode):
    """The case's timing.InTurn (comparators.multiply_block): one block per copy of the
    input, each warmed up and calibrated to last at least grid.MIN_BLOCK_SECONDS."""
    runs = [make_multiply_run(mode, x) for x in inputs(input_array, device, size, dtype)]
    return multiply_block(runs, wait_for, placed_on, size)


class NumpyMultiply(ComparatorMultiply):
    """Seconds per `np.multiply(x, 2)` on the CPU, allocating its result."""

    params = [NUMPY_DEVICES, SIZES, DTYPES, NUMPY_MODES]
    # Bumped whenever the timed code changes.
    version = "12"
    skip_reason = staticmethod(skip_reason)
    block_runner = staticmethod(block_runner)

    def time_multiply(self, device, size, dtype, mode):
        """Seconds per multiply: a block of ops, then one read of an element, per sample."""
        self.block()
