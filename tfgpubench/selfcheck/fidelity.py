"""Fidelity: does the suite record the time an op really takes?

Every cpu case of Multiply.time_multiply (each size, dtype and mode) is run
by the real `asv run`, with the launch method `tfgpubench run` uses here, and
compared with the reference: the same TensorFlow call in a bare loop, timed
by a process that shares no code with the suite (reference_worker.py).
Target: every ratio within 1.00 +- 0.05.

The two are interleaved, so the machine's drift falls on both alike: a
reference pass over every case, then one asv round of every case (its samples
appended, as asv continuous appends its interleaved rounds), then a reference
pass, and so on: as many asv rounds as Multiply has, one more reference pass.
Each case's reference is its loops of every pass, pooled.

Each pass is a reference process of its own, as each asv round is an engine of
its own. A mid-size op's time is partly a draw of the process (where its heap
and its inputs landed): four identical bare-loop processes read one 512x512 case
at 1.00, 1.20, 1.05 and 1.17x one another on the suite's Xeon VM. The suite's
value pools four such draws; a reference pooling one would hold it to a single
draw, and miss by that draw.

Each slot between asv rounds holds two reference processes, one for each half of
the reference (the first asked first in one slot, second in the next). The halves
are two references alike, made the same way over the same run, and their
disagreement is this machine's noise floor for the target, measured in the same
run: where the two halves of the reference differ by more than 5%, no timing
method can be shown to be within 5% of the truth on this machine, and a miss no
larger than that disagreement cannot be told from noise. The suite is compared
with both halves pooled.

Two ratios per case. The median ratio is the target's: asv's recorded value
(the median of its samples) over the median of the reference's loops. The
fast ratio compares the 10th percentiles of the two: the op while the machine
ran at full speed. Where the machine's speed changes under the run (a shared
VM whose neighbours come and go: this one slows by ~1.5x for seconds at a
time, invisible to /proc), the median ratio measures that too, while the fast
ratio still shows whether the suite's timing adds anything to the op.

Beside the times, the page faults per op each side took (getrusage around each
timed call, in the engine and in the bare loop): a result that lands on fresh
pages costs a fault per 4 KiB, milliseconds at 2048x2048, and whether it does
depends on the process's allocator, not the op. Unlike a time, a count is not
blurred by a noisy machine, so unequal counts name the cause of a miss. Each
side's count is the median over its blocks or loops, as asv's value is the
median sample: the engine counts every block asv has it run, its warm-up calls
too, and a new process's first ones grow its heap (a fault per new page) on
either side; the typical block is the one that makes the recorded time.
"""

import math
import statistics

from .. import format as fmt
from ..names import MULTIPLY, case_id
from ..suite import grid, suite_module
from . import stats
from .console import progress, section
from .reference import ReferenceWorker

QUICK_SIZES = [2, 1000]
# The engine's block of a Multiply case (benchmarks/multiply.py).
MULTIPLY_BLOCK = "multiply:multiply_block"
# Each reference pass times each case in ~10 ms loops for this long: ~30 loops a pass.
PASS_SECONDS = 0.3


def cases(sizes):
    return [(size, dtype, mode) for size in sizes for dtype in grid.DTYPES for mode in grid.MODES]


def compare(suite, passes, engine_faults=None):
    """One row per case: the suite against the reference's loops of every pass, pooled.

    suite: {case id: {"value": asv's value, "samples": its samples or None}};
    passes: [{(size, dtype, mode): {"loops": per-op seconds of each reference loop,
    "faults": per-op page faults of each}}, ...]; engine_faults: {(size, dtype, mode):
    per-op page faults of each block the engine ran for asv, its warm-up's included}.
    Faults are compared as medians, times as asv compares them: the median.
    A case is compared where every pass timed it and the suite measured it. Passes
    alternate between the reference's two halves (even, odd): their disagreement,
    the larger half's median over the smaller's, is the reference against itself.
    """
    rows = []
    for case in sorted(set.intersection(*(set(p) for p in passes)) if passes else ()):
        got = suite.get(case_id(MULTIPLY, map(repr, ("cpu", *case)))) or {}
        value = got.get("value")
        if value is None or not math.isfinite(value):
            continue
        loops = [seconds for p in passes for seconds in p[case]["loops"]]
        bare_faults = [faults for p in passes for faults in p[case]["faults"]]
        suite_faults = (engine_faults or {}).get(case)
        bare, bare_fast = stats.median(loops), stats.fast(loops)
        pass_medians = [stats.median(p[case]["loops"]) for p in passes]
        halves = [stats.median([seconds for p in passes[half::2] for seconds in p[case]["loops"]])
                  for half in (0, 1)] if len(passes) > 1 else None
        itself = max(halves) / min(halves) if halves else None
        suite_fast = stats.fast(got.get("samples"))
        fast_ratio = suite_fast / bare_fast if suite_fast is not None else None
        rows.append({
            "size": case[0], "dtype": case[1], "mode": case[2], "suite": value, "bare": bare,
            "ratio": value / bare, "between_processes": max(pass_medians) / min(pass_medians),
            "ok": stats.within(value / bare),
            "reference_itself": itself,
            "reference_itself_ok": itself is not None and stats.within(itself),
            "suite_fast": suite_fast, "bare_fast": bare_fast, "fast_ratio": fast_ratio,
            "fast_ok": fast_ratio is not None and stats.within(fast_ratio),
            "suite_faults": statistics.median(suite_faults) if suite_faults else None,
            "bare_faults": statistics.median(bare_faults) if bare_faults else None,
        })
    return rows


