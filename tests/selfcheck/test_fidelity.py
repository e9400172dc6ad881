"""Fidelity: the suite's value of each case against the bare-loop reference."""

import pytest

from tfgpubench.selfcheck import fidelity
from tfgpubench.selfcheck.reference import ReferenceWorker, measure

EAGER = "multiply.Multiply.time_multiply('cpu', 2, 'int32', 'eager')"


def test_each_case_is_compared_with_the_reference_loops_of_every_pass_pooled():
    # Samples as a shared VM records them: mostly fast, a round at the slow level.
    samples = [10.0e-6] * 9 + [10.2e-6] * 6 + [15e-6] * 5
    suite = {EAGER: {"value": 10.4e-6, "samples": samples},
             "multiply.Multiply.time_multiply('cpu', 2, 'int32', 'xla')":
                 {"value": float("nan"), "samples": None}}
    eager, xla = (2, "int32", "eager"), (2, "int32", "xla")
    # Three passes, the machine slower in the middle one; a case one pass could not time
    # (1000 eager) and a skipped case (xla, NaN in asv) are left out.
    passes = [{eager: [10.0e-6] * 5 + [10.4e-6] * 5, xla: [1e-4], (1000, "int32", "eager"): [1]},
              {eager: [10.4e-6] * 10, xla: [1e-4]},
              {eager: [10.0e-6] * 4 + [10.4e-6] * 6, xla: [1e-4]}]
    (row,) = fidelity.compare(suite, passes)
    assert row["bare"] == pytest.approx(10.4e-6) and row["ratio"] == pytest.approx(1.0)
    assert row["drift"] == pytest.approx(10.4 / 10.2) and row["ok"]
    # The fast ratio: the samples' 10th percentile over the pooled loops' one.
    assert row["suite_fast"] == pytest.approx(10e-6) and row["bare_fast"] == pytest.approx(10e-6)
    assert row["fast_ratio"] == pytest.approx(1.0) and row["fast_ok"]
    slower = {**suite, EAGER: {"value": 11e-6, "samples": [s * 1.1 for s in samples]}}
    (row,) = fidelity.compare(slower, passes)
    assert not row["ok"] and not row["fast_ok"]


def test_without_recorded_samples_there_is_no_fast_ratio():
    suite = {EAGER: {"value": 10e-6, "samples": None}}
    (row,) = fidelity.compare(suite, [{(2, "int32", "eager"): [10e-6, 9e-6, 11e-6]}])
    assert row["ok"] and row["fast_ratio"] is None and not row["fast_ok"]
    assert fidelity.compare(suite, []) == []


def test_the_grid_of_cases_is_every_size_dtype_and_mode():
    assert len(fidelity.cases([2, 1000])) == 16


def test_the_reference_times_each_mode_with_plain_tensorflow():
    pytest.importorskip("tensorflow")
    with ReferenceWorker() as worker:
        assert worker.ready["ready"]
        for mode in ("eager", "function", "xla", "graph_loop"):
            answer = worker.ask(2, "float32", mode)
            assert answer is not None and 1e-8 < answer["fast"] <= answer["median"] < 1e-2, mode
        assert worker.ask(2, "float32", "no-such-mode") is None


def test_a_reference_pass_leaves_out_what_the_bare_loop_cannot_run():
    pytest.importorskip("tensorflow")
    with ReferenceWorker() as worker:
        got = fidelity.reference_pass(worker, [(2, "int32", "eager"), (2, "int32", "no-such")],
                                      seconds=0.05)
    assert list(got) == [(2, "int32", "eager")] and len(got[(2, "int32", "eager")]) >= 2


def test_two_environments_are_asked_in_turn():
    pytest.importorskip("tensorflow")
    envs = {"default": {}, "slowed": {"TF_NUM_INTRAOP_THREADS": "1"}}
    out = measure([(2, "int32", "eager")], envs, passes=2)
    assert set(out[(2, "int32", "eager")]) == {"default", "slowed"}
    assert set(out[(2, "int32", "eager")]["slowed"]) == {"median", "fast"}
