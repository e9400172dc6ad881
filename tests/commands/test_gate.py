"""`python -m tfgpubench gate`: what it asks asv continuous to measure, what it measures
again before the verdict, and the inputs it refuses before anything runs. (The gate itself,
with asv and real stacks: the fleet's end-to-end test, tests/test_fleet.py.)"""

import json
import re
from dataclasses import replace

import pytest

from tests.stacks.conftest import make_workspace, tfgpubench
from tfgpubench import alerts
from tfgpubench.commands.gate import exit_status_without_controls, gate_asv_args, judge_twice
from tfgpubench.names import COMPARATOR_BENCHMARKS, NUMPY_MULTIPLY, TIME_BENCHMARKS, case_id
from tfgpubench.runner import split_bench_args
from tfgpubench.stacks.table import load_table

from .test_publish import ROOT

STACKS = {s.label: s for s in load_table(ROOT / "stacks.toml")}
COMPARATORS = next(s for s in STACKS.values() if s.is_comparators)


def test_time_benchmarks_only_unless_told_otherwise():
    (pattern,), rest = split_bench_args(gate_asv_args(STACKS["tf2.21.0"], ["--quick"]))
    assert rest == ["--quick"]
    names = ["multiply.Multiply.time_multiply", "wait.Wait.time_wait",
             "numpy_multiply.NumpyMultiply.time_multiply", "multiply.Speedup.track_gpu_speedup",
             "torch_multiply.TorchMultiply.time_multiply", "jax_multiply.JaxMultiply.time_multiply"]
    # A TensorFlow stack installs neither PyTorch nor JAX: their cases are not asked for.
    assert [n for n in names if re.search(pattern, n)] == names[:3]
    assert split_bench_args(gate_asv_args(STACKS["tf2.21.0"], ["-b", "Wait.time_wait"]))[0] == [
        "Wait.time_wait"]
    assert split_bench_args(gate_asv_args(COMPARATORS, []))[0] == list(COMPARATOR_BENCHMARKS)


def test_the_time_pattern_selects_every_time_benchmark_and_no_track():
    # The suite's benchmarks as asv discovered them (the checked-in results/).
    names = [n for n, v in json.loads((ROOT / "results" / "benchmarks.json").read_text())
             .items() if isinstance(v, dict)]
    selected = {n for n in names if re.search(TIME_BENCHMARKS, n)}
    assert selected == {n for n in names if n.rsplit(".", 1)[1].startswith("time_")}
    assert selected


@pytest.mark.parametrize("args,message", [
    (["--previous", "tf2.20.0", "--new", "tf9.9.9"], "--new tf9.9.9: no stack of stacks.toml"),
    (["--previous", "tf2.20.0", "--new", "tf2.18.1-metal1.2.0"],
     "tf2.20.0 is a linux stack, tf2.18.1-metal1.2.0 a macos one"),
    (["--previous", "tf2.20.0", "--new", "tf2.21.0", "--factor", "0.9"],
     "--factor 0.9: must be more than 1"),
    (["--previous", "tf2.20.0", "--new", "tf2.21.0", "--machine", "../x"], "--machine"),
])
def test_a_bad_input_is_one_line_exit_2_and_runs_nothing(tmp_path, args, message):
    path = make_workspace(tmp_path / "suite")
    out = tfgpubench(path, "gate", *args, "--json", "gate.json", timeout=120)
    assert out.returncode == 2, out.stdout + out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert message in line and line.endswith("nothing was run")
    assert not (path / ".asv").exists() and not (path / "results").exists()
    assert not (path / "gate.json").exists()


# --- a flagged case is measured again ----------------------------------------------------------

def verdict(params, kind, ratio=None):
    from tfgpubench.names import MULTIPLY, case_id

    return alerts.Verdict(case=case_id(MULTIPLY, map(repr, params)), benchmark=MULTIPLY,
                          params=dict(zip(("device", "size", "dtype", "mode"), params)),
                          kind=kind, ratio=ratio)


