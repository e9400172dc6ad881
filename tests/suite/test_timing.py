"""What the timed calls do: only the op, traced once, finished before the clock stops."""

import time

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from benchmarks import checks, common, grid, multiply, reference, timing, wait  # noqa: E402


@pytest.mark.parametrize("mode", ["function", "xla", "graph_loop"])
@pytest.mark.parametrize("dtype", grid.DTYPES)
def test_timed_calls_never_retrace(mode, dtype):
    block = common.block_runner("cpu", 32, dtype, mode)
    assert block.functions, "a tf.function mode must expose its function"
    before = [f.experimental_get_tracing_count() for f in block.functions]
    assert before == [1] * len(block.functions)
    for copy in block.blocks * 2:  # every copy of the input: the same signature
        copy()
    assert [f.experimental_get_tracing_count() for f in block.functions] == before


def test_eager_blocks_trace_nothing():
    assert common.block_runner("cpu", 32, "float32", "eager").functions == []


@pytest.mark.parametrize("mode", grid.MODES)
@pytest.mark.parametrize("dtype", grid.DTYPES)
def test_every_mode_computes_the_multiply(mode, dtype):
    # The same run the timed block calls, for each mode: independent multiplies give
    # x * 2, graph_loop chains them (so none can be hoisted): x * 2**ops.
    x = common.input_tensor("cpu", 2, dtype)
    make_run, _ = common.make_multiply_run(mode)
    y = make_run(x, 3)().numpy().tolist()
    expected = 2**3 if mode == "graph_loop" else 2
    assert y == [[expected, expected], [expected, expected]]


def _buffers_written_by_each_multiply(function, *args):
    """Addresses of the buffers each Mul of a traced function's graph wrote, in order, as
    the executor's full trace records them (the function's graph run in a session)."""
    graph_def = function.get_concrete_function(*args).graph.as_graph_def()
    placeholders = [node.name for node in graph_def.node if node.op == "Placeholder"]
    with tf.Graph().as_default() as graph:
        feeds = [tf.compat.v1.placeholder(arg.dtype, arg.shape) for arg in args]
        (out,) = tf.graph_util.import_graph_def(
            graph_def, input_map=dict(zip(placeholders, feeds)), return_elements=["Identity:0"])
        with tf.compat.v1.Session(graph=graph) as session:
            metadata = tf.compat.v1.RunMetadata()
            session.run(out, dict(zip(feeds, [arg.numpy() for arg in args])),
                        options=tf.compat.v1.RunOptions(trace_level=3), run_metadata=metadata)
    return [output.tensor_description.allocation_description.ptr
            for device in metadata.step_stats.dev_stats for node in device.node_stats
            if node.node_name.endswith("/Mul") for output in node.output]


def test_graph_loop_writes_each_product_over_the_one_before():
    # The report's reason why graph_loop can read above STREAM's scale (reference.
    # StreamScaleInPlace): TensorFlow hands the last product, held by nothing else, to
    # the next multiply as its output buffer. Each multiply's input is the product
    # before it, so one address from the second on means each wrote over its input.
    # (In the session the first one may write over the fed input too; in the benchmark
    # the caller still holds the input, so the first product is a new buffer.)
    _, (loop,) = common.make_multiply_run("graph_loop")
    x = common.input_tensor("cpu", 256, "float32")
    written = _buffers_written_by_each_multiply(loop, x, tf.constant(6))
    assert len(written) == 6 and len(set(written[1:])) == 1

    # The same chain with each product held one step longer: every multiply needs a new
    # buffer while its input is still held, and the trace shows them alternate. One
    # iteration at a time: with several in flight the held product can be let go before
    # the next multiply runs, which may then take its buffer after all.
    @tf.function
    def held(x, ops):
        def step(i, y, before):
            return i + 1, tf.multiply(y, grid.FACTOR), y

        _, y, before = tf.while_loop(lambda i, y, before: i < ops, step,
                                     (tf.constant(0), x, x), parallel_iterations=1)
        return y + before

    written = _buffers_written_by_each_multiply(held, x, tf.constant(6))
    assert all(a != b for a, b in zip(written, written[1:]))


def _reads_of_each_block(blocks, monkeypatch):
    reads = []
    real = common.wait_for

    def recording(tensor, op="Slice"):
        reads.append(op)
        return real(tensor, op)

    monkeypatch.setattr(common, "wait_for", recording)
    counts = []
    for block in blocks.blocks:
        before = len(reads)
        block()
        counts.append(len(reads) - before)
    return counts, reads


@pytest.mark.parametrize("mode", grid.MODES)
def test_a_cpu_block_reads_nothing_back_while_tensorflow_runs_ops_synchronously(
        mode, monkeypatch):
    # As a bare loop of the op: each op has finished when its call returns, and a read
    # after a block of them made it 0.7-1.5 % slower (common.block_wait_op).
    assert tf.config.experimental.get_synchronous_execution()
    assert common.block_wait_op("cpu") is None
    blocks = common.block_runner("cpu", 32, "int32", mode, common.block_wait_op("cpu"))
    assert _reads_of_each_block(blocks, monkeypatch)[0] == [0] * len(blocks.blocks)


