"""The self-check's pure functions, on outputs captured from real asv runs here."""

import json
import math
from pathlib import Path

import pytest

from tfgpubench.selfcheck import stats

FIXTURES = Path(__file__).parent / "fixtures"


def load(name):
    return json.loads((FIXTURES / name).read_text())


def test_percentile_matches_numpy_linear_interpolation():
    values = [4.0, 1.0, 3.0, 2.0]
    assert stats.percentile(values, 0.25) == pytest.approx(1.75)
    assert stats.median(values) == pytest.approx(2.5)
    assert math.isnan(stats.percentile([], 0.5))


def test_within_is_symmetric_around_one():
    assert stats.within(1.049) and stats.within(0.951)
    assert not stats.within(1.06) and not stats.within(0.94)


def test_unroll_results_names_cases_as_asv_compare_prints_them():
    cases = stats.unroll_results(load("result_full_forkserver.json"))
    case = cases["multiply.Multiply.time_multiply('cpu', 2, 'int32', 'eager')"]
    assert case["value"] == pytest.approx(1.6629505000365086e-05)
    assert case["q25"] == pytest.approx(1.646e-05) and case["q75"] == pytest.approx(1.6944e-05)
    assert case["repeat"] == 10
    # 2 devices x 8 sizes x 2 dtypes x 4 modes; gpu cases skipped (nan) on this machine.
    multiply = [c for c in cases.values() if c["benchmark"] == "multiply.Multiply.time_multiply"]
    assert len(multiply) == 128
    assert math.isnan(cases["multiply.Multiply.time_multiply('gpu', 2, 'int32', 'eager')"]["value"])
    assert cases["seed.SeedScript.track_gpu_calls_on_a_gpu"]["value"] == 0.0


def test_spreads_cover_measured_time_cases_only():
    spreads = stats.spreads(stats.unroll_results(load("result_full_forkserver.json")))
    assert len(spreads) == 64 + 2  # cpu Multiply cases and the two cpu Wait cases
    assert all(name.split("(")[0].rsplit(".", 1)[-1].startswith("time_") for name in spreads)
    first = spreads["multiply.Multiply.time_multiply('cpu', 2, 'int32', 'eager')"]
    assert first == pytest.approx((1.6944e-05 - 1.646e-05) / 1.6629505000365086e-05)
    d = stats.distribution(spreads.values())
    assert d["n"] == 66 and d["min"] <= d["median"] <= d["p90"] <= d["max"]


def test_durations_and_process_counts_from_a_full_run():
    durations = stats.benchmark_durations(load("result_full_forkserver.json"))
    assert durations["multiply.Multiply.time_multiply"] == pytest.approx(35.17)
    benchmarks = load("benchmarks_full.json")
    # time benchmarks: 128 Multiply + 4 Wait combinations, 2 rounds each; track benchmarks
    # (64 Speedup, 24 Bandwidth, 2 NumpyScale, 2 SeedScript) one round.
    spawn = stats.process_count(benchmarks, "spawn")
    assert spawn == {"benchmark_processes": 2 * 132 + 92, "fresh_interpreters": 357}
    assert stats.process_count(benchmarks, "forkserver")["fresh_interpreters"] == 2


def test_parse_compare_of_two_runs_of_the_same_stack():
    rows = stats.parse_compare((FIXTURES / "compare_wait_same_stack.txt").read_text())
    assert [r["name"] for r in rows] == [
        "wait.Wait.time_wait('cpu', 'float32')",
        "wait.Wait.time_wait('cpu', 'int32')",
        "wait.Wait.time_wait('gpu', 'float32')",
        "wait.Wait.time_wait('gpu', 'int32')",
    ]
    first = rows[0]
    assert first["section"] == "same" and first["mark"] == " "
    assert first["ratio"] == pytest.approx(0.55) and first["insignificant"]
    assert rows[2]["ratio"] is None
    # Past the factor on the median, but asv's statistics did not call it a change.
    assert stats.flagged(rows) == {}