SLOW = verdict(("cpu", 2048, "float32", "xla"), alerts.SLOWER, 1.31)
FAST = verdict(("cpu", 2, "int32", "eager"), alerts.FASTER, 0.84)
FAILED = verdict(("cpu", 4096, "int32", "graph_loop"), alerts.FAILED)
STACK_A, STACK_B = {"label": "a", "commit": "1" * 40}, {"label": "b", "commit": "2" * 40}


class Passes:
    """asv continuous as the gate calls it: each call's arguments, and its answers in turn."""

    def __init__(self, *answers):
        self.answers, self.calls = list(answers), []

    def __call__(self, asv_args):
        self.calls.append(asv_args)
        code, verdicts = self.answers.pop(0)
        return code, alerts.Alert("m", STACK_A, STACK_B, 1.1, list(verdicts), 64), None


def test_what_the_first_pass_flags_is_measured_again_and_judged_on_the_second():
    # The first pass flags a slowdown and a speedup; the second, measuring both again,
    # finds the slowdown alone.
    passes = Passes((1, [SLOW, FAST]), (1, [SLOW]))
    asked = ["--quick", "-b", "time_", "--append-samples", "--launch-method", "spawn"]
    code, alert, _ = judge_twice(passes, asked, selected_cases=lambda p: {SLOW.case, FAST.case})
    assert code == 1 and alert.verdicts == [SLOW]
    first, second = passes.calls
    assert first == asked
    patterns, rest = split_bench_args(second)
    # The second pass on its own: its samples replace the first's, never join them.
    assert rest == ["--quick", "--launch-method", "spawn"]
    # The user's selection is replaced by exactly the two cases, by asv's own matching
    # (`name(param, ...)`).
    names = [v.case for v in (SLOW, FAST, FAILED)] + [
        verdict(("cpu", 2048, "float32", "xla_more"), alerts.SLOWER).case,
        verdict(("cpu", 20, "int32", "eager"), alerts.SLOWER).case]
    assert [n for n in names if any(re.search(p, n) for p in patterns)] == [SLOW.case, FAST.case]
    assert alert.first_pass == [SLOW, FAST] and alert.not_confirmed == [FAST]
    data = alert.as_data()
    assert [v["case"] for v in data["not_confirmed"]] == [FAST.case]
    assert len(data["first_pass"]) == 2 and data["first_pass_asv_exit"] == 1
    text = alerts.markdown([alert])
    assert "The first pass flagged 2 case(s) past x1.049 (2 past x1.1); each was measured " \
           "again" in text
    assert f"Not flagged again the same way: `{FAST.case}` (faster, " in text
    assert "in a second pass of the cases the first flagged slower by more than 1.049x" in text
    assert "second pass" in alerts.summary_data([alert])["rule"]


NEAR = verdict(("cpu", 1000, "int32", "function"), alerts.SLOWER, 1.07)


class Screen:
    """The first pass's files judged at the screening factor: its answer, and when it was
    asked (how many asv continuous calls had run)."""

    def __init__(self, passes, verdicts):
        self.passes, self.verdicts, self.asked_after = passes, verdicts, []

    def __call__(self):
        self.asked_after.append(len(self.passes.calls))
        return alerts.Alert("m", STACK_A, STACK_B, 1.1, list(self.verdicts), 64)


@pytest.mark.parametrize("second,code", [([verdict(NEAR.params.values(), alerts.SLOWER, 1.16)],
                                          1), ([], 0)])
