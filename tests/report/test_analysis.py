"""The report's numbers, on series from the real fixture results.

There are no GPU results anywhere: crossover and speedup are generic (two
timed series over sizes) and are checked here on CPU modes that really do
cross on the machine that recorded the fixtures (graph_loop against eager).
"""

import math

import numpy as np
import pytest

from tfgpubench.names import MULTIPLY
from tfgpubench.report import analysis
from tfgpubench.report.asvresults import load_results, stack_labels_from_repo
from tfgpubench.report.build import bytes_moved

from .conftest import FIXTURE_RESULTS


@pytest.fixture(scope="module")
def runs(stack_repo):
    result_set = load_results(FIXTURE_RESULTS, stack_labels_from_repo(stack_repo))
    return {r.label: r for r in result_set.runs}


def series(run, mode, dtype="int32", device="cpu"):
    return sorted(
        run.select(MULTIPLY, device=device, dtype=dtype, mode=mode), key=lambda m: m.params["size"]
    )


def test_ratio_range_comes_from_asvs_confidence_intervals(runs):
    run = runs["tf-2.21.0"]
    eager = run.get(MULTIPLY, device="cpu", size=2, dtype="int32", mode="eager")
    function = run.get(MULTIPLY, device="cpu", size=2, dtype="int32", mode="function")
    estimate = analysis.ratio(function, eager)
    assert estimate.value == function.value / eager.value
    assert estimate.low == function.ci_low / eager.ci_high
    assert estimate.high == function.ci_high / eager.ci_low
    assert estimate.low <= estimate.value <= estimate.high


def test_ratio_of_a_skipped_combination_is_none(runs):
    run = runs["tf-2.21.0"]
    cpu = run.get(MULTIPLY, device="cpu", size=2, dtype="int32", mode="eager")
    gpu = run.get(MULTIPLY, device="gpu", size=2, dtype="int32", mode="eager")
    assert analysis.ratio(cpu, gpu) is None


def eager_over(run, mode, dtype="int32"):
    """How many times faster eager is than `mode`, per size."""
    eager, other = series(run, "eager", dtype), series(run, mode, dtype)
    return [m.params["size"] for m in eager], [
        analysis.ratio(o, e) for e, o in zip(eager, other)
    ]


def crossing_series(runs, mode):
    """(sizes, estimates) of the first stack and dtype where eager overtakes `mode`."""
    for run in runs.values():
        for dtype in ("int32", "float32"):
            sizes, estimates = eager_over(run, mode, dtype)
            if None not in estimates and estimates[0].value < 1 <= estimates[-1].value:
                return sizes, estimates
    return None


def test_crossover_where_eager_overtakes_graph_loop(runs):
    found = crossing_series(runs, "graph_loop")
    if found is None:
        pytest.fail("no stack of the fixture has eager overtake graph_loop within the sizes: "
                    "regenerate it (tests/report/make_fixture_results.py)")
    sizes, estimates = found
    values = [e.value for e in estimates]
    last_slower = max(i for i, v in enumerate(values) if v < 1)
    cross = analysis.crossover(sizes, estimates)
    assert cross.status == analysis.AT
    assert sizes[last_slower] <= cross.size <= sizes[last_slower + 1]
    assert cross.has_range
    assert cross.low is None or cross.low <= cross.size
    assert cross.high is None or cross.high >= cross.size
    # Interpolation is linear in log-log between the bracketing points.
    i = last_slower
    t = math.log(cross.size / sizes[i]) / math.log(sizes[i + 1] / sizes[i])
    assert math.log(values[i]) + t * (math.log(values[i + 1]) - math.log(values[i])) == (
        pytest.approx(0, abs=1e-9)
    )
    assert cross.describe().startswith("~")


def test_crossover_never_and_always(runs):
    # A per-op tf.function never catches up with eager on this machine's float32
    # series, and eager is faster than it at every size.
    sizes, estimates = eager_over(runs["tf-2.16.2"], "function", "float32")
    assert all(e.value > 1 for e in estimates)
    always = analysis.crossover(sizes, estimates)
    assert always.status == analysis.ALWAYS
    assert "every measured size" in always.describe()
    never = analysis.crossover(sizes, [analysis.invert(e) for e in estimates])
    assert never.status == analysis.NEVER and never.size is None
    assert "not within the measured sizes (2x2..4096x4096)" in never.describe()


def test_crossover_needs_two_points(runs):
    sizes, estimates = eager_over(runs["tf-2.21.0"], "graph_loop")
    assert analysis.crossover(sizes, [estimates[0]] + [None] * (len(sizes) - 1)) is None