def fault_mismatches(rows):
    """The rows whose page faults per op differ between the suite and the bare loop by
    more than a tenth and more than one per op: where one side's results land on fresh
    pages and the other's do not."""
    return [r for r in rows
            if r["suite_faults"] is not None and r["bare_faults"] is not None
            and abs(r["suite_faults"] - r["bare_faults"])
            > max(1.0, 0.1 * max(r["suite_faults"], r["bare_faults"]))]


def reference_pass(worker, wanted, seconds=PASS_SECONDS):
    """{case: {"loops": per-op seconds of each loop, "faults": per-op page faults of
    each}} for every case the worker could time."""
    out = {}
    for case in wanted:
        try:
            loops, faults = worker.loops_and_faults(*case, seconds)
            out[case] = {"loops": loops, "faults": faults}
        except RuntimeError:  # a case the bare loop cannot run is not compared
            continue
    return out


def run_part(args, scratch, commit, figures):
    """Print the fidelity of every cpu case next to its target; whether all are met."""
    sizes = QUICK_SIZES if args.quick else grid.SIZES
    section(f"fidelity: the suite under `asv run --launch-method {scratch.launch_method}` "
            "vs the same call in a bare loop, every cpu case")
    wanted = cases(sizes)
    rounds = suite_module("multiply").Multiply.rounds
    passes = []

    def one_pass(after_round=0):
        progress(f"  reference pass {after_round + 1}/{rounds + 1} ({len(wanted)} cases), "
                 "each half of the reference in a process of its own...")
        got = {}
        # The half asked first alternates, so neither half always follows asv's round.
        for half in (0, 1) if after_round % 2 == 0 else (1, 0):
            with ReferenceWorker() as worker:
                got[half] = reference_pass(worker, wanted)
        passes.extend([got[0], got[1]])

    one_pass()
    progress(f"  asv run of the same cases, one round at a time ({rounds})...")
    scratch.run_interleaved([commit], rounds, bench=stats.case_regex(MULTIPLY, "cpu", sizes),
                            between=one_pass, progress=progress)
    engine_faults = {tuple(block[2:]): faults
                     for block, faults in scratch.page_faults(commit).items()
                     if block[:2] == (MULTIPLY_BLOCK, "cpu")}
    rows = compare(stats.unroll_results(scratch.result_file(commit)), passes, engine_faults)
    tolerance = f"target 1.00 +- {stats.FIDELITY_TOLERANCE:.2f}"
    print(f"  {'case':<30} {'suite/op':>10} {'bare/op':>10} {'ratio':>6}  {tolerance}"
          f"   {'fast ratio':>10}  {'bare vs itself':>14}  (bare: slowest / fastest process)"
          "  page faults per op: suite / bare")
    for r in rows:
        label = f"{r['size']}x{r['size']} {r['dtype']} {r['mode']}"
        fast = (f"{r['fast_ratio']:10.3f} {fmt.verdict(r['fast_ok'])}"
                if r["fast_ratio"] is not None else f"{'-':>10}     ")
        print(f"  {label:<30} {fmt.seconds(r['suite']):>10} {fmt.seconds(r['bare']):>10} "
              f"{r['ratio']:6.3f}  {fmt.verdict(r['ok']):<25}   {fast}  "
              f"{_itself(r):>14}  ({r['between_processes']:.2f})  "
              f"{_faults(r['suite_faults'])} / {_faults(r['bare_faults'])}")
    for key, what in (("ratio", "median ratio (the recorded value)"),
                      ("fast_ratio", "fast ratio (10th percentiles: what the suite adds)")):
        ratios = [r[key] for r in rows if r[key] is not None]
        if ratios:
            within = sum(stats.within(x) for x in ratios)
            print(f"  {what}: {within}/{len(rows)} within target; "
                  f"{min(ratios):.3f}-{max(ratios):.3f}, median {stats.median(ratios):.3f}")
    print(noise_floor(rows))
    differ = fault_mismatches(rows)
    print(f"  page faults per op: {len(differ)}/{len(rows)} cases differ between the suite "
          "and the bare loop (by more than a tenth and one per op)"
          + "".join(f"\n    {r['size']}x{r['size']} {r['dtype']} {r['mode']}: "
                    f"{_faults(r['suite_faults'])} / {_faults(r['bare_faults'])}"
                    for r in differ))
    figures["fidelity"] = {"launch_method": scratch.launch_method, "cases": rows}
    return bool(rows) and all(r["ok"] for r in rows) and len(rows) == len(wanted)


def noise_floor(rows):
    """What the reference's two halves, against each other, say of the target here."""
    itself = [r for r in rows if r["reference_itself"] is not None]
    if not itself:
        return "  the reference against itself: not measured (a single reference pass)"
    agree = sum(r["reference_itself_ok"] for r in itself)
    spread = [r["reference_itself"] for r in itself]
    misses = [r for r in itself if not r["ok"]]
    covered = sum(abs(r["ratio"] - 1.0) <= r["reference_itself"] - 1.0 for r in misses)
    return (f"  the reference against itself (its two halves, made alike in this run): "
            f"{agree}/{len(itself)} within target, {min(spread):.3f}-{max(spread):.3f}, "
            f"median {stats.median(spread):.3f}; "
            f"{covered} of the suite's {len(misses)} misses are no larger than the "
            "reference's disagreement with itself on that case"
            + ("" if agree == len(itself) else
               " (where the reference misses its own target, this machine's noise is "
               "larger than the target: a quiet machine is needed to judge it)"))


def _itself(r):
    if r["reference_itself"] is None:
        return "-"
    return f"{r['reference_itself']:.3f} {fmt.verdict(r['reference_itself_ok'])}"


def _faults(per_op):
    return "-" if per_op is None else f"{per_op:,.1f}"