def test_a_case_past_the_screening_factor_is_measured_again(capsys, second, code):
    # The first pass finds a case x1.07 slower, significant by asv's test: under the
    # factor, so asv continuous exits 0, but past its square root. It is measured again,
    # and a regression where the second pass finds it past the factor.
    passes = Passes((0, []), (code, second))
    screen = Screen(passes, [NEAR])
    got, alert, _ = judge_twice(passes, ["-b", "time_"], screen=screen)
    # Judged from the first pass's files before the second pass replaced them.
    assert screen.asked_after == [1] and len(passes.calls) == 2
    (pattern,) = split_bench_args(passes.calls[1])[0]
    assert re.search(pattern, NEAR.case) and not re.search(pattern, SLOW.case)
    assert got == code and [v.case for v in alert.regressions] == [v.case for v in second]
    assert alert.first_pass == [NEAR] and alert.first_pass_asv_exit == 0
    assert "flagged 0 case(s) past x1.1, and 1 more past x1.049 by asv's test" in \
        capsys.readouterr().out
    assert "The first pass flagged 1 case(s) past x1.049 (0 past x1.1)" in \
        alerts.markdown([alert])


def test_a_case_past_the_factor_is_measured_again_whatever_the_screen_says(capsys):
    # Were the screen ever to leave out a case the first pass flagged (or to fail), that
    # case is still measured again.
    for screened in ([NEAR], None):
        passes = Passes((1, [SLOW]), (1, [SLOW]))
        code, alert, _ = judge_twice(passes, ["-b", "time_"],
                                     screen=lambda answer=screened: answer and alerts.Alert(
                                         "m", STACK_A, STACK_B, 1.1, answer, 64))
        (patterns, _) = split_bench_args(passes.calls[1])
        assert any(re.search(p, SLOW.case) for p in patterns)
        assert code == 1 and alert.regressions == [SLOW]
    assert "warning: the first pass could not be judged at the screening factor" in \
        capsys.readouterr().err
    # The JSON says at which factor its first pass was judged.
    assert alert.as_data()["screening_factor"] == pytest.approx(1.1 ** 0.5)


def test_nothing_past_the_screening_factor_is_one_pass():
    passes = Passes((0, []))
    screen = Screen(passes, [])
    code, alert, _ = judge_twice(passes, ["-b", "time_"], screen=screen)
    assert code == 0 and len(passes.calls) == 1 and alert.first_pass is None


def test_the_screening_factor_is_the_factors_square_root():
    assert alerts.screening_factor(1.1) == pytest.approx(1.0488, abs=1e-4)
    assert alerts.screening_factor(1.21) == pytest.approx(1.1)


def test_a_second_pass_that_flags_nothing_passes_the_gate():
    passes = Passes((1, [SLOW]), (0, []))
    code, alert, _ = judge_twice(passes, ["-b", "time_"])
    assert code == 0 and not alert.regressions and alert.not_confirmed == [SLOW]
    assert "No regressions" in alerts.markdown([alert])


def test_a_case_the_two_passes_call_opposite_ways_counts_for_neither():
    # The first pass finds the case faster, the second slower: asv continuous exits 1 on
    # the second, but no pass agrees with the other, and nothing else changed.
    turned = verdict(("cpu", 2, "int32", "eager"), alerts.SLOWER, 1.19)
    passes = Passes((0, [FAST, SLOW]), (1, [turned, SLOW]))
    code, alert, _ = judge_twice(passes, ["-b", "time_"])
    assert code == 1 and alert.verdicts == [SLOW]
    passes = Passes((0, [FAST]), (1, [turned]))
    code, alert, _ = judge_twice(passes, ["-b", "time_"])
    assert code == 0 and alert.verdicts == [] and alert.not_confirmed == [FAST]


NUMPY_2X2 = alerts.Verdict(case=case_id(NUMPY_MULTIPLY, ["'cpu'", "2", "'int32'", "'eager'"]),
                           benchmark=NUMPY_MULTIPLY, params={}, kind=alerts.SLOWER,
                           ratio=1.31)
CONTROLS = {NUMPY_MULTIPLY: "numpy 2.4.6 in both stacks"}


