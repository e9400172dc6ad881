"""Fidelity: does the suite record the time an op really takes?

Every cpu case of Multiply.time_multiply (each size, dtype and mode) is run
by the real `asv run`, with the launch method `tfgpubench run` uses here, and
compared with the reference: the same TensorFlow call in a bare loop, timed
by a process that shares no code with the suite (reference_worker.py),
measured just before and just after the asv run (drift between the two is
averaged out, and shown). Target: every ratio within 1.00 +- 0.05.

Two ratios per case. The median ratio is the target's: asv's recorded value
(the median of its samples) over the reference's median. The fast ratio
compares the 10th percentiles of the two (asv's recorded samples, the
reference's loops): the op while the machine ran at full speed. Where the
machine's speed changes under the run (a shared VM whose neighbours come and
go: this one slows by ~1.5x for seconds at a time, invisible to /proc), the
median ratio measures that, while the fast ratio still shows whether the
suite's timing adds anything to the op: the part the suite can remove.
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
    """One row per case: the suite against the mean of the two reference passes.

    suite: {case id: {"value": asv's value, "samples": its samples or None}};
    before, after: {(size, dtype, mode): {"median": s/op, "fast": s/op}}.
    """
    rows = []
    for case in sorted(set(before) & set(after)):
        got = suite.get(case_id(MULTIPLY, map(repr, ("cpu", *case)))) or {}
        value = got.get("value")
        if value is None or not math.isfinite(value):
            continue
        bare = (before[case]["median"] + after[case]["median"]) / 2
        bare_fast = (before[case]["fast"] + after[case]["fast"]) / 2
        suite_fast = stats.fast(got.get("samples"))
        fast_ratio = suite_fast / bare_fast if suite_fast is not None else None
        rows.append({
            "size": case[0], "dtype": case[1], "mode": case[2], "suite": value, "bare": bare,
            "ratio": value / bare, "drift": after[case]["median"] / before[case]["median"],
            "ok": stats.within(value / bare),
            "suite_fast": suite_fast, "bare_fast": bare_fast, "fast_ratio": fast_ratio,
            "fast_ok": fast_ratio is not None and stats.within(fast_ratio),
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
    rows = compare(stats.unroll_results(scratch.result_file(commit)), before, after)
    tolerance = f"target 1.00 +- {stats.FIDELITY_TOLERANCE:.2f}"
    print(f"  {'case':<30} {'suite/op':>10} {'bare/op':>10} {'ratio':>6}  {tolerance}"
          f"   {'fast ratio':>10}  (bare drift between its two passes)")
    for r in rows:
        label = f"{r['size']}x{r['size']} {r['dtype']} {r['mode']}"
        fast = (f"{r['fast_ratio']:10.3f} {fmt.verdict(r['fast_ok'])}"
                if r["fast_ratio"] is not None else f"{'-':>10}     ")
        print(f"  {label:<30} {fmt.seconds(r['suite']):>10} {fmt.seconds(r['bare']):>10} "
              f"{r['ratio']:6.3f}  {fmt.verdict(r['ok']):<25}   {fast}  ({r['drift']:.2f})")
    for key, what in (("ratio", "median ratio (the recorded value)"),
                      ("fast_ratio", "fast ratio (10th percentiles: what the suite adds)")):
        ratios = [r[key] for r in rows if r[key] is not None]
        if ratios:
            within = sum(stats.within(x) for x in ratios)
            print(f"  {what}: {within}/{len(rows)} within target; "
                  f"{min(ratios):.3f}-{max(ratios):.3f}, median {stats.median(ratios):.3f}")
    figures["fidelity"] = {"launch_method": scratch.launch_method, "cases": rows}
    return bool(rows) and all(r["ok"] for r in rows) and len(rows) == len(wanted)
