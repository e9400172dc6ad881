"""The noise part's account of the machine's drift over an A/A's rounds."""

import json
from pathlib import Path

from tfgpubench.selfcheck import noise
from tfgpubench.selfcheck.stats import unroll_results

FIXTURES = Path(__file__).parent / "fixtures"
# A real quiet A/A (tests/selfcheck/test_stats.py: QUIET_AA), run A B B A A B B A.
FILES = {"A": "result_quiet_aa_first.json", "B": "result_quiet_aa_second.json"}
ORDER = [("A", 1), ("B", 1), ("B", 2), ("A", 2), ("A", 3), ("B", 3), ("B", 4), ("A", 4)]


class FixtureScratch:
    def __init__(self):
        self.results = {c: json.loads((FIXTURES / f).read_text()) for c, f in FILES.items()}
        # Each round took 10 samples of every case (40 after 4 rounds).
        measured = {c: [case for case, got in unroll_results(r).items() if got["samples"]]
                    for c, r in self.results.items()}
        self.rounds_run = [(c, n, dict.fromkeys(measured[c], 10 * n)) for c, n in ORDER]

    def result_file(self, commit):
        return self.results[commit]


def test_the_drift_is_printed_in_the_order_the_rounds_ran_with_its_lean(capsys):
    figures = noise.report_drift(FixtureScratch(), "A", "B", factor=1.1)
    out = capsys.readouterr().out
    assert "in the order they ran: A1 x1.7" in out and "B4 x0.9" in out
    assert "A ran first and last" in out
    assert [step[:2] for step in figures["order"]] == [list(step) for step in ORDER]
    assert 0.9 < figures["lean"] < 0.95
