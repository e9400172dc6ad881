"""The seed question's own script, reproduced as it was run.

A 2x2 int32 constant, `tf.multiply(tensor, 2)` called 10,000 times in a
Python loop under '/CPU:0' and then '/device:GPU:0', each after one warm-up
call, timed with time.time(), with soft placement on (TensorFlow's default):
the "speedup" it prints is cpu_time / gpu_time.
"""

import time

from .checks import check_reason
from .common import load_tensorflow, tensorflow_missing

CALLS = 10_000


def _timed_loop(tf, device_name, tensor):
    with tf.device(device_name):
        tf.multiply(tensor, 2)
        start = time.time()
        for _ in range(CALLS):
            tf.multiply(tensor, 2)
        return time.time() - start


class SeedScript:
    """What the seed's method reports, and where its "GPU" calls really ran."""

    version = "8"

    def setup(self):
        reason = tensorflow_missing()
        if reason:
            raise NotImplementedError(reason)
        self.tf = load_tensorflow()
        self.tensor = self.tf.constant([[1, 2], [3, 4]])

    def track_reported_speedup(self):
        """The seed's printed "speedup": 10,000 '/CPU:0' calls over 10,000 '/GPU:0' calls."""
        cpu = _timed_loop(self.tf, "/CPU:0", self.tensor)
        gpu = _timed_loop(self.tf, "/device:GPU:0", self.tensor)
        return cpu / gpu

    track_reported_speedup.unit = "x"

    def track_gpu_calls_on_a_gpu(self):
        """1 when the seed's "GPU" multiply computes on a GPU, 0 when it runs on the CPU."""
        return 0.0 if check_reason("gpu", "int32", "eager") else 1.0

    track_gpu_calls_on_a_gpu.unit = "share"
