"""Fidelity: does the suite record the time an op really takes?

Every cpu case of Multiply.time_multiply (each size, dtype and mode) is run
by the real `asv run`, with the launch method `tfgpubench run` uses here, and
compared with the reference: the same TensorFlow call in a bare loop, timed
by a process that shares no code with the suite (reference_worker.py),
measured just before and just after the asv run (drift between the two is
averaged out, and shown). Target: every ratio within 1.00 +- 0.05.
"""

import math

from .. import format as fmt
from ..names import MULTIPLY, case_id
from ..suite import grid
from . import stats
from .console import progress, section
from .reference import measure

QUICK_SIZES = [2, 1000]


def cases(sizes):
    return [(size, dtype, mode) for size in sizes for dtype in grid.DTYPES for mode in grid.MODES]


def compare(suite, before, after):
    """One row per case: the suite's value against the mean of the two reference passes.

    suite: {case id: asv's value}; before, after: {(size, dtype, mode): s/op}.
    """
    rows = []
    for case in sorted(set(before) & set(after)):
        value = suite.get(case_id(MULTIPLY, map(repr, ("cpu", *case))))
        if value is None or not math.isfinite(value):
            continue
        bare = (before[case] + after[case]) / 2
        rows.append({
            "size": case[0], "dtype": case[1], "mode": case[2], "suite": value, "bare": bare,
            "ratio": value / bare, "drift": after[case] / before[case],
            "ok": stats.within(value / bare),
        })
    return rows


def run_part(args, scratch, commit, figures):
    """Print the fidelity of every cpu case next to its target; whether all are met."""
    sizes = QUICK_SIZES if args.quick else grid.SIZES
    section(f"fidelity: the suite under `asv run --launch-method {scratch.launch_method}` "
            "vs the same call in a bare loop, every cpu case")
    wanted = cases(sizes)
    progress(f"  reference pass 1 ({len(wanted)} cases)...")
    before = {c: v["default"] for c, v in measure(wanted, {"default": {}}, 1, progress).items()}
    progress("  asv run of the same cases...")
    scratch.run(commit, bench=stats.case_regex(MULTIPLY, "cpu", sizes), progress=progress)
    progress("  reference pass 2...")
    after = {c: v["default"] for c, v in measure(wanted, {"default": {}}, 1, progress).items()}
    suite = {name: c["value"]
             for name, c in stats.unroll_results(scratch.result_file(commit)).items()}
    rows = compare(suite, before, after)
    print(f"  {'case':<30} {'suite/op':>10} {'bare/op':>10} {'ratio':>6}  target 1.00 +- "
          f"{stats.FIDELITY_TOLERANCE:.2f}   (bare drift between its two passes)")
    for r in rows:
        label = f"{r['size']}x{r['size']} {r['dtype']} {r['mode']}"
        print(f"  {label:<30} {fmt.seconds(r['suite']):>10} {fmt.seconds(r['bare']):>10} "
              f"{r['ratio']:6.3f}  {fmt.verdict(r['ok'])}   ({r['drift']:.2f})")
    within = sum(r["ok"] for r in rows)
    ratios = [r["ratio"] for r in rows]
    if rows:
        print(f"  {within}/{len(rows)} within target; ratios {min(ratios):.3f}-{max(ratios):.3f}"
              f", median {stats.median(ratios):.3f}")
    figures["fidelity"] = {"launch_method": scratch.launch_method, "cases": rows}
    return bool(rows) and within == len(rows) and len(rows) == len(wanted)