def test_match_flags_separates_caught_missed_and_false_alarms():
    truth = {"a": 1.5, "b": 1.3, "c": 1.02, "d": 0.8, "e": 1.0}
    flags = {"a": "+", "c": "+", "d": "+"}
    match = stats.match_flags(truth, flags, factor=1.1)
    assert match == {"caught": ["a"], "missed": ["b"], "false": ["c"], "wrong_way": ["d"]}
    assert stats.changed({"x": 1.0 / 1.2, "y": math.nan}) == {"x"}


def test_settle_leaves_out_cases_whose_passes_fall_on_both_sides_of_the_factor():
    passes = {
        "slower": [1.3, 1.5, 1.2, 1.4],
        "faster": [0.8, 0.85, 0.7, 0.88],
        "same": [1.02, 0.95, 1.08, 0.99],
        "moved": [1.05, 1.15, 1.2, 1.3],  # within the factor once, past it after
        "flipped": [1.2, 0.8, 1.2, 0.8],
    }
    ratios, unsettled = stats.settle(passes, factor=1.1)
    assert unsettled == ["flipped", "moved"]
    assert ratios["slower"] == pytest.approx(1.35) and ratios["moved"] == pytest.approx(1.175)
    # Flagged or not, an unsettled case is neither a catch, a miss nor a false alarm.
    flags = {"slower": "+", "moved": "+", "same": "-"}
    match = stats.match_flags(ratios, flags, factor=1.1, unsettled=unsettled)
    assert match == {"caught": ["slower"], "missed": ["faster"], "false": ["same"],
                     "wrong_way": []}
    # A pass that could not say (nan) agrees with no other: unsettled, never "within".
    ratios, unsettled = stats.settle({"blank": [math.nan, 1.0, 1.0, 1.0]}, factor=1.1)
    assert unsettled == ["blank"] and ratios["blank"] == 1.0


def test_parse_compare_of_two_full_runs_flags_only_the_single_value_track_cases():
    # Two forkserver runs of the unchanged suite on this shared 2-core machine.
    rows = stats.parse_compare((FIXTURES / "compare_full_same_stack.txt").read_text())
    assert len(rows) == 224  # every case, gpu ones n/a
    assert sum(r["ratio"] is not None for r in rows) == 81
    assert sum(r["insignificant"] for r in rows) == 21
    flags = stats.flagged(rows)
    assert len(flags) == 10
    assert all(".track_effective_bandwidth(" in name for name in flags)
    worse = [r for r in rows if r["section"] == "worse"]
    assert [(r["mark"], r["ratio"]) for r in worse] == [("+", 1.31)]
    # Matched against "nothing really changed", every flag is a false alarm.
    assert stats.match_flags({}, flags)["false"] == sorted(flags)


def test_case_regex_selects_combinations_the_way_asv_run_b_does():
    import re

    regex = stats.case_regex("multiply.Multiply.time_multiply", "cpu", [1000, 4096])
    name = "multiply.Multiply.time_multiply({}, {}, 'float32', 'eager')"
    assert re.search(regex, name.format("'cpu'", 1000))
    assert re.search(regex, name.format("'cpu'", 4096))
    assert not re.search(regex, name.format("'cpu'", 2048))
    assert not re.search(regex, name.format("'gpu'", 1000))


def test_sensitivity_matching_on_a_real_intraop_threads_run():
    # Large cpu sizes rerun with TF_NUM_INTRAOP_THREADS=1, compared with asv against the
    # default; the truth is the bare-clock ratio measured by two workers asked in turn.
    truth = load("truth_intraop1_vs_default.json")["truth_ratios"]
    rows = stats.parse_compare((FIXTURES / "compare_intraop1_vs_default.txt").read_text())
    rows = [r for r in rows if r["name"].startswith("multiply.Multiply.time_multiply(")]
    match = stats.match_flags(truth, stats.flagged(rows))
    assert len(truth) == 24
    assert (len(match["caught"]), len(match["false"]), match["wrong_way"]) == (18, 0, [])
    # The misses sit just past the factor on the bare clock (x0.87-0.91).
    assert all(0.86 < truth[name] < 1 / 1.1 for name in match["missed"])
    assert len(match["missed"]) == 3


