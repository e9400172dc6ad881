"""What asv's own warm-up changes in `Multiply.time_multiply`, measured case by case.

asv runs `warmup_time` seconds of untimed calls before each round's first sample (0.1 s
by default on CPython), though every sample of the suite's Multiply warms up in the
engine too (benchmarks/grid.py's warm_up_parts). Is asv's needed?

Whole runs with and without it, alternated (this script until 2026-12-07), could not
say: a shared VM's speed moved up to 1.3x between runs a few minutes apart, more than
anything the warm-up could change. So the two ways are now taken side by side within
one `asv run`: a copy of the suite gets a module (EXPERIMENT) whose benchmark is
Multiply with one more parameter, the warm-up, last, so asv runs each case with and
without it back to back, a second apart, in every round. `warmup_time` is 0 there, and
the way "with" runs asv's warm-up itself in the first setup of its process: calls of
the timed block for 0.1 s, as asv_runner does. A run's second way of a case follows
the same case, while in the suite a case follows another case, so the run is made
twice, the ways in both orders, and each case's ratio is the geometric mean of the two
runs' (the order's own effect is printed too).

Printed: each round's median without over the same round's with, a second apart
(median over the case-rounds, with asv's own 99 % interval of it); per case, its
median without over its median with, over the two orders; each round's first sample
over its round's median, per way (what a warm-up is for); and the wall time of each
run against the suite's Multiply alone.

    python scripts/asv_warm_up_cost.py [--load] [--keep DIR]
    python scripts/asv_warm_up_cost.py --judge-only DIR     # what a kept DIR holds

Each order takes ~3.5 min on a quiet 2-core VM (both ways of 64 cases, 4 rounds).
"""

import argparse
import contextlib
import json
import math
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tfgpubench.selfcheck import stats  # noqa: E402

WITH, WITHOUT = "with", "without"
ORDER_ENV = "TFGPUBENCH_WARM_UP_ORDER"
MODULE = "asv_warm_up_experiment"
BENCHMARK = f"{MODULE}.AsvWarmUp.time_multiply"
RUNS_FILE = "warm-up-runs.json"
# asv_runner's default warm-up on CPython (warmup_time = -1).
ASV_WARM_UP_SECONDS = 0.1

EXPERIMENT = f'''"""Written by scripts/asv_warm_up_cost.py into a copy of the suite: Multiply with
asv's warm-up as its last parameter, so each case runs both ways back to back."""

import os
import time

from .multiply import Multiply

_warmed_up = False  # per benchmark process: asv warms up before a round's first sample


class AsvWarmUp(Multiply):
    params = Multiply.params + [os.environ.get("{ORDER_ENV}", "{WITH},{WITHOUT}").split(",")]
    param_names = Multiply.param_names + ["asv_warm_up"]
    warmup_time = 0

    def setup(self, device, size, dtype, mode, asv_warm_up):
        global _warmed_up
        super().setup(device, size, dtype, mode)
        if asv_warm_up == "{WITH}" and not _warmed_up:
            _warmed_up = True
            start = time.perf_counter()
            while time.perf_counter() - start < {ASV_WARM_UP_SECONDS}:
                self.block()

    def time_multiply(self, device, size, dtype, mode, asv_warm_up):
        self.block()
'''


def split_ways(cases):
    """{way: {case without the way: samples}} from unrolled asv results whose last
    parameter is the way (case ids end in ', way)')."""
    ways = {}
    for case, samples in cases.items():
        head, _, way = case[:-1].rpartition(", ")
        ways.setdefault(way.strip("'\""), {})[head + ")"] = samples
    return ways


def median_ratios(over, under):
    """{case: median of over's samples / median of under's} for the cases both hold."""
    return {case: statistics.median(over[case]) / statistics.median(under[case])
            for case in over.keys() & under.keys() if over[case] and under[case]}