def test_fit_over_the_sizes_where_it_holds_matches_numpy_weighted_polyfit(runs):
    measured = series(runs["tf-2.21.0"], "eager", "float32")
    nbytes = [bytes_moved(m.params["size"], "float32") for m in measured]
    seconds = [m.value for m in measured]
    fit = analysis.fit_time_vs_bytes(nbytes, seconds)
    used = [(n, t) for (n, t), (_, _, kept) in zip(zip(nbytes, seconds), fit.residuals) if kept]
    assert fit.points == len(used) >= analysis.MIN_FIT_POINTS
    slope, intercept = np.polyfit(*zip(*used), 1, w=1 / np.array([t for _, t in used]))
    assert fit.fixed == pytest.approx(intercept, rel=1e-6)
    assert fit.per_byte == pytest.approx(slope, rel=1e-6)
    assert 0 < fit.fixed < seconds[0]  # the smallest op is mostly, not only, fixed cost
    assert fit.bandwidth == pytest.approx(1 / slope)
    assert fit.fixed_error > 0 and fit.per_byte_error > 0
    # Every point is reported; the ones used are within the tolerance (or only three remain).
    assert [n for n, _, _ in fit.residuals] == sorted(nbytes)
    assert fit.worst_residual <= analysis.FIT_TOLERANCE or fit.points == analysis.MIN_FIT_POINTS


def test_a_size_the_model_does_not_hold_for_is_left_out():
    # t = 10 us + bytes / 30 GB/s, except one mid size that stays in cache and
    # streams 3x faster: it must not decide the bandwidth.
    nbytes = [32, 8192, 131072, 2_097_152, 8_000_000, 33_554_432, 134_217_728]
    seconds = [10e-6 + n / 30e9 for n in nbytes]
    seconds[4] = 10e-6 + nbytes[4] / 90e9
    fit = analysis.fit_time_vs_bytes(nbytes, seconds)
    assert fit.bandwidth == pytest.approx(30e9, rel=1e-6)
    assert [kept for _, _, kept in fit.residuals] == [True] * 4 + [False] + [True] * 2
    assert fit.residuals[4][1] < -analysis.FIT_TOLERANCE


def test_the_fixed_costs_error_does_not_depend_on_the_unit_of_bytes():
    # JAX's eager multiply on an H200 (int32, median of asv's samples, results/h200/ of
    # 2026-12-04): ~120 us at every size, launch-bound. In bytes the normal matrix spanned
    # more than 1e15 and the intercept's error came out 3e-22 s; in megabytes it did not.
    nbytes = [32, 8192, 131072, 524288, 2097152, 8000000, 33554432, 134217728]
    seconds = [126.7e-6, 134.7e-6, 122.9e-6, 132.3e-6, 112.0e-6, 137.1e-6, 107.2e-6, 115.8e-6]
    in_bytes = analysis.fit_time_vs_bytes(nbytes, seconds)
    in_megabytes = analysis.fit_time_vs_bytes([n / 1e6 for n in nbytes], seconds)
    assert in_bytes.fixed == pytest.approx(in_megabytes.fixed, rel=1e-9)
    assert in_bytes.fixed_error == pytest.approx(in_megabytes.fixed_error, rel=1e-6)
    assert in_bytes.per_byte_error == pytest.approx(in_megabytes.per_byte_error / 1e6, rel=1e-6)
    # The scatter is a few percent of 120 us: so is the intercept's standard error.
    assert 0.5e-6 < in_bytes.fixed_error < 10e-6
    # The time does not grow with the bytes: no bandwidth is read off its noise.
    assert in_bytes.bandwidth is None


def test_no_bandwidth_is_read_off_a_slope_within_its_noise():
    # One jax.jit call per float32 multiply on the H200 (results/h200/, 2026-12-04):
    # 42-53 us at every size. The slope is positive but under twice its standard
    # error; 1/b of it read 24 TB/s, five times the H200's memory bandwidth.
    nbytes = [32, 8192, 131072, 524288, 2097152, 8000000, 33554432, 134217728]
    seconds = [44.05e-6, 46.13e-6, 48.37e-6, 41.94e-6, 49.93e-6, 53.06e-6, 46.61e-6, 51.2e-6]
    fit = analysis.fit_time_vs_bytes(nbytes, seconds)
    assert 0 < fit.per_byte < 2 * fit.per_byte_error
    assert fit.bandwidth is None
    # The same points with a real slope on top (bytes / 3 TB/s) do give a bandwidth.
    streaming = analysis.fit_time_vs_bytes(nbytes, [t + n / 3e12 for n, t in
                                                    zip(nbytes, seconds)])
    assert streaming.bandwidth is not None and 2e12 < streaming.bandwidth < 5e12


def test_fit_needs_three_points_and_two_sizes():
    assert analysis.fit_time_vs_bytes([32, 32, 32], [1.0, 1.1, 0.9]) is None
    assert analysis.fit_time_vs_bytes([32, 64], [1.0, 2.0]) is None


def test_share_and_bytes_moved(runs):
    numpy_scale = runs["tf-2.21.0"].get(
        "reference.NumpyScale.track_numpy_scale_bandwidth", size=4096
    )
    assert analysis.share(numpy_scale.value, numpy_scale.value) == 1
    assert analysis.share(1.0, None) is None and analysis.share(1.0, 0) is None
    assert bytes_moved(4096, "float32") == 2 * 4096 * 4096 * 4
    assert bytes_moved(2, "not-a-dtype") is None


def test_invert_swaps_the_range(runs):
    _, estimates = eager_over(runs["tf-2.21.0"], "function")
    estimate = estimates[0]
    inverted = analysis.invert(estimate)
    assert inverted.value == pytest.approx(1 / estimate.value)
    assert inverted.low == pytest.approx(1 / estimate.high)
    assert inverted.high == pytest.approx(1 / estimate.low)
