"""The sensitivity part's verdict: the gate's, after its second pass, against the truth
of bare loops; from the compare outputs and bare-loop ratios of one real run."""

import json
import types

from tfgpubench.names import MULTIPLY, case_id
from tfgpubench.selfcheck import sensitivity

from .conftest import FIXTURES
from .test_noise import ComparingScratch

# selfcheck on the second VM, 2026-12-07 06:23-06:48 UTC: 1000x1000 to 4096x4096 cpu cases,
# default against TF_NUM_INTRAOP_THREADS=1; the first pass, its second over the 21 cases
# the first flagged, and the bare loops' ratios of the same run.
FIRST = (FIXTURES / "compare_sensitivity_first_pass.txt").read_text()
SECOND = (FIXTURES / "compare_sensitivity_second_pass.txt").read_text()
TRUTH = json.loads((FIXTURES / "truth_sensitivity_second_pass.json").read_text())


def bare_loops(wanted, envs, passes, progress):
    """What reference.measure answered in that run, as its ratio of medians."""
    ratios = TRUTH["truth_ratios"]
    return {case: {"default": {"median": 1.0},
                   "slowed": {"median": ratios[case_id(MULTIPLY, map(repr, ("cpu", *case)))]}}
            for case in wanted}


def test_the_verdict_is_the_gates_after_its_second_pass(monkeypatch, capsys):
    monkeypatch.setattr(sensitivity, "measure", bare_loops)
    scratch = ComparingScratch({("A", "B"): FIRST, ("A2", "B2"): SECOND})
    args = types.SimpleNamespace(slow_env=TRUTH["env"], sizes="1000,2048,4096", factor=1.1)
    figures = {}
    passed = sensitivity.run_part(args, scratch, "A", "B", 4, figures, again=("A2", "B2"))
    got = figures["sensitivity"]
    # Both passes ran interleaved; the second over the first's flagged cases only, slowed
    # on the side that was slowed.
    (first_run, second_run) = scratch.runs
    assert first_run[0] == ["A", "B"] and second_run[0] == ["A2", "B2"]
    assert second_run[3] == {"A2": None, "B2": {"TF_NUM_INTRAOP_THREADS": "1"}}
    assert len(got["flagged_first_pass"]) == 21 and len(got["flagged"]) == 19
    assert set(got["flagged"]) <= set(got["flagged_first_pass"])
    assert {k: len(v) for k, v in got["match"].items()} == {
        "caught": 17, "missed": 3, "false": 2, "wrong_way": 0}
    assert passed is False
    out = capsys.readouterr().out
    assert "the first pass flagged 21; measured again, as the gate does, 19 of them" in out
    # A case not measured again keeps its first pass's ratio in the printout.
    missed = next(line for line in out.splitlines()
                  if "missed" in line and "1000, 'float32', 'function'" in line)
    assert "bare x0.87, asv x1.01" in missed
