"""How long the untimed warm-up before each sample must be (benchmarks/grid.py's
warm_up_parts): the suite's engine after a gap, with warm-ups of different lengths,
against the self-check's bare loop, interleaved.

asv leaves a gap before every sample (its bookkeeping, setup, the quiet gate's look), and
a block right after a gap runs slow while the CPU and TensorFlow's threads wake up. The
engine runs part of the block untimed first. This script asks, for each cpu case:

  back to back   the suite's engine as checked out, its samples asked with no pause
  gap, 1/P       an engine whose warm-up is 1/P of the block at every size, each
                 sample after a `--gap` s sleep (the package copied to a temporary
                 folder, its grid.warm_up_parts returning P: an engine of its own)
  reference      the self-check's bare loop (tfgpubench/selfcheck/reference_worker.py),
                 ~10 ms loops back to back, none of the suite's code

all ways in a shuffled order for every case and round. A process's heap and inputs land
differently in every process (benchmarks/grid.py: up to 25 % on a mid-size op), so each
of `--processes` times a fresh engine of each way and a fresh reference process is
started, and their samples pooled. Prints, per case, each way's median over the
reference's, and their medians over the cases.

    python scripts/warm_up_length.py [--parts 8 1] [--sizes 512 1000 2048] [--gap 0.003]

Engines run in a folder of their own and end with the script.
"""

import argparse
import importlib
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import engine  # noqa: E402
from benchmarks.grid import DTYPES, MODES  # noqa: E402
from tfgpubench.selfcheck.reference import ReferenceWorker  # noqa: E402

BUILDER = "multiply:multiply_block"
BACK_TO_BACK = "back to back"
REFERENCE = "reference"
# Each way's samples of a case per round: about as many as asv takes in one round.
SAMPLES = 6


def with_warm_up_parts(source, parts):
    """grid.py's `source` with warm_up_parts(size) returning `parts` for every size: a
    definition appended, which replaces the first as the module loads."""
    found = source.count("\ndef warm_up_parts(size):")
    if found != 1:
        raise ValueError(f"grid.py defines warm_up_parts {found} times, not once")
    return source + f"\n\ndef warm_up_parts(size):\n    return {int(parts)}\n"


def suite_with_warm_up(parts, folder):
    """The suite's engine module, from a copy of benchmarks/ in `folder` whose warm-up is
    1/`parts` of a block, imported as a package of its own (so an engine of its own)."""
    name = f"benchmarks_warm_up_{parts}"
    copy = Path(folder) / name
    shutil.copytree(ROOT / "benchmarks", copy, ignore=shutil.ignore_patterns("__pycache__"))
    grid = copy / "grid.py"
    grid.write_text(with_warm_up_parts(grid.read_text(), parts))
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return importlib.import_module(f"{name}.engine")


def way_name(parts):
    return f"gap, 1/{parts}"


def one_process_each(engines, cases, rounds, gap):
    """{case: {way: [per-op seconds]}} from a fresh engine of each way and a fresh
    reference process; engines: {way: Engine handle}."""
    ops = {way: {case: handle.call("prepare", BUILDER, "cpu", *case) for case in cases}
           for way, handle in engines.items()}
    times = {case: {way: [] for way in [*engines, REFERENCE]} for case in cases}
    with ReferenceWorker() as reference:
        for _ in range(rounds):
            for case in cases:
                for way in random.sample([*engines, REFERENCE], len(engines) + 1):
                    if way == REFERENCE:
                        times[case][way] += reference.loops_and_faults(*case, 0.06)[0]
                        continue
                    for _ in range(SAMPLES):
                        if way != BACK_TO_BACK:
                            time.sleep(gap)
                        seconds = engines[way].call("run", None, BUILDER, "cpu", *case)
                        times[case][way].append(seconds / ops[way][case])
    return times


def pooled(runs):
    """The samples of every run, case by case and way by way."""
    out = {}
    for times in runs:
        for case, ways in times.items():
            for way, samples in ways.items():
                out.setdefault(case, {}).setdefault(way, []).extend(samples)
    return out


def ratios(times):
    """{case: {way: its median over the reference's}} for every way but the reference."""
    return {case: {way: statistics.median(samples) / statistics.median(ways[REFERENCE])
                   for way, samples in ways.items() if way != REFERENCE}
            for case, ways in times.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", type=int, nargs="+", default=[8, 1],
                        help="warm-up lengths to compare, as fractions 1/P of a block")
    parser.add_argument("--sizes", type=int, nargs="+", default=[512, 1000, 2048])
    parser.add_argument("--gap", type=float, default=0.003, help="seconds before each sample")
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3, help="per process")
    args = parser.parse_args(argv)
    if any(parts < 1 for parts in args.parts):
        parser.error("--parts: each must be 1 or more")
    cases = [(size, dtype, mode) for size in args.sizes for dtype in DTYPES for mode in MODES]
    scratch = tempfile.mkdtemp(prefix="tfgpubench-warm-up-")
    folder = os.path.join(scratch, "engines")
    os.environ[engine.ENGINE_DIR_ENV] = folder
    modules = {way_name(parts): suite_with_warm_up(parts, scratch) for parts in args.parts}
    runs = []
    try:
        for number in range(args.processes):
            # Every engine was asked to end after the last process: these start afresh.
            engines = {BACK_TO_BACK: engine.Engine(),
                       **{way: module.Engine() for way, module in modules.items()}}
            runs.append(one_process_each(engines, cases, args.rounds, args.gap))
            engine.stop_engines(folder)
            print(f"process {number + 1}/{args.processes}", file=sys.stderr, flush=True)
    finally:
        engine.stop_engines(folder)
        shutil.rmtree(scratch, ignore_errors=True)
    found = ratios(pooled(runs))
    for case, by_way in found.items():
        print(f"{case[0]}x{case[0]} {case[1]:<7} {case[2]:<10} "
              + "  ".join(f"{way}: {ratio:.3f}" for way, ratio in by_way.items()))
    for way in next(iter(found.values())):
        values = [by_way[way] for by_way in found.values()]
        print(f"{way} / reference: median {statistics.median(values):.3f} over {len(values)} "
              f"cases, {sum(abs(v - 1) <= 0.05 for v in values)} within 5 %, "
              f"{sum(v > 1 for v in values)} above 1.00")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
