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

from .. import format as fmt
from ..names import MULTIPLY
from ..suite import grid
from . import stats
from .console import progress, section

# TensorFlow's run_benchmark: one warm-up call, then this many timed calls.
TF_ITERATIONS = 30_000


def _suite(benchmark_dir):
    """The benchmark object factory and the suite's common module, as asv imports them."""
    from asv_runner.discovery import get_benchmark_from_name

    benchmark_dir = os.path.abspath(benchmark_dir)
    package = os.path.basename(benchmark_dir)

    def load(params):
        # asv names a combination by its index in the product of the params.
        probe = get_benchmark_from_name(benchmark_dir, MULTIPLY)
        values = list(itertools.product(*probe._params)) if probe._params else [()]
        wanted = tuple(repr(p) for p in params)
        index = [tuple(repr(v) for v in combo) for combo in values].index(wanted)
        bench = get_benchmark_from_name(benchmark_dir, f"{MULTIPLY}-{index}")
        return bench

    load(("cpu", 2, "float32", "eager"))  # imports the package
    common = importlib.import_module(f"{package}.common")
    common.load_tensorflow()
    common.checks = importlib.import_module(f"{package}.checks")
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


def bare_samples(common, size, dtype, min_samples=15, min_seconds=0.1):
    """Per-op times of `tf.multiply(x, FACTOR)` in a plain loop: the ground truth.

    The same input tensor and the same call as the suite's eager block, in
    loops of the same length (so both sides see the machine's noise at the
    same time scale), timed with nothing but perf_counter around the calls.
    On the CPU an eager op has finished when it returns, so the clock stops
    before the result is read back; the suite's block also pays that read.
    """
    import tensorflow as tf

    x = common.input_tensor("cpu", size, dtype)
    factor = grid.FACTOR
    calls = common.block_runner("cpu", size, dtype, "eager").ops
    samples = []
    spent = 0.0
    with tf.device(common.TF_DEVICE["cpu"]):
        tf.multiply(x, factor)  # warm up, as the suite's block_runner does
        while len(samples) < min_samples or spent < min_seconds:
            start = time.perf_counter()
            for _ in range(calls):
                y = tf.multiply(x, factor)
            elapsed = time.perf_counter() - start
            common.wait_for(y)
            samples.append(elapsed / calls)
            spent += elapsed
    return samples


def tensorflow_method(func, iterations=TF_ITERATIONS):
    """TensorFlow's eager microbenchmark method: warm up once, mean over `iterations`
    calls timed with time.time(), no wait (its CPU ops are synchronous)."""
    func()
    start = time.time()
    for _ in range(iterations):
        func()
    return (time.time() - start) / iterations


def run_fidelity(benchmark_dir, sizes=None, dtypes=None, interleave=5, progress=print):
    """Suite vs bare loop for each cpu eager case, as `interleave` back-to-back pairs.

    Each pair is one asv_runner run of the case (one round: warm-up and
    samples, asv's median) followed at once by a bare loop; the case's ratio
    is the median of the pairs' ratios, so a burst of load from elsewhere on
    a shared machine spoils one pair, not the verdict. Returns one dict per
    case: size, dtype, asv, bare (medians over pairs), ratio, pair_ratios, ok.
    """
    load, common = _suite(benchmark_dir)
    sizes = sizes or grid.SIZES
    dtypes = dtypes or grid.DTYPES
    cases = []
    for size, dtype in itertools.product(sizes, dtypes):
        if common.checks.skip_reason("cpu", size, dtype, "eager"):
            continue
        params = ("cpu", size, dtype, "eager")
        suite, bare, ratios, count = [], [], [], 0
        for _ in range(interleave):
            measured = asv_samples(load(params))
            truth = stats.median(bare_samples(common, size, dtype))
            suite.append(measured["value"])
            bare.append(truth)
            ratios.append(measured["value"] / truth)
            count += len(measured["samples"])
        ratio = stats.median(ratios)
        case = {
            "size": size,
            "dtype": dtype,
            "asv": stats.median(suite),
            "bare": stats.median(bare),
            "ratio": ratio,
            "pair_ratios": ratios,
            "ok": stats.within(ratio),
            "asv_samples": count,
        }
        cases.append(case)
        progress(
            f"  fidelity {size}x{size} {dtype}: suite {fmt.seconds(case['asv'])}/op,"
            f" bare {fmt.seconds(case['bare'])}/op, ratio {ratio:.3f}"
        )
    return cases


