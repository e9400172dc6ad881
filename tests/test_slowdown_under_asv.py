"""scripts/slowdown_under_asv.py: rounds are split evenly or not at all, and a ratio is
the slowed side's median over the default side's, whole and round by round."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("slowdown_under_asv",
                                              ROOT / "scripts" / "slowdown_under_asv.py")
slowdown = importlib.util.module_from_spec(spec)
spec.loader.exec_module(slowdown)


def test_samples_split_into_equal_rounds_in_order():
    assert slowdown.round_medians([1.0, 2.0, 3.0, 10.0, 20.0, 30.0], 2) == [2.0, 20.0]
    # Rounds of unequal length cannot be told apart: none rather than wrong ones.
    assert slowdown.round_medians([1.0, 2.0, 3.0], 2) == []
    assert slowdown.round_medians([], 2) == []


def test_a_ratio_is_slowed_over_default_whole_and_per_round():
    default = [1.0, 1.0, 2.0, 2.0]
    slowed = [1.5, 1.5, 2.0, 2.0]
    whole, each = slowdown.ratios(default, slowed, 2)
    assert whole == pytest.approx(1.75 / 1.5)
    assert each == [pytest.approx(1.5), pytest.approx(1.0)]


def test_asv_is_asked_for_exactly_the_cases_the_engine_times():
    import re

    from tfgpubench.alerts import case_patterns

    case = (2048, "float32", "xla")
    name = slowdown.case_name(case)
    assert name == "multiply.Multiply.time_multiply('cpu', 2048, 'float32', 'xla')"
    (pattern,) = case_patterns([name])
    others = [slowdown.case_name((20480, "float32", "xla")),
              slowdown.case_name((2048, "int32", "xla")), name[:-1] + ", 'extra')"]
    assert re.search(pattern, name) and not any(re.search(pattern, n) for n in others)
