"""Fidelity: does the suite record the time an op really takes?

Runs the suite's own Multiply benchmark in this process through asv_runner's
machinery (discovery by name, do_setup, TimeBenchmark.run with the per-op
timer, asv's median) and, interleaved with it to cancel drift, a bare
`time.perf_counter` loop of the same `tf.multiply` call; and TensorFlow's own
eager microbenchmark method (tensorflow/python/eager/benchmarks_test.py:
one warm-up call, then `time.time()` around 30,000 calls, the mean).
TensorFlow is imported inside the functions, never at module level.
"""

import importlib
import itertools
import math
import os
import time

from . import stats

BENCHMARK = "multiply.Multiply.time_multiply"
# TensorFlow's run_benchmark: one warm-up call, then this many timed calls.
TF_ITERATIONS = 30_000
# A bare-loop sample lasts at least this long, so its one wait is negligible.
BARE_SAMPLE_SECONDS = 0.05


def _suite(benchmark_dir):
    """The benchmark object factory and the suite's common module, as asv imports them."""
    from asv_runner.discovery import get_benchmark_from_name

    benchmark_dir = os.path.abspath(benchmark_dir)
    package = os.path.basename(benchmark_dir)

    def load(params):
        # asv names a combination by its index in the product of the params.
        probe = get_benchmark_from_name(benchmark_dir, BENCHMARK)
        values = list(itertools.product(*probe._params)) if probe._params else [()]
        wanted = tuple(repr(p) for p in params)
        index = [tuple(repr(v) for v in combo) for combo in values].index(wanted)
        bench = get_benchmark_from_name(benchmark_dir, f"{BENCHMARK}-{index}")
        return bench

    load(("cpu", 2, "float32", "eager"))  # imports the package
    common = importlib.import_module(f"{package}.common")
    return load, common


def asv_samples(bench):
    """Per-op samples and asv's value for one combination, exactly as asv_runner's
    `run` entry point produces them in a benchmark process (minus the process)."""
    from asv_runner.statistics import compute_stats

    bench.set_cache(None)
    skip = bench.do_setup()
    if skip:
        return None
    try:
        result = bench.do_run()
    finally:
        bench.do_teardown()
    value, _ = compute_stats(result["samples"], result["number"])
    return {"samples": result["samples"], "value": value, "number": result["number"]}


def bare_samples(common, size, dtype, count=7):
    """Per-op times of `tf.multiply(x, FACTOR)` in a plain loop: the ground truth.

    The same input tensor and the same call as the suite's eager block, in
    loops long enough (BARE_SAMPLE_SECONDS) that their one final wait costs
    nothing measurable per op.
    """
    import tensorflow as tf

    x = common.input_tensor("cpu", size, dtype)
    factor = common.FACTOR
    with tf.device(common.TF_DEVICE["cpu"]):
        # Size the loop from one calibration loop, itself a warm-up.
        calls = 8
        while True:
            start = time.perf_counter()
            for _ in range(calls):
                y = tf.multiply(x, factor)
            common.wait_for(y)
            elapsed = time.perf_counter() - start
            if elapsed >= BARE_SAMPLE_SECONDS:
                break
            calls = max(calls + 1, int(calls * min(10.0, 1.2 * BARE_SAMPLE_SECONDS / elapsed)))
        samples = []
        for _ in range(count):
            start = time.perf_counter()
            for _ in range(calls):
                y = tf.multiply(x, factor)
            common.wait_for(y)
            samples.append((time.perf_counter() - start) / calls)
    return samples


def tensorflow_method(func, iterations=TF_ITERATIONS):
    """TensorFlow's eager microbenchmark method: warm up once, mean over `iterations`
    calls timed with time.time(), no wait (its CPU ops are synchronous)."""
    func()
    start = time.time()
    for _ in range(iterations):
        func()
    return (time.time() - start) / iterations


def run_fidelity(benchmark_dir, sizes=None, dtypes=None, interleave=3, progress=print):
    """Suite vs bare loop for each cpu eager case, interleaved `interleave` times.

    Returns one dict per case: size, dtype, asv (asv's value over all its
    samples), bare (median of the bare samples), ratio, ok.
    """
    load, common = _suite(benchmark_dir)
    sizes = sizes or common.SIZES
    dtypes = dtypes or common.DTYPES
    cases = []
    for size, dtype in itertools.product(sizes, dtypes):
        if common.skip_reason("cpu", size, dtype):
            continue
        params = ("cpu", size, dtype, "eager")
        asv_all, bare_all, values = [], [], []
        for _ in range(interleave):
            measured = asv_samples(load(params))
            asv_all.extend(measured["samples"])
            values.append(measured["value"])
            bare_all.extend(bare_samples(common, size, dtype))
        from asv_runner.statistics import compute_stats

        asv_value, _ = compute_stats(asv_all, 1)
        bare = stats.median(bare_all)
        ratio = asv_value / bare
        case = {
            "size": size, "dtype": dtype, "asv": asv_value, "bare": bare, "ratio": ratio,
            "ok": stats.within(ratio), "asv_samples": len(asv_all),
        }
        cases.append(case)
        progress(f"  fidelity {size}x{size} {dtype}: asv {stats.human_seconds(asv_value)}/op, "
                 f"bare {stats.human_seconds(bare)}/op, ratio {ratio:.3f}")
    return cases


def run_tensorflow_method(benchmark_dir, interleave=3):
    """The 2x2 float32 eager case: the suite (through asv_runner) against TensorFlow's
    method applied to the same call, and TensorFlow's own benchmark_tf_multiply_op_CPU
    (a 2-element float32 tensor times itself) for scale."""
    import tensorflow as tf

    load, common = _suite(benchmark_dir)
    x = common.input_tensor("cpu", 2, "float32")
    device = common.TF_DEVICE["cpu"]
    m = tf.random.uniform([2])
    suite, same_call, tf_own = [], [], []
    for _ in range(interleave):
        suite.extend(asv_samples(load(("cpu", 2, "float32", "eager")))["samples"])
        with tf.device(device):
            same_call.append(tensorflow_method(lambda: tf.multiply(x, common.FACTOR)))
            tf_own.append(tensorflow_method(lambda: tf.multiply(m, m)))
    from asv_runner.statistics import compute_stats

    suite_value, _ = compute_stats(suite, 1)
    tf_value = stats.median(same_call)
    return {
        "asv": suite_value,
        "tf_method": tf_value,
        "tf_method_runs": same_call,
        "tf_own_benchmark": stats.median(tf_own),
        "ratio": suite_value / tf_value,
        "ok": stats.within(suite_value / tf_value),
    }


def fidelity_ok(cases):
    return all(case["ok"] for case in cases) and not any(math.isnan(c["ratio"]) for c in cases)
