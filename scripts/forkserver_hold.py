"""What asv's forkserver, polling while a case runs, costs the engine's samples, and what
holding it still (benchmarks/launcher.py) gives back: paired, with the suite's own engine.

Under asv's forkserver launch method the process that forked a benchmark process polls
for its end all the while it runs: os.waitpid(WNOHANG), then a sleep of up to 1 ms
(asv_runner/server.py). This script asks one engine for samples of each case, as asv's
benchmark processes do, three ways, in an order shuffled for every case and round so
that the machine's drift falls on all three alike:

  direct  this process asks, blocked in recv the while: nothing polls beside the engine
  poll    a forked child asks; this process, its parent, polls as asv_runner's does
  hold    the same, and the child names its parent for the engine to hold still (SIGSTOP)
          while each block runs: what the suite does under asv's forkserver

and prints, per case, each way's median per-op time over `direct`'s, and their medians
over the cases.

    python scripts/forkserver_hold.py [--sizes 512 1000 2048] [--rounds 20] [--samples 5]

Every cpu case of those sizes (TensorFlow's dtypes and modes) is asked for. The engine
runs in a folder of its own and ends with the script.
"""

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import engine, launcher  # noqa: E402
from benchmarks.grid import DTYPES, MODES  # noqa: E402

WAYS = ("direct", "poll", "hold")
BUILDER = "multiply:multiply_block"


def samples(handle, case, ops, count, hold=None):
    """`count` per-op times of `case` from the engine, holding process `hold` (or None)."""
    return [handle.call("run", hold, BUILDER, "cpu", *case) / ops for _ in range(count)]


def polled(handle, case, ops, count, hold):
    """samples() taken by a forked child while this process polls for its end as
    asv_runner's forkserver does; the child names this process to hold where `hold`."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: a connection of its own (engine.Engine opens one per pid)
        os.close(read)
        code, parent = 1, os.getppid() if hold else None
        try:
            taken = samples(handle, case, ops, count, parent)
            os.write(write, json.dumps(taken).encode())
            code = 0
        finally:
            launcher.let_go(parent)  # an engine that ended mid-block could not
            os._exit(code)
    os.close(write)
    pause = 1e-15
    while os.waitpid(pid, os.WNOHANG)[0] == 0:
        pause *= 10
        time.sleep(min(pause, 0.001))
    with os.fdopen(read, "rb") as answer:
        text = answer.read()
    if not text:
        raise RuntimeError(f"the child asking for {case} failed")
    return json.loads(text)


def paired(handle, cases, rounds, count, progress=lambda text: None):
    """{case: {way: [per-op seconds]}}, the ways of each case in a shuffled order every round."""
    ops = {case: handle.call("prepare", BUILDER, "cpu", *case) for case in cases}
    times = {case: {way: [] for way in WAYS} for case in cases}
    for number in range(rounds):
        for case in cases:
            for way in random.sample(WAYS, len(WAYS)):
                if way == "direct":
                    taken = samples(handle, case, ops[case], count)
                else:
                    taken = polled(handle, case, ops[case], count, hold=(way == "hold"))
                times[case][way] += taken
        progress(f"round {number + 1}/{rounds}")
    return times


def ratios(times):
    """{case: {way: median over direct's median}} for the ways other than direct."""
    return {case: {way: statistics.median(ways[way]) / statistics.median(ways["direct"])
                   for way in WAYS[1:]} for case, ways in times.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[512, 1000, 2048])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--samples", type=int, default=5, help="per way, case and round")
    args = parser.parse_args(argv)
    folder = tempfile.mkdtemp(prefix="tfgpubench-hold-")
    os.environ[engine.ENGINE_DIR_ENV] = folder
    handle = engine.Engine()
    cases = [(size, dtype, mode) for size in args.sizes for dtype in DTYPES for mode in MODES]
    try:
        times = paired(handle, cases, args.rounds, args.samples,
                       progress=lambda text: print(text, file=sys.stderr, flush=True))
    finally:
        engine.stop_engines(folder)
    found = ratios(times)
    for case, by_way in found.items():
        print(f"{case[0]}x{case[0]} {case[1]:<7} {case[2]:<10} "
              + "  ".join(f"{way}/direct {ratio:.3f}" for way, ratio in by_way.items()))
    for way in WAYS[1:]:
        values = [by_way[way] for by_way in found.values()]
        print(f"{way}/direct: median {statistics.median(values):.3f} over {len(values)} cases, "
              f"{sum(v > 1 for v in values)} above 1.00")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
