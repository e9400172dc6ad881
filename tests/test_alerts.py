"""Alerts a machine can read: regressions between two stacks by asv's own rule, checked
against `asv compare` itself on recorded results, as JSON and Markdown."""

import json
import math
import re
import subprocess
import sys
from dataclasses import replace

import pytest

from tfgpubench import alerts
from tfgpubench.names import MULTIPLY, NUMPY_MULTIPLY, WAIT
from tfgpubench.report.asvresults import Measurement, load_results, stack_labels_from_repo

from .report.conftest import (
    FIXTURE_RESULTS,
    MACHINE,
    SYNTHETIC_GPU_RESULTS,
    SYNTHETIC_MACHINE,
    stack_repo,  # noqa: F401  (a fixture)
    write_config,
)

OLD, NEW = "tf-2.16.2", "tf-2.21.0"


def runs_of(results_dir, repo, machine):
    labels = stack_labels_from_repo(repo)
    runs = {run.label: run for run in load_results(results_dir, labels).runs
            if run.machine == machine}
    hashes = {label: commit for commit, label in labels.items()}
    return runs, {label: {"label": label, "commit": hashes[label]} for label in runs}


def case(value, low=None, high=None, repeat=20, samples=(), failed=False):
    return Measurement(MULTIPLY, {"device": "gpu", "size": 2, "dtype": "float32",
                                  "mode": "eager"}, value, ci_low=low, ci_high=high,
                       repeat=repeat, samples=samples, failed=failed)


# --- one case --------------------------------------------------------------------------------

def test_slower_past_the_factor_and_significant_is_a_regression():
    before = case(100e-6, 99e-6, 101e-6)
    verdict = alerts.judge_case(before, case(130e-6, 129e-6, 131e-6))
    assert verdict.kind == alerts.SLOWER and verdict.regressed
    assert verdict.ratio == pytest.approx(1.3)
    assert verdict.ratio_low == pytest.approx(129 / 101)
    assert verdict.ratio_high == pytest.approx(131 / 99)
    assert verdict.test == alerts.CI_APART and verdict.p_value is None
    assert verdict.case == "multiply.Multiply.time_multiply('gpu', 2, 'float32', 'eager')"
    # Past the factor but overlapping: noise. Within the factor: no change either.
    assert alerts.judge_case(before, case(115e-6, 80e-6, 150e-6)) is None
    assert alerts.judge_case(before, case(105e-6, 104.5e-6, 105.5e-6)) is None
    assert alerts.judge_case(before, case(70e-6, 69e-6, 71e-6)).kind == alerts.FASTER


def test_with_enough_samples_mann_whitney_decides_and_its_p_is_given():
    slow = tuple(1.30e-4 + i * 1e-7 for i in range(20))
    fast = tuple(1.00e-4 + i * 1e-7 for i in range(20))
    verdict = alerts.judge_case(case(1.01e-4, 0.5e-4, 1.5e-4, samples=fast),
                                case(1.31e-4, 0.5e-4, 1.5e-4, samples=slow))
    assert verdict.kind == alerts.SLOWER and verdict.test == alerts.MANN_WHITNEY
    assert 0 < verdict.p_value < alerts.P_THRESHOLD
    # Two samples each cannot reach asv's threshold: its CI test decides instead.
    few = alerts.significance(case(1.0, 0.9, 1.1, samples=(1.0, 1.0)),
                              case(2.0, 1.9, 2.1, samples=(2.0, 2.0)))
    assert few == (alerts.CI_APART, None)
    assert alerts.significance(case(1.0, 0.9, 1.1, repeat=1), case(2.0, 1.9, 2.1)) == (
        alerts.FACTOR_ONLY, None)


def test_a_case_that_fails_after_running_is_a_regression_and_a_skip_is_not():
    ran, failed, skipped = case(1e-4, 0.9e-4, 1.1e-4), case(math.nan, failed=True), case(math.nan)
    assert alerts.judge_case(ran, failed).kind == alerts.FAILED
    assert alerts.judge_case(failed, ran).kind == alerts.FIXED
    assert alerts.judge_case(ran, skipped) is None
    assert alerts.judge_case(skipped, ran) is None


# --- recorded results ------------------------------------------------------------------------

