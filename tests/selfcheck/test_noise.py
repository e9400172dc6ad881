"""The noise part's account of the machine's drift over an A/A's rounds."""

from tfgpubench.selfcheck import noise


class FixtureScratch:
    """The scratch of a run: its result files and the rounds it ran."""

    def __init__(self, raw, rounds_run):
        self.raw, self.rounds_run = raw, rounds_run

    def result_file(self, commit):
        return self.raw[commit]


def test_the_drift_is_printed_in_the_order_the_rounds_ran_with_its_lean(quiet_aa, capsys):
    scratch = FixtureScratch(quiet_aa.raw, quiet_aa.rounds_run)
    figures = noise.report_drift(scratch, "A", "B", factor=1.1)
    out = capsys.readouterr().out
    assert "in the order they ran: A1 x1.72  B1 x1.36  B2 x1.03" in out and "A4 x0.98" in out
    assert "A ran both the first and the last round" in out and "reads as B faster" in out
    assert [step[:2] for step in figures["order"]] == [list(s) for s in quiet_aa.order]
    assert 0.9 < figures["lean"] < 0.95
    # Where the noise sits: within a round small, between rounds past the factor.
    assert "within one round spread 5.4%" in out and "differ by x1.66" in out
    assert "a flag here can be the rounds', not the code's" in out
    assert figures["between_rounds"]["median"] > 1.1 > 1 + figures["within_round_spread"]["median"]


def test_a_lean_under_half_the_factor_gets_no_note(quiet_aa, capsys):
    # The same rounds judged at factor 1.3: a x0.92 lean is under half its margin.
    noise.report_drift(FixtureScratch(quiet_aa.raw, quiet_aa.rounds_run), "A", "B", 1.3)
    out = capsys.readouterr().out
    assert "puts B at x0.92 of A" in out and "first and the last" not in out


def test_without_a_case_measured_in_every_round_it_says_so(quiet_aa, capsys):
    assert noise.report_drift(FixtureScratch(quiet_aa.raw, []), "A", "B", 1.1) == {}
    assert "no case was measured in every round" in capsys.readouterr().out


# --- the gate's second pass, in the self-check ---------------------------------------------

class ComparingScratch:
    """A scratch whose `asv compare` answers are recorded outputs, and whose interleaved
    runs are recorded, not run."""

    def __init__(self, compare_outputs):
        self.outputs, self.runs = compare_outputs, []

    def compare(self, before, after, factor):
        # One output for any factor, or {factor: output} where the factor matters.
        answer = self.outputs[(before, after)]
        return answer if isinstance(answer, str) else answer[factor]

    def run_interleaved(self, commits, rounds, bench=None, envs=None, progress=None):
        self.runs.append((commits, rounds, bench, envs))


def test_what_the_first_pass_flags_is_measured_again_under_two_more_commits():
    import re

    from tfgpubench.selfcheck import stats

    from .conftest import FIXTURES

    # A real comparison: the large cpu cases, default against TF_NUM_INTRAOP_THREADS=1.
    text = (FIXTURES / "compare_intraop1_vs_default.txt").read_text()
    scratch = ComparingScratch({("A", "B"): text})
    cases = noise.measure_again(scratch, ("A", "B"), ("A2", "B2"), 4, 1.1,
                                envs={"B": {"TF_NUM_INTRAOP_THREADS": "1"}})
    flagged = noise.time_flags(stats.flagged(stats.parse_compare(text)))
    assert cases == flagged and len(cases) == 18
    ((commits, rounds, patterns, envs),) = scratch.runs
    assert commits == ["A2", "B2"] and rounds == 4
    # Each commit of the second pass runs as its counterpart of the first did.
    assert envs == {"A2": None, "B2": {"TF_NUM_INTRAOP_THREADS": "1"}}
    # asv selects exactly the flagged cases (it matches -b against "name(param, ...)").
    every_case = [r["name"] for r in stats.parse_compare(text)]
    assert {n for n in every_case if any(re.search(p, n) for p in patterns)} == set(cases)


def test_nothing_flagged_is_nothing_measured_again():
    from .conftest import FIXTURES

    scratch = ComparingScratch(
        {("A", "B"): (FIXTURES / "compare_full_same_stack.txt").read_text()})
    assert noise.measure_again(scratch, ("A", "B"), ("A2", "B2"), 4, 1.1) == {}
    assert scratch.runs == []


def test_the_gates_verdict_is_what_both_passes_flagged_the_same_way():
    from tfgpubench.selfcheck import stats

    first = {"c1": "+", "c2": "-", "c3": "+"}
    # c1 flagged again, c2 not, c3 again but the other way; c4 was never flagged first.
    second = {"c1": "+", "c3": "-", "c4": "+"}
    assert stats.second_pass_verdict(first, second) == {"c1": "+"}
    assert noise.report_second_pass(None, {}, {}, ("A2", "B2"), 1.1) == {}
    # Without a second pass the first decides.
    assert noise.report_second_pass(None, first, first, (), 1.1) == first


