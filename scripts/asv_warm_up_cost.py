"""What asv's own warm-up costs `Multiply.time_multiply`, and what it changes.

asv runs `warmup_time` seconds of untimed samples before each round's first (0.1 s by
default on CPython), though every sample of the suite's Multiply warms up in the engine
too (benchmarks/grid.py's warm_up_parts). Is asv's needed? This script measures both,
side by side: full `asv run`s of Multiply.time_multiply in one scratch setup (the
self-check's, forkserver), asv's default warm-up and `--attribute warmup_time=0`
alternated A B B A (`--pairs` times), and prints:

  - each run's wall time and asv's duration of the benchmark;
  - per case, the median of the runs without over the median of the runs with, beside
    the same ratio between the runs with (this machine's noise, in the same session);
  - each round's first sample over its round's median (what a warm-up is for);
  - an A/A per way: `asv compare --factor 1.1` between its first two runs, the cases
    asv flags (none is a real change: both ran the same code).

`--without-first` runs B A A B instead. `--load` runs them all beside the self-check's
bursty load (one core busy 3 s in 6).

    python scripts/asv_warm_up_cost.py [--pairs 1] [--without-first] [--load] [--keep DIR]

A run takes ~2 min on a quiet 2-core VM, ~3.5 min beside the load.
"""

import argparse
import contextlib
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tfgpubench.selfcheck import stats  # noqa: E402

BENCHMARK = "multiply.Multiply.time_multiply"
WITH, WITHOUT = "with asv's warm-up", "without"
# What each way passes to asv run: the default (-1: 0.1 s on CPython), or none.
ATTRIBUTES = {WITH: ["--attribute", "warmup_time=-1"], WITHOUT: ["--attribute", "warmup_time=0"]}


def order(pairs, without_first=False):
    """The ways of `pairs` blocks of four runs, A B B A: a drift falls on both alike.
    without_first: B A A B, for a drift curved the other way."""
    first, second = (WITHOUT, WITH) if without_first else (WITH, WITHOUT)
    return [first, second, second, first] * pairs


def pooled_medians(runs):
    """{case: median of its samples in every run of `runs`, pooled}."""
    cases = set.intersection(*(set(run) for run in runs))
    return {case: statistics.median([s for run in runs for s in run[case]]) for case in cases}


def ratios(over, under):
    """{case: over's pooled median / under's} for the cases both measured."""
    top, bottom = pooled_medians(over), pooled_medians(under)
    return {case: top[case] / bottom[case] for case in top.keys() & bottom.keys()}


def first_sample_ratios(samples, rounds):
    """Each round's first sample over its round's median, for samples asv pooled round
    after round (`rounds` rounds of equal length); none where the rounds are uneven."""
    if not samples or len(samples) % rounds:
        return []
    length = len(samples) // rounds
    chunks = [samples[i * length:(i + 1) * length] for i in range(rounds)]
    return [chunk[0] / statistics.median(chunk) for chunk in chunks]


def summary(values, within=0.05):
    """'median m, range lo-hi, k of n within ±5 %' of ratios."""
    values = sorted(values)
    if not values:
        return "none"
    near = sum(abs(v - 1) <= within for v in values)
    return (f"median {statistics.median(values):.3f}, range {values[0]:.3f}-{values[-1]:.3f}, "
            f"{near} of {len(values)} within ±{within:.0%}")


def measure(root, ways, progress=print):
    """([(way, wall seconds, asv's duration, {case: samples}, commit)] of one asv run per
    way, {way: its A/A flags}: asv compare's flags between the way's first two runs)."""
    from tfgpubench.selfcheck.asvruns import Scratch

    config = Path(__file__).resolve().parents[1] / "asv.conf.json"
    scratch = Scratch(root, config, commits=len(ways), launch_method="forkserver")
    runs = []
    for commit, way in zip(scratch.hashes, ways):
        wall = scratch.run(commit, bench="^" + BENCHMARK.replace(".", r"\."),
                           asv_args=ATTRIBUTES[way])["wall"]
        result = scratch.result_file(commit)
        duration = stats.benchmark_durations(result).get(BENCHMARK)
        cases = {case: entry["samples"] for case, entry in stats.unroll_results(result).items()
                 if entry["samples"]}
        runs.append((way, wall, duration, cases, commit))
        progress(f"{time.strftime('%H:%M:%S')} {way}: wall {wall:.1f} s, "
                 f"asv's duration {duration:.1f} s, {len(cases)} cases")
    flags = {}
    for way in (WITH, WITHOUT):
        first, second = [run[-1] for run in runs if run[0] == way][:2]
        rows = stats.parse_compare(scratch.compare(first, second, stats.FACTOR))
        flags[way] = (stats.flagged(rows), len(rows))
    return runs, flags


def report(runs, flags, rounds):
    by_way = {way: [run[3] for run in runs if run[0] == way] for way in (WITH, WITHOUT)}
    for way in (WITH, WITHOUT):
        durations = [run[2] for run in runs if run[0] == way]
        print(f"{way}: asv's duration " + ", ".join(f"{d:.1f} s" for d in durations))
    print("medians, without over with:", summary(ratios(by_way[WITHOUT], by_way[WITH]).values()))
    withs = by_way[WITH]
    if len(withs) >= 2:
        print("medians, a run with over another with (noise):",
              summary(ratios(withs[1:2], withs[:1]).values()))
    for way in (WITH, WITHOUT):
        firsts = [r for cases in by_way[way] for samples in cases.values()
                  for r in first_sample_ratios(samples, rounds)]
        print(f"{way}: a round's first sample over its round's median: {summary(firsts)}; "
              f"90th percentile {stats.percentile(firsts, 0.9):.3f}")
    for way, (flagged, compared) in flags.items():
        print(f"{way}: A/A, its first two runs, asv compare --factor {stats.FACTOR}: "
              f"{len(flagged)} of {compared} flagged")
        for name, mark in sorted(flagged.items()):
            print(f"    {mark} {name}")


def main(argv=None):
    from benchmarks.multiply import Multiply
    from tfgpubench.selfcheck.load import BurstyLoad

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=1, help="A B B A blocks of four runs")
    parser.add_argument("--load", action="store_true",
                        help="run beside the self-check's bursty load on one core")
    parser.add_argument("--without-first", action="store_true",
                        help="B A A B: the runs without asv's warm-up first and last")
    parser.add_argument("--keep", type=Path, help="keep the scratch setup here")
    args = parser.parse_args(argv)
    if args.pairs < 1:
        parser.error("--pairs must be 1 or more")
    root = args.keep or Path(tempfile.mkdtemp(prefix="tfgpubench-asv-warm-up-"))
    try:
        with BurstyLoad() if args.load else contextlib.nullcontext():
            runs, flags = measure(root, order(args.pairs, args.without_first))
        report(runs, flags, Multiply.rounds)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