def test_the_synthetic_gpu_change_read_backwards_is_the_one_regression(stack_repo):  # noqa: F811
    # SYNTHETIC results: the newer stack's GPU eager fixed cost is 1.25x lower. Going
    # from the newer to the older is then a regression of exactly those cases.
    runs, stacks = runs_of(SYNTHETIC_GPU_RESULTS, stack_repo, SYNTHETIC_MACHINE)
    forward = alerts.make_alert(SYNTHETIC_MACHINE, runs[OLD], runs[NEW], stacks[OLD],
                                stacks[NEW])
    assert forward.regressions == []
    assert {(v.params["device"], v.params["mode"]) for v in forward.improvements} == {
        ("gpu", "eager")}
    backward = alerts.make_alert(SYNTHETIC_MACHINE, runs[NEW], runs[OLD], stacks[NEW],
                                 stacks[OLD])
    assert backward.regressions
    assert {(v.benchmark, v.params["device"], v.params["mode"]) for v in
            backward.regressions} == {(MULTIPLY, "gpu", "eager")}
    assert all(1.1 < v.ratio <= 1.25 * 1.05 for v in backward.regressions)
    assert backward.compared == forward.compared > len(backward.regressions)
    # Only time_ benchmarks: the speedup track (higher is better) is never judged.
    assert all(alerts.is_time_benchmark(v.benchmark) for v in backward.verdicts)


def asv_compare_marks(tmp_path, results_dir, repo, machine, factor):
    """{benchmark case: mark} of the rows `asv compare` marks changed ('+', '-', '!')."""
    config = write_config(tmp_path, results_dir, repo)
    out = subprocess.run([sys.executable, "-m", "asv", "--config", str(config), "compare",
                          OLD, NEW, "--machine", machine, "--factor", str(factor),
                          "--only-changed"], capture_output=True, text=True, check=True)
    marks = {}
    for line in out.stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0] in ("+", "-", "!"):
            marks[cells[4]] = cells[0]
    return marks


@pytest.mark.parametrize("factor", [1.1, 1.2])
def test_the_verdicts_are_asv_compares_own(tmp_path, stack_repo, factor):  # noqa: F811
    runs, stacks = runs_of(SYNTHETIC_GPU_RESULTS, stack_repo, SYNTHETIC_MACHINE)
    alert = alerts.make_alert(SYNTHETIC_MACHINE, runs[OLD], runs[NEW], stacks[OLD],
                              stacks[NEW], factor=factor)
    ours = {v.case: {alerts.SLOWER: "+", alerts.FASTER: "-", alerts.FAILED: "!"}[v.kind]
            for v in alert.verdicts}
    theirs = {name: mark for name, mark in asv_compare_marks(
        tmp_path, SYNTHETIC_GPU_RESULTS, stack_repo, SYNTHETIC_MACHINE, factor).items()
        if alerts.is_time_benchmark(re.sub(r"\(.*", "", name))}
    assert theirs, "asv compare found no change: the fixture's known change is gone"
    assert ours == theirs


def test_two_real_cpu_stacks(stack_repo):  # noqa: F811
    runs, stacks = runs_of(FIXTURE_RESULTS, stack_repo, MACHINE)
    alert = alerts.make_alert(MACHINE, runs[OLD], runs[NEW], stacks[OLD], stacks[NEW],
                              benchmarks=[MULTIPLY, WAIT, "multiply.Speedup.track_gpu_speedup"])
    # Every measured cpu case of Multiply (64) and Wait was compared; the gpu ones are n/a.
    assert alert.compared >= 64
    assert all(v.params["device"] == "cpu" for v in alert.verdicts)
    assert {v.benchmark for v in alert.verdicts} <= {MULTIPLY, WAIT}


def test_what_the_gate_measures_again_is_exactly_the_flagged_cases_by_asvs_matching(
        tmp_path, stack_repo):  # noqa: F811
    runs, _ = runs_of(FIXTURE_RESULTS, stack_repo, MACHINE)
    verdicts, _ = alerts.judge(runs[OLD], runs[NEW])
    flagged = {v.case for v in verdicts if v.kind in (alerts.SLOWER, alerts.FASTER)}
    assert flagged, "the two real stacks differ in no case: nothing to select"
    # asv's own selection, over the suite's benchmarks as it discovered them.
    config = write_config(tmp_path, FIXTURE_RESULTS, stack_repo)
    assert alerts.selected_cases(config, alerts.to_measure_again(verdicts)) == flagged
    # A benchmark without parameters is selected by its name alone.
    seed = "seed.SeedScript.track_reported_speedup"
    assert alerts.selected_cases(config, alerts.case_patterns([seed])) == {seed}


