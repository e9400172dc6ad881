"""The seed's own script, reproduced as the user ran it."""

import math

import pytest

tf = pytest.importorskip("tensorflow")

from benchmarks import checks, seed  # noqa: E402

HAS_GPU = bool(tf.config.list_physical_devices("GPU"))


def test_seed_script_uses_the_seeds_tensor_loop_and_placement():
    bench = seed.SeedScript()
    bench.setup()
    assert bench.tensor.dtype == tf.int32
    assert bench.tensor.numpy().tolist() == [[1, 2], [3, 4]]
    assert seed.CALLS == 10_000
    # Soft placement as the user had it: a '/device:GPU:0' multiply does not raise.
    assert tf.config.get_soft_device_placement()
    with tf.device("/device:GPU:0"):
        y = tf.multiply(bench.tensor, 2)
    assert y.numpy().tolist() == [[2, 4], [6, 8]]


def test_reported_speedup_is_cpu_time_over_gpu_time():
    bench = seed.SeedScript()
    bench.setup()
    speedup = bench.track_reported_speedup()
    assert math.isfinite(speedup) and speedup > 0
    assert seed.SeedScript.track_reported_speedup.unit == "x"


def test_the_seeds_gpu_calls_are_recorded_as_not_on_a_gpu():
    # int32 Mul never computes on a GPU, with or without one.
    assert seed.SeedScript().track_gpu_calls_on_a_gpu() == 0.0
    assert checks.check_reason("gpu", "int32", "eager")


@pytest.mark.skipif(HAS_GPU, reason="this machine has a GPU")
def test_without_a_gpu_the_seeds_gpu_multiply_ran_on_the_cpu():
    bench = seed.SeedScript()
    bench.setup()
    with tf.device("/device:GPU:0"):
        y = tf.multiply(bench.tensor, 2)
    assert y.device.endswith("CPU:0")