def test_split_rounds_gives_each_round_its_own_samples_in_run_order(quiet_aa):
    rounds = stats.split_rounds(quiet_aa.results, quiet_aa.rounds_run)
    assert [(c, n) for c, n, _ in rounds] == quiet_aa.order
    for commit in ("A", "B"):
        mine = [taken for c, _, taken in rounds if c == commit]
        for case, got in quiet_aa.results[commit].items():
            if ".time_" not in case or not got["samples"]:
                assert all(case not in taken for taken in mine)
                continue
            assert [len(taken[case]) for taken in mine] == [10, 10, 10, 10]
            assert [x for taken in mine for x in taken[case]] == got["samples"]


def test_round_drift_finds_the_slow_start_of_a_real_quiet_aa(quiet_aa):
    drift = stats.round_drift(quiet_aa.results, quiet_aa.rounds_run)
    assert [(c, n) for c, n, _ in drift] == quiet_aa.order
    ratio = {(c, n): r for c, n, r in drift}
    # The machine ran slow for the first two rounds, then steady within 10%.
    assert ratio["A", 1] > 1.5 and ratio["B", 1] > 1.2
    assert all(0.9 < r < 1.1 for key, r in ratio.items() if key[1] > 1)
    # A ran the slow first round: the drift alone puts B 5-10% below A, which is
    # where this A/A's 4 flags leaned (all four B faster).
    assert 0.9 < stats.drift_lean(drift, "A", "B") < 0.95


def test_round_drift_takes_each_round_its_own_samples_and_skips_cases_a_round_missed():
    case = {"benchmark": "m.M.time_x", "samples": [1.0, 1.0, 3.0, 3.0]}
    track = {"benchmark": "m.M.track_x", "samples": [9.0, 9.0, 1.0, 1.0]}
    late = {"benchmark": "m.M.time_y", "samples": [5.0]}
    results = {"A": {"c": case, "t": track, "late": late}}
    rounds = [("A", 1, {"c": 2, "t": 2}), ("A", 2, {"c": 4, "t": 4, "late": 1})]
    drift = stats.round_drift(results, rounds)
    assert drift == [("A", 1, pytest.approx(0.5)), ("A", 2, pytest.approx(1.5))]
    assert stats.round_drift(results, []) == []
    # A case whose last round failed: asv left it no samples; it drops out, no error.
    results["A"]["failed"] = {"benchmark": "m.M.time_z", "samples": None}
    rounds[0][2]["failed"] = 2
    assert stats.round_drift(results, rounds) == drift


def test_drift_lean_cancels_a_steady_drift_not_a_slow_first_round(quiet_aa):
    steady = [(c, n, 1.0 + 0.1 * i) for i, (c, n) in enumerate(quiet_aa.order)]
    assert stats.drift_lean(steady, "A", "B") == pytest.approx(1.0)
    slow_start = [(c, n, 1.8 if i == 0 else 1.0) for i, (c, n) in enumerate(quiet_aa.order)]
    assert stats.drift_lean(slow_start, "A", "B") == pytest.approx(4 / 4.8)


def test_round_spread_finds_the_noise_between_rounds_not_within_them(quiet_aa):
    # The third VM's quiet A/A: tight within a round, rounds apart by more than the factor.
    where = stats.round_spread(quiet_aa.results, quiet_aa.rounds_run)
    within, between = where["within"], where["between"]
    assert within["n"] == 82 * 8 and between["n"] == 82 * 2
    assert 0.04 < within["median"] < 0.07
    assert 1.5 < between["median"] < 1.8 and between["min"] > stats.FACTOR


def test_round_spread_takes_each_round_apart_and_skips_cases_a_round_missed():
    case = {"benchmark": "m.M.time_x", "samples": [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]}
    late = {"benchmark": "m.M.time_y", "samples": [5.0, 5.0]}
    results = {"A": {"c": case, "late": late}}
    rounds = [("A", 1, {"c": 3}), ("A", 2, {"c": 6, "late": 2})]
    where = stats.round_spread(results, rounds)
    # Three rounds' worth of samples, each without spread; only "c" was in both rounds.
    assert where["within"]["n"] == 3 and where["within"]["max"] == 0.0
    assert where["between"]["n"] == 1 and where["between"]["median"] == 2.0
