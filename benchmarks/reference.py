"""The CPU's memory bandwidth, measured the way STREAM's "scale" kernel does."""

import numpy as np

from .grid import bytes_moved
from .timing import per_op_seconds

SIZES = [2048, 4096]


class NumpyScale:
    """numpy multiply by a scalar into a preallocated output: the CPU bandwidth reference."""

    params = [SIZES]
    param_names = ["size"]
    unit = "GB/s"
    version = "2"

    def setup(self, size):
        self.x = np.ones((size, size), dtype=np.float32)
        self.out = np.empty_like(self.x)

        def block():
            np.multiply(self.x, 2, out=self.out)

        block.ops = 1
        self.block = block

    def track_numpy_scale_bandwidth(self, size):
        """GB/s of numpy's float32 multiply by 2 into a preallocated output (one thread)."""
        return bytes_moved(size, "float32") / per_op_seconds(self.block) / 1e9
