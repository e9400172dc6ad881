"""The version story: what changed between adjacent stacks, by asv's own rule."""

import pytest

from tfgpubench.names import MULTIPLY, NUMPY_MULTIPLY
from tfgpubench.report import changes, load, render
from tfgpubench.report.asvresults import Measurement, Run
from tfgpubench.suite import grid

from . import make_synthetic_gpu_results as model
from .conftest import FIXTURE_RESULTS, SYNTHETIC_GPU_RESULTS, SYNTHETIC_MACHINE


def case(value, low, high, repeat=20, samples=()):
    return Measurement(MULTIPLY, {"device": "cpu", "size": 2, "dtype": "int32", "mode": "xla"},
                       value, ci_low=low, ci_high=high, repeat=repeat, samples=samples)


def test_a_change_needs_the_factor_and_asvs_significance_test():
    before = case(100e-6, 99e-6, 101e-6)
    faster = changes.compare_cases(before, case(70e-6, 69e-6, 71e-6))
    assert faster.changed and faster.ratio.value == pytest.approx(0.7)
    # Past the factor, but the confidence intervals overlap: not a change.
    wide = changes.compare_cases(before, case(85e-6, 60e-6, 120e-6))
    assert not wide.changed
    # Significant but within the factor: not a change either.
    assert not changes.compare_cases(before, case(95e-6, 94.5e-6, 95.5e-6)).changed


def test_with_samples_it_is_mann_whitney_as_asv_compare_does():
    slow = [1.00e-4 + i * 1e-7 for i in range(20)]
    fast = [0.80e-4 + i * 1e-7 for i in range(20)]
    # Overlapping intervals would say "no"; the samples say "yes".
    before = case(1.01e-4, 0.7e-4, 1.2e-4, samples=tuple(slow))
    after = case(0.81e-4, 0.7e-4, 1.2e-4, samples=tuple(fast))
    assert changes.compare_cases(before, after).changed


def test_one_sample_is_judged_on_the_factor_alone_as_asv_does():
    assert changes.compare_cases(case(100e-6, 50e-6, 150e-6, repeat=1),
                                 case(80e-6, 40e-6, 120e-6, repeat=1)).changed


def test_a_benchmark_is_a_control_where_its_distribution_is_one_version_on_both_sides():
    assert changes.control_benchmarks({"numpy": "2.4.6", "keras": "3.1"},
                                     {"numpy": "2.4.6", "keras": "3.2"}) == {
        NUMPY_MULTIPLY: "numpy 2.4.6 in both stacks"}
    # Another numpy, or one not recorded on either side: no control.
    assert changes.control_benchmarks({"numpy": "1.26.4"}, {"numpy": "2.0.2"}) == {}
    assert changes.control_benchmarks({}, {"numpy": "2.4.6"}) == {}
    assert changes.control_benchmarks({}, {}) == {}


def run_with_numpy(label, numpy, seconds_2x2, tensorflow_2x2=None):
    """A Run whose numpy multiply took seconds_2x2 at 2x2 and 100 us at 1000x1000, and
    TensorFlow's xla multiply tensorflow_2x2 at 2x2 where given."""
    def measured(benchmark, size, value, mode="eager"):
        return Measurement(benchmark, {"device": "cpu", "size": size, "dtype": "int32",
                                       "mode": mode}, value, ci_low=value * 0.99,
                           ci_high=value * 1.01, repeat=20)
    measurements = {NUMPY_MULTIPLY: [measured(NUMPY_MULTIPLY, size, value)
                                     for size, value in ((2, seconds_2x2), (1000, 100e-6))]}
    if tensorflow_2x2 is not None:
        measurements[MULTIPLY] = [measured(MULTIPLY, 2, tensorflow_2x2, "xla")]
    return Run(path="", machine="m", commit_hash=label, env_name="e", date=0, label=label,
               also={"numpy": numpy}, measurements=measurements)


