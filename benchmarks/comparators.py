"""What the comparator benchmarks (PyTorch, JAX, numpy) share: the skip, the block, the clock.

Is the fixed cost of a small multiply TensorFlow's, or any Python framework's on that
device? torch_multiply.py, jax_multiply.py and numpy_multiply.py time the same
multiply on the same grid (sizes, dtypes) with multiply.py's method: a block of ops
calibrated to last >= 10 ms, one wait at its end, a per-op clock handed to asv, inputs
and compiled functions from cached getters, grid.input_copies copies of the input taken
in turn (one per sample), a skip with its reason in setup, the engine's malloc settings
(allocator.py, applied in the process).

Each comparator module imports its framework on first use, never at module level, and
none imports TensorFlow: importing the suite never requires a comparator, and a machine
without TensorFlow runs the comparators. This module imports no framework at all.
Python 3.8 syntax: the oldest stacks' asv environments import every module.
"""

import importlib.util
import os
import sys

from .allocator import reuse_freed_memory
from .common import free_gpu_memory, free_host_memory, memory_skip_reason
from .grid import DEVICE_KIND, input_copies, ops_per_block, warm_up_parts
from .timing import before_sample, in_turn, per_op_timer


def not_installed(module, framework):
    """Why `module` cannot be imported in this environment, or None. Imports nothing."""
    if module in sys.modules or importlib.util.find_spec(module) is not None:
        return None
    return f"{framework} is not installed in this environment"


def memory_reason(device, size, dtype):
    """Why size x size of dtype would not fit on `device` now, or None (host memory for
    every device: Apple GPUs share it; an NVIDIA GPU's own per nvidia-smi too), with
    the case's copies of its input (grid.input_copies)."""
    copies = input_copies(size, dtype)
    reason = memory_skip_reason(size, dtype, free_host_memory(), inputs=copies)
    if reason is None and DEVICE_KIND[device] == "gpu" and sys.platform != "darwin":
        reason = memory_skip_reason(size, dtype, free_gpu_memory(), inputs=copies)
    return reason


def inputs(getter, device, size, dtype):
    """The case's copies of its input (grid.input_copies), each from the module's cached
    getter(device, size, dtype, copy=0). Copy 0 is asked for as every other caller asks
    for the input (the cache keys on the arguments as written): the same one, not one more."""
    return [getter(device, size, dtype)] + [
        getter(device, size, dtype, copy) for copy in range(1, input_copies(size, dtype))]


def multiply_block(make_runs, wait, placed_on, size):
    """The case's timing.InTurn: a calibrated, warmed-up block of multiplies per copy of
    the input, timed one per sample in turn, as TensorFlow's cases are (where an input
    sits in memory changes a mid-size op's time: grid.input_copies).

    make_runs holds one make_run per copy of the input: make_run(ops) returns a
    zero-argument callable running `ops` multiplies of that copy and returning the
    last result. wait(result) blocks until the device has computed it; placed_on(result)
    names the device that result lives on, in the grid's terms. The InTurn's `placed`
    attribute is that name for a result of the same run, for setup's placement proof.
    """

    def make_block(ops, copy):
        run = make_runs[copy](ops)

        def timed_block():
            wait(run())

        timed_block.ops = ops
        return timed_block

    blocks = in_turn(make_block, ops_per_block(size), len(make_runs), warm_up_parts(size))
    # A comparator's round is a forked process of its own whose blocks are built anew,
    # where TensorFlow's engine keeps its turn through the run: each round starts at a
    # copy of its own drawing, so 4 rounds of 5-10 samples cover the copies alike, not
    # copies 0-4 of 8 every round. os.urandom, not `random`: a fork inherits its
    # parent's `random` state, and every round would draw the same copy.
    blocks.turn = int.from_bytes(os.urandom(2), "little") % len(blocks.blocks)
    blocks.placed = placed_on(make_runs[0](1)())
    return blocks


class ComparatorMultiply:
    """Setup shared by the comparators' Multiply classes: skip with a reason, else a ready
    block and a per-op clock. No time_ method here, or asv would time this class too.

    A subclass sets params (devices and modes of its framework), version, and its
    module's skip_reason and block_runner as static methods.
    """

    param_names = ["device", "size", "dtype", "mode"]
    # As multiply.Multiply: 4 rounds sample each case at 4 moments of the run, 20-40
    # samples per case. forkserver_preload.py imports the frameworks once, so a
    # forked round costs a fork and the framework's device start, not its import.
    rounds = 4
    repeat = (5, 10, 5.0)

    def setup(self, device, size, dtype, mode):
        # The malloc settings TensorFlow's engine runs under (allocator.py), before the
        # framework starts its threads (skip_reason asks JAX for its devices, which
        # starts them): a framework's large results land on reused memory, as
        # TensorFlow's do, not on fresh pages every op.
        reuse_freed_memory()
        reason = self.skip_reason(device, size, dtype, mode)
        if reason:
            raise NotImplementedError(reason)
        blocks = self.block_runner(device, size, dtype, mode)
        if blocks.placed != device:
            raise NotImplementedError(
                f"the {device} multiply's result lives on {blocks.placed}, not {device}"
            )
        # This sample's copy of the input; the next sample's setup takes the next one.
        self.block = blocks.current
        blocks.advance()
        # asv divides by calls, a call runs a block of ops: time per op.
        self.timer = per_op_timer(self.block.ops)
        # asv re-runs setup before every sample: each sample waits for a quiet moment,
        # then starts warm (grid.warm_up_parts): asv left a gap since the last.
        before_sample(self.block)
        self.block.warm_up()