def geometric_means(*ratio_maps):
    """{case: geometric mean of its ratio in every map} for the cases all maps hold."""
    cases = set.intersection(*(set(m) for m in ratio_maps))
    return {case: math.exp(statistics.fmean(math.log(m[case]) for m in ratio_maps))
            for case in cases}


def round_ratios(over, under, rounds):
    """[(case, ratio)]: for each case both hold and each round, over's round median over
    under's, for samples asv pooled round after round; a case with rounds of unequal
    length is left out. The two ways of a round ran a second apart: the pairs the
    machine's drift moves least."""
    pairs = []
    for case in sorted(over.keys() & under.keys()):
        top, bottom = _rounds(over[case], rounds), _rounds(under[case], rounds)
        if top and bottom:
            pairs += [(case, statistics.median(t) / statistics.median(b))
                      for t, b in zip(top, bottom)]
    return pairs


def median_interval(values):
    """(median, (low, high)): the median of `values` and its 99 % confidence interval,
    asv's own estimate (asv_runner.statistics.quantile_ci, as asv's result files hold)."""
    from asv_runner.statistics import quantile_ci

    return quantile_ci(sorted(values), 0.5, alpha_min=0.01)


def _rounds(samples, rounds):
    if not samples or len(samples) % rounds:
        return []
    length = len(samples) // rounds
    return [samples[i * length:(i + 1) * length] for i in range(rounds)]


def first_sample_ratios(samples, rounds):
    """Each round's first sample over its round's median, for samples asv pooled round
    after round (`rounds` rounds of equal length); none where the rounds are uneven."""
    return [chunk[0] / statistics.median(chunk) for chunk in _rounds(samples, rounds)]


def summary(values, within=0.05):
    """'median m, range lo-hi, k of n within ±5 %' of ratios."""
    values = sorted(values)
    if not values:
        return "none"
    near = sum(abs(v - 1) <= within for v in values)
    return (f"median {statistics.median(values):.3f}, range {values[0]:.3f}-{values[-1]:.3f}, "
            f"{near} of {len(values)} within ±{within:.0%}")


