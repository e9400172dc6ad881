"""Experiment: does a slowdown read the same through asv as in the suite's engine alone?

The self-check's sensitivity part once saw `function` and xla from 2048² up read x0.94-1.17
under asv with TF_NUM_INTRAOP_THREADS=1, where every bare-loop pass read x1.19-1.32. If
asv's path (its forkserver, the benchmark processes, the gaps between samples) hid part of
a slowdown, the gate would miss real regressions. So each repetition measures the same
cases, default and slowed, two ways, one after the other:

- through asv: `asv run` (forkserver) under two scratch commits, rounds interleaved as the
  gate's asv continuous does; per case the ratio of asv's medians, and of each round's;
- in the engine alone: two processes, one per environment, each starting its own engine
  (benchmarks/engine.py) as a benchmark process would, asked in turn for ROUNDS rounds of
  SAMPLES samples (a quiet-gate wait, then one block), no asv anywhere.

    python scripts/slowdown_under_asv.py [--sizes 2048] [--dtype float32] [--reps 3]

Where the two ways agree within the spread of their rounds, asv's path is not what hides
a slowdown; the machine's draws are.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BENCHMARK = "multiply.Multiply.time_multiply"
MODES = ("eager", "function", "xla", "graph_loop")
ASV_ROUNDS = 4
ENGINE_ROUNDS = 6
SAMPLES = 10


def say(message):
    print(time.strftime("%H:%M:%S"), message, flush=True)


def ratios(default_rounds, slowed_rounds):
    """(slowed / default of the medians of every sample, [the same of each round]), from
    each side's samples round by round (lists of lists, in the order the rounds ran); a
    round either side has no samples of is left out."""
    def every(rounds):
        return [x for taken in rounds for x in taken]

    whole = statistics.median(every(slowed_rounds)) / statistics.median(every(default_rounds))
    return whole, [statistics.median(s) / statistics.median(d)
                   for d, s in zip(default_rounds, slowed_rounds) if d and s]


def case_name(case):
    """asv's id of the cpu case (size, dtype, mode), as the engine is asked for it."""
    from tfgpubench.names import case_id

    return case_id(BENCHMARK, map(repr, ("cpu", *case)))


def line(way, case, whole, each):
    return (f"  {way:7s} {case:26s} x{whole:.2f}   rounds "
            + " ".join(f"x{r:.2f}" for r in each))


def through_asv(cases, variable, value):
    """{case: (ratio, round ratios)} of the cases measured by asv, default and slowed; the
    scratch folder is kept, and named."""
    from tfgpubench.alerts import case_patterns
    from tfgpubench.selfcheck.asvruns import Scratch
    from tfgpubench.selfcheck.stats import split_rounds, unroll_results

    root = Path(tempfile.mkdtemp(prefix="slowdown-under-asv-"))
    say(f"  asv's scratch, kept: {root}")
    scratch = Scratch(root, ROOT / "asv.conf.json", commits=2)
    default, slowed = scratch.hashes[:2]
    scratch.run_interleaved([default, slowed], ASV_ROUNDS,
                            bench=case_patterns(case_name(case) for case in cases),
                            envs={slowed: {variable: value}})
    results = {c: unroll_results(scratch.result_file(c)) for c in (default, slowed)}
    # asv takes 5-10 samples a round (Multiply.repeat): where each round's end is recorded.
    by_round = {}
    for commit, _, taken in split_rounds(results, scratch.rounds_run):
        for name, samples in taken.items():
            by_round.setdefault((commit, name), []).append(samples)
    out = {}
    for case in cases:
        a, b = by_round.get((default, case_name(case))), by_round.get((slowed, case_name(case)))
        if a and b and any(a) and any(b):
            out[case] = ratios(a, b)
    return out


def engine_alone(cases, variable, value):
    """{case: (ratio, round ratios)} of the cases timed by engines without asv."""
    clients, folders = {}, []
    for name, extra in (("default", {}), ("slowed", {variable: value})):
        folders.append(tempfile.mkdtemp(prefix="slowdown-engine-"))  # 0700: its engine's
        env = dict(os.environ, TFGPUBENCH_ENGINE_DIR=folders[-1], **extra)
        clients[name] = subprocess.Popen(
            [sys.executable, __file__, "--client", json.dumps(cases)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True, env=env)
    try:
        for client in clients.values():
            if client.stdout.readline().strip() != "ready":
                raise RuntimeError("an engine client did not start")
        per_round = {}
        for number in range(ENGINE_ROUNDS):
            order = list(clients) if number % 2 == 0 else list(clients)[::-1]
            for index in range(len(cases)):
                for name in order:
                    clients[name].stdin.write(f"{index}\n")
                    clients[name].stdin.flush()
                    per_round.setdefault((index, name), []).append(
                        json.loads(clients[name].stdout.readline()))
    finally:
        for client in clients.values():
            client.stdin.close()
            try:
                client.wait(timeout=60)
            except subprocess.TimeoutExpired:
                client.kill()
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)  # an engine ends once its socket goes
    return {tuple(case): ratios(per_round[(i, "default")], per_round[(i, "slowed")])
            for i, case in enumerate(cases)}


def client(cases):
    """One environment's side: the cases' engine blocks; for each index read on stdin,
    SAMPLES samples as asv takes them (the quiet-gate wait, then one block), per op."""
    from benchmarks import engine

    try:
        blocks = [engine.block("multiply:multiply_block", "cpu", *case) for case in cases]
        print("ready", flush=True)
        for request in sys.stdin:
            block, samples = blocks[int(request)], []
            for _ in range(SAMPLES):
                block.before_sample()
                before = block.seconds
                block()
                samples.append((block.seconds - before) / block.ops)
            print(json.dumps(samples), flush=True)
    finally:
        # Its engine would otherwise idle on for engine.IDLE_SECONDS.
        engine.stop_engines(os.environ[engine.ENGINE_DIR_ENV])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="2048")
    parser.add_argument("--dtype", default="float32", choices=("float32", "int32"))
    parser.add_argument("--env", default="TF_NUM_INTRAOP_THREADS=1",
                        help="the slowing environment variable, NAME=VALUE")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--client", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        return client([tuple(case) for case in json.loads(args.client)])
    variable, _, value = args.env.partition("=")
    cases = [(int(size), args.dtype, mode) for size in args.sizes.split(",") for mode in MODES]
    for rep in range(1, args.reps + 1):
        say(f"repetition {rep}/{args.reps}: through asv ({ASV_ROUNDS} rounds, interleaved)")
        asv = through_asv(cases, variable, value)
        say(f"repetition {rep}/{args.reps}: the engine alone ({ENGINE_ROUNDS} rounds)")
        alone = engine_alone(cases, variable, value)
        print(f" {args.env} against default, slowed / default medians, whole and by round:")
        for case in cases:
            for way, got in (("asv", asv), ("engine", alone)):
                if case in got:
                    print(line(way, f"{case[0]}² {case[1]} {case[2]}", *got[case]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
