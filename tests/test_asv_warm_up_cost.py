"""scripts/asv_warm_up_cost.py: the two ways alternate A B B A, medians are pooled over a
way's runs before they are divided, and each round's first sample is held to its own
round's median."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("asv_warm_up_cost",
                                              ROOT / "scripts" / "asv_warm_up_cost.py")
cost = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cost)


def test_the_ways_alternate_so_each_comes_first_and_last_alike():
    ways = cost.order(2)
    assert ways == [cost.WITH, cost.WITHOUT, cost.WITHOUT, cost.WITH] * 2
    assert ways.count(cost.WITH) == ways.count(cost.WITHOUT) == 4
    assert cost.ATTRIBUTES[cost.WITHOUT] == ["--attribute", "warmup_time=0"]
    assert cost.order(1, without_first=True) == [cost.WITHOUT, cost.WITH, cost.WITH,
                                                 cost.WITHOUT]


def test_medians_pool_every_run_of_a_way_then_divide():
    without = [{"a": [2.0, 4.0]}, {"a": [6.0], "only here": [1.0]}]
    with_ = [{"a": [1.0, 3.0, 5.0]}]
    # Pooled without: 2, 4, 6 -> 4; with: 1, 3, 5 -> 3. Not the mean of per-run ratios.
    assert cost.ratios(without, with_) == {"a": pytest.approx(4.0 / 3.0)}


def test_a_rounds_first_sample_is_held_to_its_own_rounds_median():
    samples = [2.0, 1.0, 1.0, 1.0, 3.0, 3.0]  # round 1: 2, 1, 1; round 2: 1, 3, 3
    assert cost.first_sample_ratios(samples, rounds=2) == [2.0, pytest.approx(1 / 3)]
    # Rounds of unequal length cannot be told apart: no ratio rather than a wrong one.
    assert cost.first_sample_ratios(samples[:5], rounds=2) == []


def test_the_summary_counts_the_ratios_within_five_percent():
    assert cost.summary([0.94, 1.0, 1.04, 1.2]) == (
        "median 1.020, range 0.940-1.200, 2 of 4 within ±5%")
    assert cost.summary([]) == "none"
