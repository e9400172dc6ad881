"""The CPU's memory bandwidth, measured the way STREAM's "scale" kernel does."""

import numpy as np

from .common import bytes_moved, per_op_seconds

SIZES = [2048, 4096]


class NumpyScale:
    """numpy multiply by a scalar into a preallocated output: the CPU bandwidth reference."""

    params = [SIZES]
    param_names = ["size"]
    unit = "GB/s"
    version = "1"

    def setup(self, size):
        self.x = np.ones((size, size), dtype=np.float32)
        self.out = np.empty_like(self.x)

    def track_numpy_scale_bandwidth(self, size):
        def block():
            np.multiply(self.x, 2, out=self.out)

        return bytes_moved(size, "float32") / per_op_seconds(block, 1) / 1e9