# --- JSON and Markdown -----------------------------------------------------------------------

def test_the_summary_names_machine_stacks_cases_ratio_and_confidence(stack_repo):  # noqa: F811
    runs, stacks = runs_of(SYNTHETIC_GPU_RESULTS, stack_repo, SYNTHETIC_MACHINE)
    alert = alerts.make_alert(SYNTHETIC_MACHINE, runs[NEW], runs[OLD], stacks[NEW],
                              stacks[OLD], source="asv continuous", asv_exit=1)
    data = json.loads(json.dumps(alerts.summary_data([alert])))
    assert data["regressed"] is True and data["format"] == alerts.FORMAT_VERSION
    (comparison,) = data["comparisons"]
    assert comparison["machine"] == SYNTHETIC_MACHINE
    assert comparison["previous"] == stacks[NEW] and comparison["new"] == stacks[OLD]
    assert comparison["env"] == "synthetic-model" and comparison["asv_exit"] == 1
    first = comparison["regressions"][0]
    assert set(first) >= {"case", "ratio", "ratio_99ci", "test", "p_value", "before_s",
                          "after_s"}
    assert first["ratio_99ci"][0] <= first["ratio"] <= first["ratio_99ci"][1]
    text = alerts.markdown([alert])
    assert f"### {SYNTHETIC_MACHINE}: {NEW} ({stacks[NEW]['commit'][:8]}) -> {OLD}" in text
    assert f"**{len(alert.regressions)} regression(s)**" in text
    row = next(line for line in text.splitlines() if first["case"] in line)
    assert row.startswith(f"| `{first['case']}` |") and "x (" in row
    assert "Mann-Whitney U, p = " in text or alerts.CI_APART in text


def test_regressions_of_sequential_runs_point_to_the_gate(stack_repo):  # noqa: F811
    runs, stacks = runs_of(SYNTHETIC_GPU_RESULTS, stack_repo, SYNTHETIC_MACHINE)
    by_run = alerts.make_alert(SYNTHETIC_MACHINE, runs[NEW], runs[OLD], stacks[NEW],
                               stacks[OLD], source="run")
    assert by_run.regressions
    gate = f"python -m tfgpubench gate --previous {NEW} --new {OLD}"
    text = alerts.markdown([by_run])
    # Said once, under the comparison's count, before its table.
    assert text.count(gate) == 1
    assert text.index("regression(s)**") < text.index(gate) < text.index("| Case |")
    # The gate's own comparison was measured interleaved: nothing to add.
    interleaved = alerts.make_alert(SYNTHETIC_MACHINE, runs[NEW], runs[OLD], stacks[NEW],
                                    stacks[OLD], source="asv continuous", asv_exit=1)
    assert "tfgpubench gate" not in alerts.markdown([interleaved])


# --- controls: the same code on both stacks ---------------------------------------------------

def numpy_case(value, low, high):
    return Measurement(NUMPY_MULTIPLY, {"device": "cpu", "size": 2, "dtype": "int32",
                                        "mode": "eager"}, value, ci_low=low, ci_high=high,
                       repeat=20)


