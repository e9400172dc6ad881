"""scripts/slowdown_under_asv.py: a ratio is the slowed side's median over the default
side's, of every sample and round by round, and asv is asked for exactly the cases the
engine times."""

import pytest

from tests.script_loader import load_script

slowdown = load_script("slowdown_under_asv")


def test_a_ratio_is_slowed_over_default_of_every_sample_and_of_each_round():
    # Rounds of unequal length, as asv takes them (5-10 samples a round).
    default = [[1.0, 1.0, 1.0], [2.0, 2.0]]
    slowed = [[1.5], [2.0, 2.0, 2.0, 2.0]]
    whole, each = slowdown.ratios(default, slowed)
    assert whole == pytest.approx(2.0 / 1.0)
    assert each == [pytest.approx(1.5), pytest.approx(1.0)]
    # A round one side has no samples of (a case that failed there) is left out.
    assert slowdown.ratios([[1.0], [], [2.0]], [[2.0], [9.0], [3.0]])[1] == [
        pytest.approx(2.0), pytest.approx(1.5)]


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
