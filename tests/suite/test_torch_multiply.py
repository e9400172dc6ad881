"""PyTorch's multiply: placement, the wait, the skips, each mode's result, cheap setup."""

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


def test_a_block_runs_all_its_ops_and_returns_the_last(monkeypatch):
    # The wait reads the last result only; on CUDA and MPS the ops before it are queued in
    # order on the same stream, so all of them must have been issued. Counted, not timed.
    x = torch_multiply.input_tensor("cpu", 1000, "float32")
    results = []
    multiply = torch.mul

    def keeping(*args):
        results.append(multiply(*args))
        return results[-1]

    monkeypatch.setattr(torch_multiply.torch, "mul", keeping)
    last = torch_multiply.make_multiply_run("eager", x)(8)()
    assert len(results) == 8 and results[-1] is last


def test_setup_is_cheap_the_second_time():
    torch_multiply.block_runner("cpu", 128, "int32", "eager")
    info = torch_multiply.block_runner.cache_info()
    torch_multiply.TorchMultiply().setup("cpu", 128, "int32", "eager")
    assert torch_multiply.block_runner.cache_info().hits == info.hits + 1


def test_blocks_are_calibrated_to_bury_the_per_sample_cost(longest_run):
    block = torch_multiply.block_runner("cpu", 2, "float32", "eager").current
    assert longest_run(block) > grid.MIN_BLOCK_SECONDS / 3
    assert block.ops > grid.ops_per_block(2)