def test_numpys_multiply_with_one_numpy_on_both_sides_is_the_machines_drift():
    # As the gate of tf2.20.0 -> tf2.21.0 on the EPYC VM read numpy's 2x2 multiply
    # (numpy 2.4.6 in both, 2026-12-07): the same code, 1.3x slower the second time.
    before, after = run_with_numpy("a", "2.4.6", 820e-9), run_with_numpy("b", "2.4.6", 1.07e-6)
    controls = changes.step_controls(before, after)
    assert controls.why == "numpy 2.4.6 in both stacks"
    assert len(controls.cases) == 2 and len(controls.changed) == 1
    assert controls.drift() == pytest.approx(1.07 / 0.82)
    step = changes.step_change("m", before, after, {})
    assert step.controls == controls and step.compared == 0
    assert step.describe() == ("a -> b: nothing beyond noise (0 cases compared); controls "
                               "(numpy 2.4.6 in both stacks): 1 of 2 cases moved, up to "
                               "x1.30, the machine's own drift")
    data = render.step_data(step)["controls"]
    assert (data["changed"], data["cases"]) == (1, 2)
    assert data["drift"] == pytest.approx(1.305, abs=1e-3)
    # Another numpy: its change may be numpy's, so it is no control.
    assert changes.step_controls(before, run_with_numpy("c", "2.4.7", 1.07e-6)) is None
    assert changes.step_change("m", before, run_with_numpy("c", "2.4.7", 1e-6), {}).controls \
        is None
    # Beside what moved in TensorFlow, after it.
    step = changes.step_change("m", run_with_numpy("a", "2.4.6", 820e-9, 259e-6),
                               run_with_numpy("b", "2.4.6", 1.07e-6, 148e-6), {})
    assert step.describe().startswith("a -> b: cpu xla, moving data: 0.57x (1 of 1 cases ")
    assert step.describe().endswith("; controls (numpy 2.4.6 in both stacks): 1 of 2 cases "
                                    "moved, up to x1.30, the machine's own drift")
    # Nothing moved: said so.
    steady = changes.step_controls(before, run_with_numpy("d", "2.4.6", 830e-9))
    assert steady.describe() == "controls (numpy 2.4.6 in both stacks): none of 2 cases moved"


def test_the_story_of_two_real_stacks_leads_the_report(stack_repo):
    _, report = load(FIXTURE_RESULTS, stack_repo)
    (step,) = report["changes"]["testbox"]["steps"]
    assert (step.before, step.after) == ("tf-2.16.2", "tf-2.21.0")
    assert report["changes"]["testbox"]["overall"] is None
    # Every measured cpu Multiply case of both stacks was compared exactly once.
    assert step.compared == 64
    text = render.render_text(report)
    assert text.startswith(render.CHANGES_TITLE)
    assert text.index("tf-2.16.2 -> tf-2.21.0") < text.index("testbox / tf-2.16.2")
    data = render.report_data(report)
    assert data["changes"]["testbox"]["steps"][0]["compared"] == 64


def test_the_release_that_made_gpu_dispatch_cheaper_is_named(stack_repo):
    # SYNTHETIC results: the model's newer stack has GPU eager fixed cost 1.25x lower.
    _, report = load(SYNTHETIC_GPU_RESULTS, stack_repo)
    (step,) = report["changes"][SYNTHETIC_MACHINE]["steps"]
    # The times name the cause; the speedup track moves with them, by as much give or
    # take the noise, so which of the two leads is the noise's draw.
    times = [g for g in step.moved if g.regime != "speedup"]
    speedups = [g for g in step.moved if g.regime == "speedup"]
    top = times[0]
    assert (top.device, top.mode, top.regime) == ("gpu", "eager", changes.FIXED_COST)
    assert (speedups[0].device, speedups[0].mode) == ("gpu", "eager")
    assert {(g.mode, g.regime) for g in step.moved[:2]} == {("eager", changes.FIXED_COST),
                                                             ("eager", "speedup")}
    assert top.ratio == pytest.approx(1 / model.GPU_EAGER_SPEEDUP, rel=0.08)
    # Every case the model moves clearly past the factor changed; clearly within, did not.
    for change in top.cases:
        p = change.params
        moved = model.model_seconds("gpu", p["size"], p["dtype"], "eager", True, grid) / (
            model.model_seconds("gpu", p["size"], p["dtype"], "eager", False, grid))
        if moved < 1 / changes.FACTOR - 0.03:
            assert change.changed, (p, moved)
        if moved > 1 / changes.FACTOR + 0.03:
            assert not change.changed, (p, moved)
    # Nothing else moved in the model: no other group is beyond noise, bar the speedup track.
    others = times[1:]
    assert all(len(g.changed) <= len(g.cases) // 4 for g in others), [g.describe() for g in others]
    assert "gpu eager, fixed cost per op: 0.8" in step.describe()


def test_the_page_gives_the_controls_under_what_moved():
    from tfgpubench.report.page import _changes_html

    step = changes.step_change("m", run_with_numpy("a", "2.4.6", 820e-9),
                               run_with_numpy("b", "2.4.6", 1.07e-6), {})
    html = "".join(_changes_html({"changes": {"m": {"steps": [step], "overall": None}}}))
    assert ("nothing beyond noise (0 cases compared)<br><em>controls (numpy 2.4.6 in both "
            "stacks): 1 of 2 cases moved, up to x1.30, the machine&#x27;s own drift</em>") in html