def test_a_control_that_changed_is_the_machine_not_a_regression():
    # numpy's 2x2 multiply read x1.31 slower on one side, as in the gate of tf2.20.0 ->
    # tf2.21.0 on the EPYC VM (2026-12-07), beside a TensorFlow case x1.3 slower.
    control = alerts.judge_case(numpy_case(820e-9, 800e-9, 840e-9),
                                numpy_case(1.07e-6, 1.05e-6, 1.09e-6))
    slower = alerts.judge_case(case(100e-6, 99e-6, 101e-6), case(130e-6, 129e-6, 131e-6))
    failed = alerts.Verdict(case=control.case, benchmark=NUMPY_MULTIPLY, params={},
                            kind=alerts.FAILED)
    a, b = {"label": "a", "commit": "1" * 40}, {"label": "b", "commit": "2" * 40}
    alert = alerts.Alert("m", a, b, 1.1, [slower, control], 82, source="asv continuous",
                         controls={NUMPY_MULTIPLY: "numpy 2.4.6 in both stacks"})
    assert alert.regressions == [slower] and alert.control_changes == [control]
    assert alert.asv_regressions == [slower, control]  # what asv continuous counts
    assert alert.drift() == pytest.approx(1.07 / 0.82)
    data = json.loads(json.dumps(alerts.summary_data([alert])))
    (comparison,) = data["comparisons"]
    assert [v["case"] for v in comparison["regressions"]] == [slower.case]
    assert comparison["controls"]["benchmarks"] == {NUMPY_MULTIPLY: "numpy 2.4.6 in both stacks"}
    assert [v["case"] for v in comparison["controls"]["changed"]] == [control.case]
    text = alerts.markdown([alert])
    assert "**1 regression(s)** of 82 cases" in text
    assert (f"`{NUMPY_MULTIPLY}` (numpy 2.4.6 in both stacks). asv's rule flagged 1 of their "
            f"cases: `{control.case}` (slower, 1.3") in text
    assert "by up to x1.30, not a change of the stacks" in text
    # The table of regressions holds the TensorFlow case alone.
    assert not any(line.startswith(f"| `{control.case}`") for line in text.splitlines())
    # Only controls flagged: no regression. Without controls, the same verdict is one.
    only = replace(alert, verdicts=[control])
    assert not only.regressions and "No regressions: 82 cases" in alerts.markdown([only])
    assert replace(only, controls={}).regressions == [control]
    # A control that fails is a failure all the same: no draw of the machine does that.
    assert replace(alert, verdicts=[failed]).regressions == [failed]
    # Controls that changed nothing say the machine held.
    assert "flagged none of their cases: the machine held" in alerts.markdown(
        [replace(alert, verdicts=[slower])])
    # The gate's two passes: a control the first pass flagged and the second did not is
    # said as such, with how far it moved, not hidden behind "held".
    near = replace(control, ratio=1.07)
    twice = alerts.confirmed([slower, near], replace(alert, verdicts=[slower]))
    text = alerts.markdown([twice])
    assert "The first pass flagged 1 of their cases past x1.049, by up to x1.07." in text
    assert "flagged none of their cases the same way in both passes" in text


def test_no_regression_says_so():
    text = alerts.markdown([alerts.Alert("m", {"label": "a", "commit": "1" * 40},
                                         {"label": "b", "commit": "2" * 40}, 1.1, [], 12,
                                         source="run")])
    assert "No regressions: 12 cases compared by run" in text
    assert alerts.summary_data([])["regressed"] is False


# --- the edge: the files asv judged, the summary files ---------------------------------------

def test_compare_stacks_reads_the_environment_both_stacks_have(stack_repo,  # noqa: F811
                                                                tmp_path):
    _, stacks = runs_of(SYNTHETIC_GPU_RESULTS, stack_repo, SYNTHETIC_MACHINE)
    alert, note = alerts.compare_stacks(SYNTHETIC_GPU_RESULTS, SYNTHETIC_MACHINE, stacks[NEW],
                                        stacks[OLD], ["virtualenv-py3.11", "synthetic-model"],
                                        source="run")
    assert note is None and alert.env == "synthetic-model" and alert.regressions
    missing, note = alerts.compare_stacks(SYNTHETIC_GPU_RESULTS, SYNTHETIC_MACHINE,
                                          stacks[NEW], stacks[OLD], ["virtualenv-py3.11"])
    assert missing is None
    assert note == (f"{NEW} -> {OLD} on {SYNTHETIC_MACHINE}: not compared, no result files of "
                    "both in virtualenv-py3.11")
    lines, text = tmp_path / "m" / "regressions.jsonl", tmp_path / "m" / "regressions.md"
    lines.parent.mkdir()
    lines.write_text("an older run's\n")
    alerts.write_summary([alert], lines, text, notes=["a note"], as_lines=True)
    (record,) = [json.loads(line) for line in lines.read_text().splitlines()]
    assert record["previous"] == stacks[NEW] and record["regressed"] is True
    assert record["format"] == alerts.FORMAT_VERSION and "rule" in record
    assert "- a note" in text.read_text()
    assert sorted(p.name for p in lines.parent.iterdir()) == ["regressions.jsonl",
                                                              "regressions.md"]
