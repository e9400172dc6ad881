"""A real quiet A/A, shared by the tests of the noise part's drift account."""

import json
from pathlib import Path

import pytest

from tfgpubench.selfcheck.stats import unroll_results

FIXTURES = Path(__file__).parent / "fixtures"


class QuietAA:
    """The two commits of a quiet A/A on a 2-core Xeon VM (105 MiB L3), 2026-12-03: the
    same stack, 4 interleaved rounds, A B B A A B B A. Every measured case held 40
    samples after the 4 rounds, so each round took repeat's maximum, 10."""

    files = {"A": "result_quiet_aa_first.json", "B": "result_quiet_aa_second.json"}
    order = [("A", 1), ("B", 1), ("B", 2), ("A", 2), ("A", 3), ("B", 3), ("B", 4), ("A", 4)]

    def __init__(self):
        self.raw = {c: json.loads((FIXTURES / f).read_text()) for c, f in self.files.items()}
        self.results = {c: unroll_results(raw) for c, raw in self.raw.items()}
        # Scratch.rounds_run of that run.
        self.rounds_run = [
            (c, n, {case: 10 * n for case, got in self.results[c].items() if got["samples"]})
            for c, n in self.order]


@pytest.fixture(scope="session")
def quiet_aa():
    return QuietAA()
