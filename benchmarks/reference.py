"""The CPU's memory bandwidth, measured the way STREAM's "scale" kernel does."""

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .grid import bytes_moved
from .timing import per_op_seconds


class NumpyScale:
    """numpy multiply by a scalar into a preallocated output, on one thread."""

    params = [[2048, 4096]]
    param_names = ["size"]
    unit = "GB/s"
    version = "8"

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


class StreamScale:
    """STREAM's scale kernel on every core: the CPU's memory bandwidth, the report's ceiling.

    TensorFlow's CPU kernels split a large multiply across all cores, so a
    one-thread reference (NumpyScale) is not a ceiling for them. Here the rows
    are split into one slice per core and each thread multiplies its slice
    (numpy releases the GIL inside the loop), all waiting for the last.
    """

    # 8192x8192 float32 is 256 MiB per array: beyond any CPU's last-level cache,
    # as STREAM requires; 4096x4096 is the suite's largest multiply.
    params = [[4096, 8192]]
    param_names = ["size"]
    unit = "GB/s"
    version = "8"
    # Into a new array, as STREAM does (StreamScaleInPlace writes over the input).
    in_place = False

    def setup(self, size):
        threads = os.cpu_count() or 1
        x = np.ones((size, size), dtype=np.float32)
        out = x if self.in_place else np.empty_like(x)
        bounds = np.linspace(0, size, threads + 1).astype(int)
        slices = [(x[a:b], out[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
        self.slices = slices  # for the tests
        self.pool = ThreadPoolExecutor(threads)

        def scale(pair):
            # Written over itself, the product reaches inf after 128 blocks, as
            # graph_loop's does; numpy's overflow warning would say nothing new.
            with np.errstate(over="ignore"):
                np.multiply(pair[0], 2, out=pair[1])

        def block():
            list(self.pool.map(scale, slices))

        block.ops = 1
        self.block = block
        block()

    def teardown(self, size):
        self.pool.shutdown()

    def track_scale_bandwidth(self, size):
        """GB/s of a float32 multiply by 2 split across every core (STREAM's scale kernel)."""
        return bytes_moved(size, "float32") / per_op_seconds(self.block) / 1e9


class StreamScaleInPlace(StreamScale):
    """STREAM's scale kernel on every core, each slice written over itself.

    TensorFlow hands a multiply's input buffer to its output where nothing else
    holds the input, as in graph_loop's chain of multiplies after the first
    (tests/suite/test_timing.py checks it). Writing over data just read spares
    the CPU the read it makes of each line of a new array before writing it
    (write-allocate), so such a loop can outrun STREAM; the report compares it
    with this figure instead.
    """

    version = "2"
    in_place = True

    def track_scale_bandwidth(self, size):
        """GB/s of a float32 multiply by 2 written over its input, split across every core."""
        return super().track_scale_bandwidth(size)
