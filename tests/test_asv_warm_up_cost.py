"""scripts/asv_warm_up_cost.py: the two ways are told apart by the experiment's last
parameter, each case's ratio is of its own medians, the two orders are combined so the
order's effect cancels, and each round's first sample is held to its own round's median."""

import math
from pathlib import Path

import pytest

from tests.script_loader import load_script

ROOT = Path(__file__).resolve().parents[1]
cost = load_script("asv_warm_up_cost")

BENCH = cost.BENCHMARK


def test_the_ways_are_split_off_the_case_by_its_last_parameter():
    cases = {f"{BENCH}('cpu', 2, 'int32', 'eager', 'with')": [1.0],
             f"{BENCH}('cpu', 2, 'int32', 'eager', 'without')": [2.0],
             f"{BENCH}('cpu', 512, 'float32', 'xla', 'with')": [3.0]}
    assert cost.split_ways(cases) == {
        "with": {f"{BENCH}('cpu', 2, 'int32', 'eager')": [1.0],
                 f"{BENCH}('cpu', 512, 'float32', 'xla')": [3.0]},
        "without": {f"{BENCH}('cpu', 2, 'int32', 'eager')": [2.0]},
    }
    assert cost._small(f"{BENCH}('cpu', 256, 'int32', 'eager')")
    assert not cost._small(f"{BENCH}('cpu', 512, 'int32', 'eager')")


def test_a_case_is_divided_by_its_own_median_and_unmatched_cases_are_left_out():
    over = {"a": [2.0, 4.0, 6.0], "only over": [1.0]}
    under = {"a": [1.0, 3.0, 5.0], "only under": [1.0]}
    assert cost.median_ratios(over, under) == {"a": pytest.approx(4.0 / 3.0)}


def test_the_two_orders_combine_as_a_geometric_mean_so_an_order_effect_cancels():
    # Whichever way runs second reads 10 % faster: 0.9 in one order, 1/0.9 in the other.
    assert cost.geometric_means({"a": 0.9, "b": 1.2}, {"a": 1 / 0.9}) == {
        "a": pytest.approx(1.0)}
    assert math.isclose(cost.geometric_means({"a": 1.21}, {"a": 1.0})["a"], 1.1)


def test_the_experiment_module_is_multiply_with_the_warm_up_as_last_parameter(tmp_path):
    config = cost.suite_copy(tmp_path)
    module = config.parent / "benchmarks" / f"{cost.MODULE}.py"
    text = module.read_text()
    compile(text, str(module), "exec")
    assert "warmup_time = 0" in text and f"< {cost.ASV_WARM_UP_SECONDS}" in text
    assert (config.parent / "benchmarks" / "multiply.py").read_bytes() == (
        ROOT / "benchmarks" / "multiply.py").read_bytes()


def test_a_rounds_first_sample_is_held_to_its_own_rounds_median():
    samples = [2.0, 1.0, 1.0, 1.0, 3.0, 3.0]  # round 1: 2, 1, 1; round 2: 1, 3, 3
    assert cost.first_sample_ratios(samples, rounds=2) == [2.0, pytest.approx(1 / 3)]
    # Rounds of unequal length cannot be told apart: no ratio rather than a wrong one.
    assert cost.first_sample_ratios(samples[:5], rounds=2) == []


def test_the_summary_counts_the_ratios_within_five_percent():
    assert cost.summary([0.94, 1.0, 1.04, 1.2]) == (
        "median 1.020, range 0.940-1.200, 2 of 4 within ±5%")
    assert cost.summary([]) == "none"


def test_each_round_is_paired_with_the_same_round_of_the_other_way():
    # Two rounds of two samples each; a case one way lacks is left out, as is one whose
    # rounds cannot be told apart.
    over = {"a": [2.0, 2.0, 9.0, 9.0], "b": [1.0, 1.0, 1.0], "only over": [1.0, 1.0]}
    under = {"a": [1.0, 1.0, 3.0, 3.0], "b": [1.0, 1.0]}
    assert cost.round_ratios(over, under, rounds=2) == [("a", 2.0), ("a", 3.0)]


def test_the_median_comes_with_asvs_own_interval_which_narrows_with_more_pairs():
    few = [1.0, 1.1, 0.9, 1.05, 0.95]
    many = few * 40
    middle, (low, high) = cost.median_interval(few)
    assert middle == 1.0 and low <= 0.9 and high >= 1.1  # five values: min to max
    middle, (low, high) = cost.median_interval(many)
    assert middle == 1.0 and 0.95 <= low <= high <= 1.05
