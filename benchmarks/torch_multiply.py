"""torch.mul(x, 2) on PyTorch's devices, timed as multiply.py times tf.multiply.

PyTorch is imported on first use (load_torch), never at module level; forkserver_preload.py
imports it once where asv forks. Nothing here touches a device at import, and CUDA starts
only in the benchmark process of a cuda case (a CUDA started before a fork is unusable in
the child).
"""

import functools
import sys

from .comparators import (
    ComparatorMultiply,
    inputs,
    memory_reason,
    multiply_block,
    not_installed,
)
from .grid import DTYPES, FACTOR, SIZES, TORCH_DEVICES, TORCH_MODES

# The module, once load_torch() has imported it: a module global, as common.tf, so the
# eager block's per-op call pays no import statement.
torch = None


def load_torch():
    """Import PyTorch (once) and return it."""
    global torch
    if torch is None:
        import torch as torch_module

        torch = torch_module
    return torch


def device_reason(device, platform=sys.platform):
    """Why PyTorch cannot run on `device` here, or None. Decided without importing
    PyTorch where the platform alone rules the device out."""
    if device == "mps" and platform != "darwin":
        return "MPS (Apple's Metal) exists only on macOS"
    if device == "cuda" and platform == "darwin":
        return "PyTorch has no CUDA on macOS"
    load_torch()
    if device == "cuda" and not torch.cuda.is_available():
        return ("no CUDA device visible to PyTorch (torch.cuda.is_available() is False; "
                f"this build's CUDA: {torch.version.cuda or 'none, a CPU-only build'})")
    mps = getattr(torch.backends, "mps", None)
    if device == "mps" and not (mps is not None and mps.is_available()):
        built = mps is not None and mps.is_built()
        return ("no MPS device visible to PyTorch (torch.backends.mps.is_available() is "
                "False" + ("" if built else "; this build has no MPS support") + ")")
    return None


@functools.lru_cache(maxsize=None)
def skip_reason(device, size, dtype, mode):
    """Why this case is not measured here, or None. Cached: asv re-runs setup before
    every sample, and the memory guard asks nvidia-smi."""
    return (not_installed("torch", "PyTorch") or device_reason(device)
            or memory_reason(device, size, dtype))


@functools.lru_cache(maxsize=None)
def input_tensor(device, size, dtype, copy=0):
    """The size x size tensor of ones, resident on `device`; each `copy` (0 to
    grid.input_copies - 1) in memory of its own."""
    load_torch()
    return torch.ones((size, size), dtype=getattr(torch, dtype), device=device)


def _multiply_block(x, ops):
    # Independent multiplies of x, only the last result kept: as multiply.py's eager block.
    for _ in range(ops - 1):
        torch.mul(x, FACTOR)
    return torch.mul(x, FACTOR)


def make_multiply_run(mode, x):
    """make_run(ops) for `mode` on the tensor `x`: a callable running `ops` multiplies
    and returning the last result."""
    if mode == "eager":
        return lambda ops: lambda: _multiply_block(x, ops)
    raise ValueError(f"unknown mode {mode!r}; PyTorch's modes are {TORCH_MODES}")


def wait_for(tensor):
    """Block until `tensor` is computed, on any device: read its first element back.

    .item() copies one element to the host, which on CUDA waits for the stream that
    computes the tensor (all of a block's ops are queued on it in order) and on MPS
    commits and waits for the command buffer; CPU ops are done when they return.
    torch.cuda.synchronize() would wait too, on CUDA only: one read serves every
    device alike, and it is how multiply.py waits for TensorFlow on a GPU (on the CPU,
    TensorFlow's blocks read nothing back: common.block_wait_op).
    """
    return tensor[0, 0].item()


def placed_on(tensor):
    """The device the tensor lives on: 'cpu', 'cuda' or 'mps'."""
    return tensor.device.type


@functools.lru_cache(maxsize=None)
def block_runner(device, size, dtype, mode):
    """The case's timing.InTurn (comparators.multiply_block): one block per copy of the
    input, each warmed up and calibrated to last at least grid.MIN_BLOCK_SECONDS;
    `placed` is its device."""
    runs = [make_multiply_run(mode, x) for x in inputs(input_tensor, device, size, dtype)]
    return multiply_block(runs, wait_for, placed_on, size)


class TorchMultiply(ComparatorMultiply):
    """Seconds per `torch.mul(x, 2)`, the op finished (one element read back) on its device."""

    params = [TORCH_DEVICES, SIZES, DTYPES, TORCH_MODES]
    # Bumped whenever the timed code changes.
    version = "12"
    skip_reason = staticmethod(skip_reason)
    block_runner = staticmethod(block_runner)

    def time_multiply(self, device, size, dtype, mode):
        """Seconds per multiply: a block of ops, then one read of an element, per sample."""
        self.block()
