"""Sensitivity: does asv flag a real change, and only a real one?

The large cpu Multiply cases are measured twice, the second time with a slowing
environment (by default TF_NUM_INTRAOP_THREADS=1), their rounds interleaved as
the gate's asv continuous interleaves two stacks'; every case whose time really changed by more than
the factor must be flagged, in the right direction, and nothing else, by the
gate's verdict: the cases the first pass finds changed past the screening factor
(alerts.screening_factor) are measured again, both ways, and judged on that second
pass, at the factor (noise.measure_again, commands/gate.py). What really
changed is measured outside the suite's code: the same calls in bare loops
(reference_worker.py), in both environments, in passes before asv's runs and after
them. A case whose passes disagree about the factor (past it in one, within it in
another) moved by itself within the run as much as the change to judge: it is
listed, and judged neither way (stats.settle).
"""

import math

from .. import alerts
from .. import format as fmt
from ..names import MULTIPLY, case_id
from ..suite import grid
from . import stats
from .console import progress, section
from .noise import measure_again
from .reference import measure_passes

SLOW_ENV_DEFAULT = "TF_NUM_INTRAOP_THREADS=1"
# Bare-loop passes before asv's runs, and as many after: the truth brackets what asv
# measured. Each pass is a new worker per environment, ~15 s for the default sizes.
TRUTH_PASSES_EACH_SIDE = 2


