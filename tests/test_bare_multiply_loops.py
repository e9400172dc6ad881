"""scripts/bare_multiply_loops.py: how it calibrates and what it writes down."""

import json
import sys

import pytest

from tests.script_loader import load_script

bare = load_script("bare_multiply_loops")


class FakeClock:
    """perf_counter for a run_ops whose ops take `per_op` seconds each, exactly."""

    def __init__(self, per_op):
        self.now, self.per_op, self.calls = 0.0, per_op, []

    def perf_counter(self):
        return self.now

    def run_ops(self, n):
        self.calls.append(n)
        self.now += n * self.per_op


def test_loops_double_until_they_last_the_minimum_then_time_the_same_count(monkeypatch):
    clock = FakeClock(3e-6)
    monkeypatch.setattr(bare.time, "perf_counter", clock.perf_counter)
    median, fastest = bare.per_op_seconds(clock.run_ops, loops=5, min_seconds=0.01)
    assert median == pytest.approx(3e-6) and fastest == pytest.approx(3e-6)
    # 4096 ops of 3 us: the first count whose loop lasts 10 ms; then 5 timed loops of it.
    assert clock.calls == [2 ** k for k in range(13)] + [4096] * 5


def test_the_json_says_what_ran_and_under_which_malloc(monkeypatch, tmp_path):
    pytest.importorskip("torch")
    monkeypatch.setenv("MALLOC_ARENA_MAX", "1")
    out = tmp_path / "bare.json"
    assert bare.main(["--json", str(out), "--sizes", "2"]) == 0
    data = json.loads(out.read_text())
    assert data["malloc"] == {"MALLOC_ARENA_MAX": "1"}
    assert "torch" in data["installed"] and data["python"] == sys.version.split()[0]
    cases = {(c["framework"], c["device"], c["dtype"], c["mode"]) for c in data["cases"]}
    assert ("PyTorch", "cpu", "float32", "eager") in cases
    assert all(c["size"] == 2 and 0 < c["min"] <= c["median"] for c in data["cases"])
