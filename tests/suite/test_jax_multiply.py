"""JAX's multiply: placement, the wait, the skips, each mode's result, no retracing."""

import time

import pytest

jax = pytest.importorskip("jax")

from benchmarks import grid, jax_multiply  # noqa: E402


def test_cpu_cases_are_measured_here_and_placed_on_the_cpu():
    assert jax_multiply.skip_reason("cpu", 32, "float32", "eager") is None
    bench = jax_multiply.JaxMultiply()
    bench.setup("cpu", 32, "float32", "jit")
    assert jax_multiply.block_runner("cpu", 32, "float32", "jit").placed == "cpu"
    assert {d.platform for d in jax_multiply.input_array("cpu", 32, "float32").devices()} == {
        "cpu"}
    bench.time_multiply("cpu", 32, "float32", "jit")


def test_no_gpu_is_a_skip_with_jaxs_own_words(monkeypatch):
    def no_gpu(backend=None):
        raise RuntimeError("Unknown backend: 'gpu' requested, but no platforms that are "
                           "instances of gpu are present. Platforms present are: cpu")

    monkeypatch.setattr(jax, "devices", no_gpu)
    reason = jax_multiply.device_reason.__wrapped__("gpu")
    assert reason.startswith("no gpu device for JAX: Unknown backend: 'gpu' requested")


def test_gpu_cases_are_skipped_here_before_anything_is_allocated():
    if any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("this machine has a GPU for JAX")
    before = jax_multiply.input_array.cache_info().currsize
    for mode in grid.JAX_MODES:
        with pytest.raises(NotImplementedError, match="no gpu device for JAX"):
            jax_multiply.JaxMultiply().setup("gpu", 4096, "float32", mode)
    assert jax_multiply.input_array.cache_info().currsize == before


@pytest.mark.parametrize("dtype", grid.DTYPES)
@pytest.mark.parametrize("mode", grid.JAX_MODES)
def test_every_mode_computes_the_multiply(mode, dtype):
    # Independent multiplies give x * 2; fori_loop chains them (none can be hoisted): x * 2**3.
    x = jax_multiply.input_array("cpu", 2, dtype)
    make_run, _ = jax_multiply.make_multiply_run(mode, x)
    y = make_run(3)()
    expected = 2**3 if mode == "fori_loop" else 2
    assert y.tolist() == [[expected, expected], [expected, expected]]
    assert str(y.dtype) == dtype and jax_multiply.placed_on(y) == "cpu"


@pytest.mark.parametrize("mode", ["jit", "fori_loop"])
def test_timed_calls_never_retrace(mode):
    blocks = jax_multiply.block_runner("cpu", 32, "float32", mode)
    (function,) = blocks.functions
    if not hasattr(function, "_cache_size"):
        pytest.skip("this JAX's jitted functions do not report their cache")
    before = function._cache_size()
    # Every copy of the input, in turn: the copies share one trace (one shape, one dtype).
    for _ in range(len(blocks.blocks) + 1):
        blocks.current()
        blocks.advance()
    assert function._cache_size() == before


def test_the_wait_leaves_every_op_of_the_block_finished():
    # JAX dispatches asynchronously; waiting for the last result must cover the others.
    x = jax_multiply.input_array("cpu", 1000, "float32")
    results = [jax_multiply.jnp.multiply(x, grid.FACTOR) for _ in range(8)]
    jax_multiply.wait_for(results[-1])
    assert all(y.is_ready() for y in results)


def test_a_block_waits_for_all_its_ops():
    x = jax_multiply.input_array("cpu", 1000, "float32")
    make_run, _ = jax_multiply.make_multiply_run("eager", x)

    def seconds(ops):
        run = make_run(ops)
        jax_multiply.wait_for(run())
        start = time.perf_counter()
        jax_multiply.wait_for(run())
        return time.perf_counter() - start

    assert min(seconds(8) for _ in range(3)) > 3 * min(seconds(1) for _ in range(3))


def test_a_compiled_loop_of_nanosecond_ops_is_still_calibrated_to_10_ms():
    block = jax_multiply.block_runner("cpu", 2, "int32", "fori_loop").current
    start = time.perf_counter()
    block()
    assert time.perf_counter() - start > grid.MIN_BLOCK_SECONDS / 3
    assert block.ops > grid.MAX_OPS_PER_BLOCK * 1000


def test_setup_is_cheap_the_second_time():
    jax_multiply.block_runner("cpu", 128, "int32", "jit")
    info = jax_multiply.block_runner.cache_info()
    jax_multiply.JaxMultiply().setup("cpu", 128, "int32", "jit")
    assert jax_multiply.block_runner.cache_info().hits == info.hits + 1