def run_part(args, scratch, baseline, slowed, rounds, figures, again=()):
    """Print which real changes asv caught; whether every one was. again: the two commits
    of the gate's second pass (none: the first pass decides)."""
    variable, _, value = args.slow_env.partition("=")
    section(f"sensitivity: {MULTIPLY} with {args.slow_env} vs default")
    sizes = [int(s) for s in args.sizes.split(",")]
    # asv's -b matches "name(param, ...)" too, so only these combinations start processes.
    selection = stats.case_regex(MULTIPLY, "cpu", sizes)
    wanted = [(size, dtype, mode) for size in sizes for dtype in grid.DTYPES
              for mode in grid.MODES]
    truth_envs = {"default": {}, "slowed": {variable: value}}
    progress("  the truth before asv: the same calls in bare loops, default and slowed, "
             "asked in turn...")
    before = measure_passes(wanted, truth_envs, TRUTH_PASSES_EACH_SIDE, progress)
    progress(f"  Multiply, default and with {args.slow_env}, {rounds} interleaved rounds...")
    envs = {slowed: {variable: value}}
    scratch.run_interleaved([baseline, slowed], rounds, bench=selection, envs=envs,
                            progress=progress)
    rows, first_pass = _compared(scratch, baseline, slowed, args.factor)
    flags = first_pass
    screened = measure_again(scratch, (baseline, slowed), again, rounds, args.factor, envs,
                             progress) if again else {}
    if screened:
        screen = alerts.screening_factor(args.factor)
        measured_again, second = _compared(scratch, *again, args.factor)
        flags = stats.second_pass_verdict(screened, second)
        # asv's ratio of each case: its second pass's where it was measured again.
        rows = rows + [r for r in measured_again if r["ratio"] is not None]
        print(f"  the first pass flagged {len(first_pass)} past x{args.factor:g}, and "
              f"{len(screened) - len(first_pass)} more past x{screen:.4g}; measured again, "
              f"as the gate does, {len(flags)} of them flagged again past x{args.factor:g}: "
              "the gate's verdict below")

    progress("  the truth after asv: the same bare loops again...")
    after = measure_passes(wanted, truth_envs, TRUTH_PASSES_EACH_SIDE, progress)
    pass_ratios = _pass_ratios(before, after)
    ratios, unsettled = stats.settle(pass_ratios, args.factor)
    # A case some pass could not time has no truth: listed, and judged neither way.
    untimed = sorted({_case_name(case) for case in wanted} - set(pass_ratios))
    match = stats.match_flags(ratios, flags, args.factor, unsettled + untimed)
    real = len(match["caught"]) + len(match["missed"]) + len(match["wrong_way"])
    asv_ratio = {r["name"]: r["ratio"] for r in rows}
    print(
        f"  cases measured: {len(ratios)}; really changed by more than x{args.factor} "
        f"(bare clock, every pass): {real}; unsettled (the bare loop's passes disagree "
        f"about the factor), judged neither way: {len(unsettled)}"
    )
    for name in unsettled:
        passes = " ".join(f"x{r:.2f}" for r in pass_ratios[name])
        print(f"    unsettled: bare {passes}, asv x{asv_ratio.get(name) or math.nan:.2f}"
              f"{' flagged ' + flags[name] if name in flags else ''}  {name}")
    for name in untimed:
        print(f"    not timed by every bare-loop pass, judged neither way: {name}")
    passed = not match["missed"] and not match["wrong_way"]
    # With no real change there is nothing to catch: say so rather than pass.
    word = fmt.verdict(passed) if real else "INCONCLUSIVE (no real change to catch)"
    print(
        f"  flagged by asv: {len(flags)}; caught {len(match['caught'])}/{real}  "
        f"target {real}/{real}  {word}"
        + (f"  ({len(unsettled) + len(untimed)} of {len(wanted)} unsettled or untimed, "
           "not judged)" if unsettled or untimed else "")
    )
    for name in match["missed"] + match["wrong_way"]:
        print(
            f"    missed: bare x{ratios[name]:.2f}, asv x{asv_ratio.get(name) or math.nan:.2f}"
            f"  {name}"
        )
    print(f"  flagged without a real change past the factor: {len(match['false'])}")
    for name in match["false"]:
        print(
            f"    false alarm: bare x{ratios.get(name, math.nan):.2f}, "
            f"asv x{asv_ratio.get(name) or math.nan:.2f}  {name}"
        )
    # What the passes' median alone says, settled or not: beside the verdict, so a reader
    # sees what leaving the unsettled cases out changed.
    median_only = stats.match_flags(ratios, flags, args.factor, untimed)
    if unsettled:
        loose_real = sum(len(median_only[k]) for k in ("caught", "missed", "wrong_way"))
        print(f"  by the passes' median alone, unsettled cases too: caught "
              f"{len(median_only['caught'])}/{loose_real}, false alarms "
              f"{len(median_only['false'])} (not the verdict)")
    changed = sorted(((name, r) for name, r in ratios.items() if name not in unsettled),
                     key=lambda kv: -kv[1])[:5]
    print(
        "  largest settled slowdowns: "
        + ", ".join(f"{name[len(MULTIPLY) :]} x{r:.2f}" for name, r in changed)
    )
    figures["sensitivity"] = {
        "env": args.slow_env,
        "truth_ratios": ratios,
        "truth_pass_ratios": pass_ratios,
        "truth_passes_each_side_of_asv": TRUTH_PASSES_EACH_SIDE,
        "unsettled": unsettled,
        "untimed": untimed,
        "median_only": median_only,
        "flagged_first_pass": first_pass,
        "screened_first_pass": screened,
        "flagged": flags,
        "match": match,
        "really_changed": real,
    }
    return passed and real > 0


def _compared(scratch, before, after, factor):
    """(rows, flags) of asv compare's Multiply rows between two commits."""
    rows = [r for r in stats.parse_compare(scratch.compare(before, after, factor))
            if r["name"].startswith(MULTIPLY + "(")]
    return rows, stats.flagged(rows)


def _case_name(case):
    return case_id(MULTIPLY, map(repr, ("cpu", *case)))


def _pass_ratios(*measured):
    """{case id: [slowed / default median of each pass]} over `measure_passes` answers,
    for the cases every one of them timed (nan where a default time is not positive)."""
    common = set.intersection(*(set(m) for m in measured))
    return {_case_name(case):
            [s["median"] / d["median"] if d["median"] > 0 else math.nan
             for m in measured for d, s in zip(m[case]["default"], m[case]["slowed"])]
            for case in sorted(common, key=str)}
