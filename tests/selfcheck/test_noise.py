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