def run_tensorflow_method(benchmark_dir, interleave=5):
    """The 2x2 float32 eager case: the suite (through asv_runner) against TensorFlow's
    method applied to the same call, in back-to-back pairs (median of the pairs'
    ratios); and TensorFlow's own benchmark_tf_multiply_op_CPU call (a 2-element
    float32 tensor times itself) for scale."""
    import tensorflow as tf

    load, common = _suite(benchmark_dir)
    x = common.input_tensor("cpu", 2, "float32")
    device = common.TF_DEVICE["cpu"]
    m = tf.random.uniform([2])
    suite, same_call, tf_own, ratios = [], [], [], []
    for _ in range(interleave):
        value = asv_samples(load(("cpu", 2, "float32", "eager")))["value"]
        with tf.device(device):
            theirs = tensorflow_method(lambda: tf.multiply(x, grid.FACTOR))
            tf_own.append(tensorflow_method(lambda: tf.multiply(m, m)))
        suite.append(value)
        same_call.append(theirs)
        ratios.append(value / theirs)
    ratio = stats.median(ratios)
    return {
        "asv": stats.median(suite),
        "tf_method": stats.median(same_call),
        "tf_own_benchmark": stats.median(tf_own),
        "ratio": ratio,
        "pair_ratios": ratios,
        "ok": stats.within(ratio),
    }


def fidelity_ok(cases):
    return all(case["ok"] for case in cases) and not any(math.isnan(c["ratio"]) for c in cases)


def run_part(args, config, figures):
    """Print the fidelity figures next to their targets; whether they are met."""
    section("fidelity: suite (asv_runner, in process) vs bare perf_counter loop, cpu eager")
    progress("  measuring in this process (each case alternates suite and bare loop)...")
    sizes = [2, 1000] if args.quick else None
    interleave = 1 if args.quick else args.interleave
    cases = run_fidelity(
        config.benchmark_dir, sizes=sizes, interleave=interleave, progress=progress
    )
    print(
        f"  {'case':<20} {'suite/op':>10} {'bare/op':>10} {'ratio':>7}  target 1.00 +- 0.05"
        "  (median of back-to-back pairs)"
    )
    for c in cases:
        label = f"{c['size']}x{c['size']} {c['dtype']}"
        pairs = f"{min(c['pair_ratios']):.2f}-{max(c['pair_ratios']):.2f}"
        print(
            f"  {label:<20} {fmt.seconds(c['asv']):>10} "
            f"{fmt.seconds(c['bare']):>10} {c['ratio']:7.3f}  "
            f"{fmt.verdict(c['ok'])}  (pairs {pairs})"
        )
    ratios = [c["ratio"] for c in cases]
    within = sum(c["ok"] for c in cases)
    print(f"  {within}/{len(cases)} within target; ratio range {min(ratios):.3f}-{max(ratios):.3f}")

    progress("  TensorFlow's method (30,000 calls after one warm-up, mean)...")
    tf = run_tensorflow_method(config.benchmark_dir, interleave=interleave)
    print("  2x2 float32 eager vs TensorFlow's eager microbenchmark method:")
    print(
        f"    suite (asv) {fmt.seconds(tf['asv'])}/op, TensorFlow's method on the "
        f"same call {fmt.seconds(tf['tf_method'])}/op, ratio {tf['ratio']:.3f}  "
        f"target 1.00 +- 0.05  {fmt.verdict(tf['ok'])}"
    )
    print(
        f"    (benchmark_tf_multiply_op_CPU's own call, a 2-element tensor times itself: "
        f"{fmt.seconds(tf['tf_own_benchmark'])}/op)"
    )
    figures["fidelity"] = {"cases": cases, "tensorflow_method": tf}
    return fidelity_ok(cases) and tf["ok"]