def test_a_real_a_a_keeps_only_what_both_passes_flagged_the_same_way(capsys):
    from .conftest import FIXTURES

    # selfcheck's quiet A/A on the second VM, 2026-12-07 06:23 UTC: the first pass, then
    # its second over the 11 time cases the first flagged.
    scratch = ComparingScratch({
        ("A", "B"): (FIXTURES / "compare_quiet_aa_first_pass.txt").read_text(),
        ("A2", "B2"): (FIXTURES / "compare_quiet_aa_second_pass.txt").read_text()})
    first = noise.time_flags(noise.flags_of(scratch, "A", "B", 1.1)[1])
    assert len(first) == 11
    # Read at either factor, that pass flags the same cases (the recording is at 1.1).
    verdict = noise.report_second_pass(scratch, first, first, ("A2", "B2"), 1.1)
    # 2048x2048 int32 graph_loop read faster in the first pass and slower in the second:
    # it counts for neither.
    graph_loop = "multiply.Multiply.time_multiply('cpu', 2048, 'int32', 'graph_loop')"
    assert first[graph_loop] == "-"
    assert verdict == {"multiply.Multiply.time_multiply('cpu', 32, 'int32', 'function')": "-"}
    out = capsys.readouterr().out
    assert ("measured again, as the gate does: the 11 case(s) past x1.049 (11 past x1.1); "
            "1 flagged again past x1.1") in out
    assert "x0.81  multiply.Multiply.time_multiply('cpu', 32, 'int32', 'function')" in out


def test_a_case_past_the_screening_factor_is_measured_again_and_judged_at_the_factor(capsys):
    import re

    from tfgpubench import alerts
    from tfgpubench.selfcheck import stats

    from .conftest import FIXTURES

    # selfcheck sensitivity on the second VM, 2026-12-07 11:06 UTC (kept scratch, asv
    # compare run again on it): the first pass at 1.1 and at its square root, then the
    # second pass, at 1.1, over the 17 cases the first flagged then.
    screen = alerts.screening_factor(1.1)
    first_pass = {1.1: (FIXTURES / "compare_sensitivity43_first_pass.txt").read_text(),
                  screen: (FIXTURES / "compare_sensitivity43_first_pass_screened.txt")
                  .read_text()}
    scratch = ComparingScratch({
        ("A", "B"): first_pass,
        ("A2", "B2"): {1.1: (FIXTURES / "compare_sensitivity43_second_pass.txt").read_text()}})
    at_factor = noise.time_flags(noise.flags_of(scratch, "A", "B", 1.1)[1])
    screened = noise.screened(scratch, ("A", "B"), 1.1)
    # 4096x4096 int32 eager read x1.09, significant by asv's test: under the factor, past
    # its square root. It is measured again with the 17 the factor flags.
    eager = "multiply.Multiply.time_multiply('cpu', 4096, 'int32', 'eager')"
    assert len(at_factor) == 17 and eager not in at_factor
    assert screened == dict(at_factor, **{eager: "+"})
    cases = noise.measure_again(scratch, ("A", "B"), ("A2", "B2"), 4, 1.1)
    assert cases == screened
    every_case = [r["name"] for r in stats.parse_compare(first_pass[1.1])]
    ((_, _, patterns, _),) = scratch.runs
    assert {n for n in every_case if any(re.search(p, n) for p in patterns)} == set(cases)
    # The verdict: what the second pass flags past the factor, the same way as the screen.
    # That run measured the 17 again (16 flagged again), not 4096x4096 int32 eager: here
    # its second pass is made to find that case x1.17 slower, and the verdict holds it.
    scratch.outputs["A2", "B2"] = {1.1: second_pass_flagging(eager, "+", 1.17)}
    verdict = noise.report_second_pass(scratch, at_factor, screened, ("A2", "B2"), 1.1)
    assert len(verdict) == 17 and verdict[eager] == "+"
    assert set(verdict) - {eager} <= set(at_factor)
    assert ("the 18 case(s) past x1.049 (17 past x1.1); 17 flagged again past x1.1"
            in capsys.readouterr().out)


def second_pass_flagging(case, mark, ratio):
    """The real second pass of 2026-12-07 11:06 (compare_sensitivity43_second_pass.txt),
    with `case`, which it did not measure, edited in as flagged `mark` at `ratio`."""
    from .conftest import FIXTURES

    text = (FIXTURES / "compare_sensitivity43_second_pass.txt").read_text()
    lines = text.splitlines()
    (at,) = [i for i, line in enumerate(lines) if line.rstrip(" |").endswith(case)]
    lines[at] = f"| {mark}        | 4.80±0.4ms | {4.80 * ratio:.2f}±0.2ms | {ratio} | {case} |"
    return "\n".join(lines) + "\n"


def test_a_pair_that_flags_nothing_passes_without_a_second_pass(quiet_aa, capsys):
    import types

    from .conftest import FIXTURES

    class Run(FixtureScratch, ComparingScratch):
        """A real A/A's result files and rounds, and a real compare flagging no time case;
        the second pass's commits were never measured (nothing to measure again)."""

        def __init__(self):
            FixtureScratch.__init__(self, quiet_aa.raw, quiet_aa.rounds_run)
            ComparingScratch.__init__(self, {("A", "B"): (
                FIXTURES / "compare_full_same_stack.txt").read_text()})

    figures = {}
    args = types.SimpleNamespace(factor=1.1)
    # Nothing screened (measure_again's answer where nothing is flagged): none measured again.
    assert noise.run_part(args, Run(), {"quiet": ("A", "B", "A2", "B2")}, {"quiet": {}},
                          figures) is True
    assert figures["noise"]["quiet"]["time_flagged"] == 0
    assert figures["noise"]["spread"]["n"] > 0
    assert "the gate's verdict: 0 time case(s) flagged  target 0  PASS" in capsys.readouterr().out
