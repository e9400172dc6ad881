"""Fidelity: the suite's value of each case against the bare-loop reference."""

import pytest

from tfgpubench.selfcheck import fidelity
from tfgpubench.selfcheck.reference import ReferenceWorker, measure


def test_each_case_is_compared_with_the_mean_of_the_two_reference_passes():
    suite = {"multiply.Multiply.time_multiply('cpu', 2, 'int32', 'eager')": 10.4e-6,
             "multiply.Multiply.time_multiply('cpu', 2, 'int32', 'xla')": float("nan")}
    before = {(2, "int32", "eager"): 10e-6, (2, "int32", "xla"): 1e-4}
    after = {(2, "int32", "eager"): 10.4e-6, (2, "int32", "xla"): 1e-4}
    (row,) = fidelity.compare(suite, before, after)  # a skipped (NaN) case is left out
    assert row["bare"] == pytest.approx(10.2e-6) and row["ratio"] == pytest.approx(10.4 / 10.2)
    assert row["drift"] == pytest.approx(1.04) and row["ok"]
    assert not fidelity.compare({**suite, next(iter(suite)): 11e-6}, before, after)[0]["ok"]


def test_the_grid_of_cases_is_every_size_dtype_and_mode():
    assert len(fidelity.cases([2, 1000])) == 16


def test_the_reference_times_each_mode_with_plain_tensorflow():
    pytest.importorskip("tensorflow")
    with ReferenceWorker() as worker:
        assert worker.ready["ready"]
        for mode in ("eager", "function", "xla", "graph_loop"):
            seconds = worker.ask(2, "float32", mode)
            assert seconds is not None and 1e-8 < seconds < 1e-2, mode
        assert worker.ask(2, "float32", "no-such-mode") is None


def test_two_environments_are_asked_in_turn():
    pytest.importorskip("tensorflow")
    envs = {"default": {}, "slowed": {"TF_NUM_INTRAOP_THREADS": "1"}}
    out = measure([(2, "int32", "eager")], envs, passes=2)
    assert set(out[(2, "int32", "eager")]) == {"default", "slowed"}
