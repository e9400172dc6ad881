"""Experiment: A/A pairs of a few cases under the real `asv run`, as the gate measures.

Each pair is one stack measured under two commits of a scratch repository, ROUNDS
rounds interleaved as `asv continuous` does (the self-check's Scratch.run_interleaved);
per case it prints the second commit's value over the first's and the first's
interquartile range over its median. Run it against two checkouts of the suite, one
after the other, to see what a change to a case's timing does to its A/A:

    python scripts/aa_of_cases.py --pairs 4                       # this checkout
    python scripts/aa_of_cases.py --pairs 4 --config ../old/asv.conf.json

The default cases are the CPU `Wait` cases beside the 2x2 eager multiply, the steadiest
case of the suite, timed in the same runs: a control for the machine's own moments.
Not part of the self-check: it answers a question about one case's timing.
"""

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tfgpubench.alerts import case_patterns  # noqa: E402
from tfgpubench.selfcheck import stats  # noqa: E402

CASES = [
    "wait.Wait.time_wait('cpu', 'int32')",
    "wait.Wait.time_wait('cpu', 'float32')",
    "multiply.Multiply.time_multiply('cpu', 2, 'int32', 'eager')",
    "multiply.Multiply.time_multiply('cpu', 2, 'float32', 'eager')",
]
ROUNDS = 4


def pair_row(first, second):
    """{case: {"a", "b", "ratio", "iqr"}} of two unrolled result files (stats.unroll_results):
    B's value over A's, and A's spread (IQR over median), for each case both measured."""
    row = {}
    for case, got in first.items():
        other = second.get(case)
        if not (other and measured(got["value"]) and measured(other["value"])):
            continue
        row[case] = {"a": got["value"], "b": other["value"],
                     "ratio": other["value"] / got["value"],
                     "iqr": stats.spread(got["q25"], got["q75"], got["value"])}
    return row


def measured(value):
    """Whether asv recorded a time (a skipped case holds None or NaN)."""
    return value is not None and math.isfinite(value) and value > 0


def describe(case, figures):
    """One case of a pair, as printed: 'Wait.time_wait('cpu', 'int32') 12.2/12.4 us x1.012
    IQR 5.7%'."""
    name = case.split(".", 1)[1]
    return (f"{name} {figures['a'] * 1e6:.1f}/{figures['b'] * 1e6:.1f} us "
            f"x{figures['ratio']:.3f} IQR {figures['iqr']:.1%}")


def measure(scratch, count, cases, json_path):
    """`count` A/A pairs of `cases` in `scratch`, printed as they end."""
    pairs = []
    for number in range(count):
        first, second = scratch.hashes[2 * number: 2 * number + 2]
        start = time.perf_counter()
        scratch.run_interleaved([first, second], ROUNDS, bench=case_patterns(cases))
        row = pair_row(stats.unroll_results(scratch.result_file(first)),
                       stats.unroll_results(scratch.result_file(second)))
        pairs.append(row)
        print(f"{time.strftime('%H:%M:%S')} pair {number + 1}/{count} "
              f"({time.perf_counter() - start:.0f} s)", flush=True)
        for case in cases:
            print("   ", describe(case, row[case]) if case in row else f"{case}: not measured",
                  flush=True)
        if json_path:
            json_path.write_text(json.dumps(pairs, indent=1))


def main():
    from tfgpubench.selfcheck.asvruns import Scratch

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--config", default="asv.conf.json",
                        help="the asv.conf.json of the checkout whose suite is measured")
    parser.add_argument("--case", action="append", dest="cases",
                        help="a case id as asv names it (repeatable; default: the Wait "
                        "cases and the 2x2 eager control)")
    parser.add_argument("--json", type=Path, help="also write every pair's figures here")
    args = parser.parse_args()
    if args.pairs < 1:
        parser.error("--pairs must be 1 or more")
    cases = args.cases or CASES
    with tempfile.TemporaryDirectory(prefix="aa-of-cases-") as root:
        measure(Scratch(root, args.config, commits=2 * args.pairs), args.pairs, cases,
                args.json)


if __name__ == "__main__":
    main()
