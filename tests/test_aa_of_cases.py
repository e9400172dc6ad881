"""scripts/aa_of_cases.py: each pair's row is B over A and A's spread, for the cases both
commits measured; the default cases are the Wait cases and their 2x2 control."""

import pytest

from tests.script_loader import load_script

aa = load_script("aa_of_cases")


def case(value, q25, q75):
    return {"value": value, "q25": q25, "q75": q75}


def test_a_row_is_b_over_a_and_a_spread_over_its_median():
    wait = "wait.Wait.time_wait('cpu', 'int32')"
    row = aa.pair_row({wait: case(20e-6, 19e-6, 21e-6)}, {wait: case(25e-6, 24e-6, 30e-6)})
    assert row[wait]["ratio"] == pytest.approx(1.25)
    assert row[wait]["iqr"] == pytest.approx(0.10)
    assert aa.describe(wait, row[wait]) == (
        "Wait.time_wait('cpu', 'int32') 20.0/25.0 us x1.250 IQR 10.0%")


def test_a_case_one_commit_did_not_measure_is_left_out():
    measured, skipped, nan = "a.A.time_a()", "b.B.time_b()", "c.C.time_c()"
    row = aa.pair_row({measured: case(1.0, 1.0, 1.0), skipped: case(None, None, None),
                       nan: case(float("nan"), None, None)},
                      {measured: case(1.0, 1.0, 1.0), skipped: case(2.0, 2.0, 2.0),
                       nan: case(2.0, 2.0, 2.0)})
    assert set(row) == {measured}


def test_the_default_cases_are_the_cpu_waits_and_the_2x2_eager_control():
    assert [c for c in aa.CASES if c.startswith("wait.")] == [
        "wait.Wait.time_wait('cpu', 'int32')", "wait.Wait.time_wait('cpu', 'float32')"]
    assert all("'cpu', 2, " in c and "'eager'" in c for c in aa.CASES if "Multiply" in c)