def with_controls(*passes):
    """asv continuous's answers, in turn, on stacks whose numpy is one version."""
    answers = iter(passes)

    def continuous(asv_args):
        code, verdicts = next(answers)
        return code, alerts.Alert("m", STACK_A, STACK_B, 1.1, list(verdicts), 82,
                                  controls=CONTROLS), None
    return continuous


def test_a_gate_whose_only_flags_are_controls_passes(capsys):
    # numpy's multiply, one numpy on both stacks, flagged in both passes (as two of its
    # cases were on the EPYC VM, 2026-12-07), and nothing else: asv continuous exits 1,
    # the gate 0, and says why.
    code, alert, _ = judge_twice(with_controls((1, [NUMPY_2X2, FAST]), (1, [NUMPY_2X2])),
                                 ["-b", "time_"])
    assert code == 0 and alert.control_changes == [NUMPY_2X2] and not alert.regressions
    # The first pass flagged only controls: no second pass (it could flag no regression).
    code, alert, _ = judge_twice(with_controls((1, [NUMPY_2X2])), ["-b", "time_"])
    assert code == 1 and alert.first_pass is None
    # ... and the gate's status sets asv's 1 apart, as with --no-confirm.
    assert exit_status_without_controls(code, alert) == 0
    out = capsys.readouterr().out
    assert "moved by up to x1.31 during the gate" in out and "flagged only controls" in out
    assert "x1.31" in alerts.markdown([alert])
    # A real slowdown beside it keeps the gate's 1, and the drift is still printed; a
    # failure keeps asv's 2.
    assert exit_status_without_controls(1, replace(alert, verdicts=[NUMPY_2X2, SLOW])) == 1
    assert "moved by up to x1.31" in capsys.readouterr().out
    assert exit_status_without_controls(2, alert) == 2
    assert exit_status_without_controls(1, None) == 1
    # asv's 1 from something the summary does not judge (a track_ benchmark a user's -b
    # picked), or beside a control that got faster: asv's 1 stands, nothing is said of
    # controls that did not slow down.
    assert exit_status_without_controls(1, replace(alert, verdicts=[])) == 1
    faster = replace(NUMPY_2X2, kind=alerts.FASTER, ratio=0.8)
    assert exit_status_without_controls(1, replace(alert, verdicts=[faster])) == 1
    assert "flagged only controls" not in capsys.readouterr().out


def test_a_failure_in_the_second_pass_is_asvs_exit_and_kept():
    # asv exits 2 where a benchmark failed: the gate says so, with what it saved, and
    # keeps the first pass's record.
    passes = Passes((1, [SLOW, FAST]), (2, [FAILED, FAST]))
    code, alert, _ = judge_twice(passes, ["-b", "time_"])
    assert code == 2 and alert.verdicts == [FAILED, FAST] and alert.first_pass == [SLOW, FAST]


def test_where_asv_would_select_other_cases_the_first_pass_decides(capsys):
    # Measuring other cases again would leave the flagged ones' first-pass results in the
    # files, to be "confirmed" by themselves.
    passes = Passes((1, [SLOW, FAST]))
    code, alert, note = judge_twice(passes, ["-b", "time_"],
                                    selected_cases=lambda patterns: {SLOW.case})
    assert len(passes.calls) == 1 and code == 1 and alert.verdicts == [SLOW, FAST]
    assert "could not be selected alone for a second pass: judged on the first" in note
    assert "warning: the flagged cases could not be selected" in capsys.readouterr().err


@pytest.mark.parametrize("answer,confirm", [
    ((0, []), True),  # nothing flagged: nothing to measure again
    ((2, [FAILED, SLOW]), True),  # a benchmark failed: asv compared nothing
    ((1, [SLOW]), False),  # --no-confirm
])
def test_one_pass_where_there_is_nothing_to_measure_again(answer, confirm):
    passes = Passes(answer)
    code, alert, _ = judge_twice(passes, ["-b", "time_"], confirm)
    assert len(passes.calls) == 1 and code == answer[0]
    assert alert.first_pass is None and "first_pass" not in alert.as_data()