def suite_copy(root):
    """A copy of asv.conf.json and benchmarks/ under `root`, with EXPERIMENT beside the
    suite's modules; the copied config's path."""
    suite = root / "suite"
    shutil.copytree(ROOT / "benchmarks", suite / "benchmarks",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (suite / "benchmarks" / f"{MODULE}.py").write_text(EXPERIMENT)
    shutil.copy(ROOT / "asv.conf.json", suite / "asv.conf.json")
    return suite / "asv.conf.json"


def measure(root, progress=print):
    """([(order, wall seconds, {case: samples})], the suite's wall): one asv run of the
    experiment per order of the two ways, then the suite's own Multiply alone for its
    wall time. What ran is written to RUNS_FILE in `root`, for --judge-only."""
    from tfgpubench.selfcheck.asvruns import Scratch

    scratch = Scratch(root, suite_copy(root), commits=3, launch_method="forkserver")
    runs, ran = [], []
    for commit, order in zip(scratch.hashes, [(WITH, WITHOUT), (WITHOUT, WITH)]):
        wall = scratch.run(commit, bench="^" + BENCHMARK.replace(".", r"\."),
                           extra_env={ORDER_ENV: ",".join(order)})["wall"]
        cases = {case: entry["samples"]
                 for case, entry in stats.unroll_results(scratch.result_file(commit)).items()
                 if entry["samples"]}
        runs.append((order, wall, cases))
        ran.append({"commit": commit, "order": order, "wall": wall})
        progress(f"{time.strftime('%H:%M:%S')} {' then '.join(order)}: wall {wall:.1f} s, "
                 f"{len(cases)} cases")
    wall = scratch.run(scratch.hashes[2], bench=r"^multiply\.Multiply\.time_multiply")["wall"]
    progress(f"{time.strftime('%H:%M:%S')} the suite's Multiply alone: wall {wall:.1f} s")
    (root / RUNS_FILE).write_text(json.dumps({"experiment": ran, "suite_wall": wall}))
    return runs, wall


def kept(root):
    """What measure() returned, from a kept scratch directory."""
    ran = json.loads((root / RUNS_FILE).read_text())
    runs = []
    for run in ran["experiment"]:
        found = next((root / "results" / "selfcheck").glob(f"{run['commit'][:8]}-*.json"))
        cases = {case: entry["samples"]
                 for case, entry in stats.unroll_results(json.loads(found.read_text())).items()
                 if entry["samples"]}
        runs.append((tuple(run["order"]), run["wall"], cases))
    return runs, ran["suite_wall"]


def report(runs, suite_wall, rounds):
    per_order = []
    for order, wall, cases in runs:
        ways = split_ways(cases)
        ratios = median_ratios(ways[WITHOUT], ways[WITH])
        per_order.append(ratios)
        print(f"{' then '.join(order)} ({wall:.0f} s): medians, without over with: "
              f"{summary(ratios.values())}")
    both = geometric_means(*per_order)
    pairs = [pair for _, _, cases in runs
             for pair in round_ratios(*_ways(cases, WITHOUT, WITH), rounds)]
    for label, keep in (("every case", lambda c: True), ("2² to 256²", _small),
                        ("512² and up", lambda c: not _small(c))):
        ratios = [ratio for case, ratio in pairs if keep(case)]
        if ratios:
            middle, (low, high) = median_interval(ratios)
            print(f"each round, without over with, a second apart ({label}, both orders, "
                  f"{len(ratios)} pairs): median {middle:.4f}, 99 % interval "
                  f"{low:.4f}-{high:.4f}; {sum(r > 1 for r in ratios)} read slower without")
    print(f"both orders (geometric mean per case): {summary(both.values())}")
    print(f"  of which 2² to 256²: {summary(v for c, v in both.items() if _small(c))}")
    print(f"  512² and up: {summary(v for c, v in both.items() if not _small(c))}")
    # The order's own effect: a way that runs second follows its own case.
    second_over_first = geometric_means(per_order[0],
                                        {c: 1 / v for c, v in per_order[1].items()})
    print("running second, right after the same case (sqrt of the two orders' ratio): "
          f"{summary(math.sqrt(v) for v in second_over_first.values())}")
    for way in (WITH, WITHOUT):
        firsts = [r for _, _, cases in runs for samples in split_ways(cases)[way].values()
                  for r in first_sample_ratios(samples, rounds)]
        print(f"{way} asv's warm-up: a round's first sample over its round's median: "
              f"{summary(firsts)}; 90th percentile {stats.percentile(firsts, 0.9):.3f}")
    print(f"wall time: the suite's Multiply alone {suite_wall:.0f} s; the experiment, both "
          f"ways of every case, {statistics.fmean(w for _, w, _ in runs):.0f} s (mean)")


def _ways(cases, *names):
    ways = split_ways(cases)
    return [ways[name] for name in names]


def _small(case):
    return int(case.split(", ")[1]) < 512


def main(argv=None):
    from benchmarks.multiply import Multiply
    from tfgpubench.selfcheck.load import BurstyLoad

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--load", action="store_true",
                        help="run beside the self-check's bursty load on one core")
    parser.add_argument("--keep", type=Path, help="keep the scratch setup here")
    parser.add_argument("--judge-only", type=Path, metavar="DIR",
                        help="print the figures of a kept scratch setup, measuring nothing")
    args = parser.parse_args(argv)
    if args.judge_only:
        report(*kept(args.judge_only), Multiply.rounds)
        return 0
    root = args.keep or Path(tempfile.mkdtemp(prefix="tfgpubench-asv-warm-up-"))
    try:
        with BurstyLoad() if args.load else contextlib.nullcontext():
            runs, suite_wall = measure(root)
        report(runs, suite_wall, Multiply.rounds)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
