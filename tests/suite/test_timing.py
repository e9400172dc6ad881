"""What the timed calls do: only the op, traced once, finished before the clock stops."""

import pytest

tf = pytest.importorskip("tensorflow")

from benchmarks import common, multiply, reference, wait  # noqa: E402


@pytest.mark.parametrize("mode", ["function", "xla", "graph_loop"])
@pytest.mark.parametrize("dtype", common.DTYPES)
def test_timed_calls_never_retrace(mode, dtype):
    block = common.block_runner("cpu", 32, dtype, mode)
    assert block.functions, "a tf.function mode must expose its function"
    before = [f.experimental_get_tracing_count() for f in block.functions]
    assert before == [1] * len(block.functions)
    for _ in range(5):
        block()
    assert [f.experimental_get_tracing_count() for f in block.functions] == before


def test_eager_blocks_trace_nothing():
    assert common.block_runner("cpu", 32, "float32", "eager").functions == []


@pytest.mark.parametrize("mode", common.MODES)
def test_every_mode_computes_the_multiply(mode):
    # graph_loop chains the ops (so none can be hoisted): x * 2**ops.
    x = common.input_tensor("cpu", 2, "float32")
    ops = common.ops_per_block(2)
    if mode == "graph_loop":
        y = tf.function(common._multiply_chain)(x, tf.constant(3))
        assert y.numpy().tolist() == [[8.0, 8.0], [8.0, 8.0]]
    else:
        y = common._multiply_block(x, ops)
        assert y.numpy().tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_function_input_is_an_argument_not_a_folded_constant():
    block = common.block_runner("cpu", 32, "float32", "function")
    (step,) = block.functions
    graph = step.get_concrete_function(common.input_tensor("cpu", 32, "float32")).graph
    assert [op.type for op in graph.get_operations() if op.type == "Placeholder"]
    assert "Mul" in [op.type for op in graph.get_operations()]


def test_setup_hands_asv_a_per_op_clock_and_a_ready_block():
    bench = multiply.Multiply()
    bench.setup("cpu", 128, "float32", "eager")
    assert bench.timer() < __import__("time").perf_counter() / 50
    bench.time_multiply("cpu", 128, "float32", "eager")


def test_setup_is_cheap_the_second_time():
    # asv re-runs setup before every sample: everything must come from caches.
    common.block_runner("cpu", 256, "int32", "xla")
    info = common.block_runner.cache_info()
    multiply.Multiply().setup("cpu", 256, "int32", "xla")
    assert common.block_runner.cache_info().hits == info.hits + 1


def test_a_size_that_cannot_fit_is_skipped_before_allocating():
    huge = 10**6  # 4 TB of float32 at 4 copies: more than any free memory here
    inputs = common.input_tensor.cache_info().currsize
    blocks = common.block_runner.cache_info().currsize
    bench = multiply.Multiply()
    with pytest.raises(NotImplementedError, match="MiB free"):
        bench.setup("cpu", huge, "float32", "eager")
    assert common.input_tensor.cache_info().currsize == inputs
    assert common.block_runner.cache_info().currsize == blocks


def test_the_wait_reads_one_element():
    x = common.input_tensor("cpu", 4, "int32")
    assert common.wait_for(x).item() == 1
    bench = wait.Wait()
    bench.setup("cpu", "float32")
    bench.time_wait("cpu", "float32")


def test_numpy_reference_reports_a_bandwidth():
    bench = reference.NumpyScale()
    bench.setup(2048)
    assert bench.track_numpy_scale_bandwidth(2048) > 0
