"""PyTorch's multiply: placement, the wait, the skips, each mode's result, cheap setup."""

import time

import pytest

torch = pytest.importorskip("torch")

from benchmarks import grid, torch_multiply  # noqa: E402


def test_cpu_cases_are_measured_here_and_placed_on_the_cpu():
    assert torch_multiply.skip_reason("cpu", 32, "float32", "eager") is None
    bench = torch_multiply.TorchMultiply()
    bench.setup("cpu", 32, "float32", "eager")
    assert torch_multiply.block_runner("cpu", 32, "float32", "eager").placed == "cpu"
    assert torch_multiply.input_tensor("cpu", 32, "float32").device.type == "cpu"
    bench.time_multiply("cpu", 32, "float32", "eager")


def test_no_cuda_is_a_skip_with_the_reason(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    reason = torch_multiply.device_reason("cuda", platform="linux")
    assert reason.startswith("no CUDA device visible to PyTorch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert torch_multiply.device_reason("cuda", platform="linux") is None


def test_mps_is_asked_for_on_macos_and_ruled_out_elsewhere(monkeypatch):
    assert torch_multiply.device_reason("mps", platform="linux") == (
        "MPS (Apple's Metal) exists only on macOS")
    assert torch_multiply.device_reason("cuda", platform="darwin") == (
        "PyTorch has no CUDA on macOS")
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert "torch.backends.mps.is_available() is False" in torch_multiply.device_reason(
        "mps", platform="darwin")
    # An Intel Mac with an AMD GPU runs MPS too: only what PyTorch says decides.
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert torch_multiply.device_reason("mps", platform="darwin") is None


def test_gpu_cases_are_skipped_here_before_anything_is_allocated():
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    before = torch_multiply.input_tensor.cache_info().currsize
    for device in ("cuda", "mps"):
        with pytest.raises(NotImplementedError):
            torch_multiply.TorchMultiply().setup(device, 4096, "float32", "eager")
    assert torch_multiply.input_tensor.cache_info().currsize == before


@pytest.mark.parametrize("dtype", grid.DTYPES)
@pytest.mark.parametrize("mode", grid.TORCH_MODES)
def test_every_mode_computes_the_multiply(mode, dtype):
    x = torch_multiply.input_tensor("cpu", 2, dtype)
    y = torch_multiply.make_multiply_run(mode, x)(3)()
    assert y.tolist() == [[2, 2], [2, 2]] and y.dtype == getattr(torch, dtype)


def test_the_wait_reads_one_element_back():
    x = torch.arange(16, dtype=torch.float32).reshape(4, 4) + 5
    value = torch_multiply.wait_for(x)
    assert value == 5.0 and isinstance(value, float)


def test_a_block_waits_for_all_its_ops():
    # A block's time grows with its length: the wait covers the ops, not just the last.
    x = torch_multiply.input_tensor("cpu", 1000, "float32")
    make_run = torch_multiply.make_multiply_run("eager", x)

    def seconds(ops):
        run = make_run(ops)
        torch_multiply.wait_for(run())
        start = time.perf_counter()
        torch_multiply.wait_for(run())
        return time.perf_counter() - start

    assert min(seconds(8) for _ in range(3)) > 3 * min(seconds(1) for _ in range(3))


def test_setup_is_cheap_the_second_time():
    torch_multiply.block_runner("cpu", 128, "int32", "eager")
    info = torch_multiply.block_runner.cache_info()
    torch_multiply.TorchMultiply().setup("cpu", 128, "int32", "eager")
    assert torch_multiply.block_runner.cache_info().hits == info.hits + 1


def test_blocks_are_calibrated_to_bury_the_per_sample_cost():
    block = torch_multiply.block_runner("cpu", 2, "float32", "eager").current
    start = time.perf_counter()
    block()
    assert time.perf_counter() - start > grid.MIN_BLOCK_SECONDS / 3
    assert block.ops > grid.ops_per_block(2)
