"""JAX's multiply: placement, the wait, the skips, each mode's result, no retracing."""

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


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_a_block_runs_all_its_ops_and_its_wait_finishes_them(mode, monkeypatch):
    # JAX dispatches asynchronously and a block returns only its last result: waiting for
    # that one must leave every op of the block finished. Counted and asked, not timed.
    x = jax_multiply.input_array("cpu", 1000, "float32")
    results = []

    def keeping(function):
        def call(*args):
            results.append(function(*args))
            return results[-1]

        return call

    if mode == "eager":
        monkeypatch.setattr(jax_multiply.jnp, "multiply", keeping(jax_multiply.jnp.multiply))
    else:
        jitted = jax_multiply.jitted
        monkeypatch.setattr(jax_multiply, "jitted", lambda function: keeping(jitted(function)))
    make_run, _ = jax_multiply.make_multiply_run(mode, x)
    last = make_run(8)()
    jax_multiply.wait_for(last)
    assert len(results) == 8 and results[-1] is last
    assert all(y.is_ready() for y in results)


def test_a_compiled_loop_of_nanosecond_ops_is_still_calibrated_to_10_ms(longest_run):
    block = jax_multiply.block_runner("cpu", 2, "int32", "fori_loop").current
    assert longest_run(block) > grid.MIN_BLOCK_SECONDS / 3
    assert block.ops > grid.MAX_OPS_PER_BLOCK * 1000


def test_setup_is_cheap_the_second_time():
    jax_multiply.block_runner("cpu", 128, "int32", "jit")
    info = jax_multiply.block_runner.cache_info()
    jax_multiply.JaxMultiply().setup("cpu", 128, "int32", "jit")
    assert jax_multiply.block_runner.cache_info().hits == info.hits + 1
