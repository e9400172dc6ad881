"""Where a '/GPU:0' multiply really runs, and that a gpu result is never a CPU one."""

import pytest

tf = pytest.importorskip("tensorflow")

from benchmarks import common, multiply, wait  # noqa: E402

HAS_GPU = bool(tf.config.list_physical_devices("GPU"))


def test_int32_mul_kernel_keeps_its_output_in_host_memory():
    # The registry TensorFlow itself consults: GPU builds register int32 Mul
    # with HostMemory; CPU-only builds still carry the DEVICE_DEFAULT kernel
    # PluggableDevices (Metal) fall back to, which is HostMemory too.
    assert common.mul_kernel_host_memory("int32") is True


def test_float32_mul_kernel_computes_in_device_memory_where_registered():
    host = common.mul_kernel_host_memory("float32")
    # None on CPU-only builds: no GPU kernel at all (nothing runs there).
    assert host in (False, None)
    if HAS_GPU:
        assert host is False


def test_no_gpu_is_reported_as_soft_placement():
    assert common.gpu_skip_reason([], None, False) == common.NO_GPU


def test_an_op_soft_placed_on_the_cpu_is_not_a_gpu_measurement():
    reason = common.gpu_skip_reason(
        ["/physical_device:GPU:0"], "/job:localhost/replica:0/task:0/device:CPU:0", False
    )
    assert "soft placement ran" in reason and "CPU:0" in reason


def test_a_host_memory_kernel_is_not_a_gpu_measurement():
    reason = common.gpu_skip_reason(
        ["/physical_device:GPU:0"], "/job:localhost/replica:0/task:0/device:GPU:0", True
    )
    assert "host memory" in reason


def test_a_float_multiply_on_a_real_gpu_is_measured():
    assert (
        common.gpu_skip_reason(
            ["/physical_device:GPU:0"], "/job:localhost/replica:0/task:0/device:GPU:0", False
        )
        is None
    )


def test_the_seed_dtype_never_reaches_the_gpu_here():
    # int32 never computes on a GPU: with or without one, a reason is given.
    assert common.device_skip_reason("gpu", "int32")


@pytest.mark.skipif(HAS_GPU, reason="this machine has a GPU")
@pytest.mark.parametrize("dtype", common.DTYPES)
def test_gpu_combinations_are_skipped_with_the_reason_before_anything_is_timed(dtype):
    bench = multiply.Multiply()
    with pytest.raises(NotImplementedError, match="no GPU visible"):
        bench.setup("gpu", 2, dtype, "eager")
    assert not hasattr(bench, "block")
    with pytest.raises(NotImplementedError, match="no GPU visible"):
        multiply.Speedup().setup(2, dtype, "eager")
    with pytest.raises(NotImplementedError, match="no GPU visible"):
        wait.Wait().setup("gpu", dtype)


@pytest.mark.skipif(not HAS_GPU, reason="needs a GPU")
def test_gpu_float32_multiply_output_lives_on_the_gpu():
    x = common.input_tensor("gpu", 2, "float32")
    with tf.device("/GPU:0"):
        y = tf.multiply(x, 2)
    assert "GPU" in y.device and "GPU" in y.backing_device