def test_a_cpu_block_reads_its_last_result_back_where_tensorflow_says_ops_queue(monkeypatch):
    # A program may turn synchronous execution off; CPU ops then queue as GPU ops do.
    monkeypatch.setattr(tf.config.experimental, "get_synchronous_execution", lambda: False)
    op = common.block_wait_op("cpu")
    assert op == checks.wait_op("cpu")
    blocks = common.block_runner("cpu", 32, "int32", "eager", op)
    counts, reads = _reads_of_each_block(blocks, monkeypatch)
    assert counts == [1] * len(blocks.blocks) and set(reads) == {op}


def test_a_gpu_block_always_ends_with_the_checked_read(monkeypatch):
    monkeypatch.setattr(checks, "record_here", lambda: {"wait_op": "StridedSlice"})
    assert common.block_wait_op("gpu") == "StridedSlice"


def test_function_input_is_an_argument_not_a_folded_constant():
    block = common.block_runner("cpu", 32, "float32", "function")
    (step,) = block.functions
    graph = step.get_concrete_function(common.input_tensor("cpu", 32, "float32")).graph
    assert [op.type for op in graph.get_operations() if op.type == "Placeholder"]
    assert "Mul" in [op.type for op in graph.get_operations()]


def test_setup_hands_asv_a_per_op_clock_and_a_ready_block():
    bench = multiply.Multiply()
    bench.setup("cpu", 128, "float32", "eager")
    assert bench.timer() < time.perf_counter() / 50
    bench.time_multiply("cpu", 128, "float32", "eager")


def test_setup_is_cheap_the_second_time():
    # asv re-runs setup before every sample: everything must come from caches.
    common.block_runner("cpu", 256, "int32", "xla", common.block_wait_op("cpu"))
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


@pytest.mark.parametrize("op", common.WAIT_OPS)
def test_the_wait_reads_one_element(op):
    x = common.input_tensor("cpu", 4, "int32")
    assert common.first_element(x, op).shape == (1, 1)
    assert common.wait_for(x, op).item() == 1


def test_a_wait_sample_is_a_calibrated_block_of_reads(monkeypatch, longest_run):
    reads = []
    real_wait_for = common.wait_for

    def counted(tensor, op):
        reads.append(op)
        return real_wait_for(tensor, op)

    monkeypatch.setattr(common, "wait_for", counted)
    (block,) = wait.wait_block("cpu", "float32").blocks
    # One sample times many reads back to back, for as long as a Multiply block: a
    # single ~30 us read was one draw of the interrupts around it.
    assert longest_run(block) > grid.MIN_BLOCK_SECONDS / 3
    reads.clear()
    block()
    assert len(reads) == block.ops > 1


def test_the_wait_benchmark_hands_asv_seconds_per_read():
    bench = wait.Wait()
    bench.setup("cpu", "float32")
    before = bench.timer()
    bench.time_wait("cpu", "float32")
    # A read of a 2x2 tensor, not a 10 ms block of them.
    assert 0 < bench.timer() - before < grid.MIN_BLOCK_SECONDS / 10


def test_blocks_are_calibrated_to_bury_the_per_sample_cost(longest_run):
    blocks = common.block_runner("cpu", 2, "float32", "eager")
    assert len(blocks.blocks) == grid.input_copies(2, "float32")
    for block in blocks.blocks:
        # Calibrated at warm-up to last MIN_BLOCK_SECONDS; a loaded machine only lengthens it.
        assert longest_run(block) > grid.MIN_BLOCK_SECONDS / 3
    # Lengthened from the grid's first guess wherever that fell short; on a slow moment
    # of a shared VM 100 2x2 eager ops already last 10 ms, and the guess stands.
    assert blocks.ops >= grid.ops_per_block(2)


def test_per_op_seconds_divides_by_the_block_length():
    def block():
        time.sleep(0.002)

    block.ops = 4
    assert 0.0004 < timing.per_op_seconds(block, min_time=0.01, min_blocks=3) < 0.002


def test_numpy_reference_reports_a_bandwidth():
    bench = reference.NumpyScale()
    bench.setup(2048)
    assert bench.track_numpy_scale_bandwidth(2048) > 0


@pytest.mark.filterwarnings("error")
def test_the_in_place_reference_writes_over_its_input_and_says_nothing_of_overflow():
    into_new, in_place = reference.StreamScale(), reference.StreamScaleInPlace()
    for bench in (into_new, in_place):
        bench.setup(256)
        for _ in range(200):  # past float32's range: 2**200 is inf
            bench.block()
    try:
        # Each slice's output is its input in place, a new array in the original.
        assert all(x.ctypes.data == out.ctypes.data for x, out in in_place.slices)
        assert not any(np.shares_memory(x, out) for x, out in into_new.slices)
        assert np.isinf(in_place.slices[0][0]).all() and (into_new.slices[0][0] == 1).all()
        assert in_place.track_scale_bandwidth(256) > 0
    finally:
        into_new.teardown(256)
        in_place.teardown(256)


def test_the_gpu_wait_probe_runs_its_blocks_here_too():
    # The probe runs only where a GPU is listed; under soft placement its '/GPU:0' blocks
    # run on this CPU, so the code path (its blocks and reads) is exercised without one.
    # 100 MiB: room for 2048x2048 float32 blocks, not 4096x4096.
    facts = checks.probe_wait("Slice", 100 * 2**20)
    assert facts["sizes"] == (512, 2048)
    assert all(seconds > 0 for seconds in facts["waited"].values())
