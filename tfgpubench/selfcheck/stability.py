"""Stability: how steady is this machine's own speed, whatever the suite does?

The reference worker (no suite code) times a 2x2 int32 eager multiply in ~10 ms
loops, back to back, for STABILITY_SECONDS. On a machine of its own the loops
agree within a few percent. On a shared VM, neighbours that come and go slow it
for milliseconds to seconds at a time, invisibly from inside (the quiet gate
reads /proc, which does not see them): this suite's 2-core VM switched between
two speeds ~1.5x apart every few seconds (2026-12-01). Where the machine's own
loops spread wider than the targets, samples taken at other moments (asv's, the
reference's) cannot agree to within them: the part says so, with the figures,
so a FAIL of fidelity or noise can be read for what it is.

A probe at the start does not vouch for the run after it: on this suite's VM a probe
read p90 / fast 1.15, and over the next 40 minutes the bare loop's slowest process of a
case read up to 2.5x its fastest (2026-12-03). So where other parts ran, the probe runs
again at the end (across_the_run): the figures between are read against both.
"""

from .. import format as fmt
from . import stats
from .console import progress, section
from .reference import ReferenceWorker

CASE = (2, "int32", "eager")  # the seed's case: dispatch-bound, the most sensitive
STABILITY_SECONDS = 20.0


def summarize(loops, factor=stats.FACTOR, tolerance=stats.FIDELITY_TOLERANCE):
    """Figures of the loops' per-op times and whether the machine is steady enough.

    fast: their 10th percentile (the machine at full speed); median and p90
    relative to it; slow_share: the share of loops slower than fast * factor.
    Steady when the median is within the fidelity tolerance of the fast time
    and the 90th percentile within the compare factor.
    """
    fast = stats.fast(loops)
    median = stats.median(loops) / fast
    p90 = stats.percentile(loops, 0.9) / fast
    slow_share = sum(t > fast * factor for t in loops) / len(loops)
    return {
        "loops": len(loops), "fast": fast, "median_over_fast": median, "p90_over_fast": p90,
        "slow_share": slow_share, "steady": median <= 1 + tolerance and p90 <= factor,
    }


def across_the_run(before, after, tolerance=stats.FIDELITY_TOLERANCE):
    """The machine over the whole self-check, from the probes at its start and its end.

    fast_moved: the end's full-speed time over the start's. Steady throughout when both
    probes were steady and the full speed moved no more than the fidelity tolerance: a
    machine whose full speed changed between them (another host, a frequency cap) ran
    the parts between at a speed neither probe saw.
    """
    moved = after["fast"] / before["fast"]
    return {"fast_moved": moved,
            "steady": before["steady"] and after["steady"] and stats.within(moved, tolerance)}


def run_part(args, figures, seconds=STABILITY_SECONDS, again=False):
    """Print the machine's own steadiness next to what the targets need; whether steady.

    again: the probe at the end of the run, after the other parts; it is recorded as
    figures["stability_after"] and read against the first (across_the_run)."""
    size, dtype, mode = CASE
    section(f"stability{', again after the other parts' if again else ''}: this machine's "
            f"own speed, {size}x{size} {dtype} {mode} in ~10 ms loops back to back for "
            f"{seconds:.0f} s, no suite code")
    progress("  timing the loops...")
    with ReferenceWorker() as worker:
        got = summarize(worker.loops(size, dtype, mode, seconds), args.factor)
    print(f"  {got['loops']} loops; fast (10th percentile) {fmt.seconds(got['fast'])} per op")
    print(f"  median / fast {got['median_over_fast']:.3f}   needs <= "
          f"{1 + stats.FIDELITY_TOLERANCE:.2f} for fidelity to be judged")
    print(f"  p90 / fast    {got['p90_over_fast']:.3f}   needs <= {args.factor:.2f} for an A/A "
          f"at factor {args.factor} to hold")
    print(f"  {fmt.share(got['slow_share'])} of the loops ran more than x{args.factor} slower "
          f"than the fast time   {fmt.verdict(got['steady'])}")
    if not got["steady"]:
        print("  the machine itself is not steady to the targets: something it cannot see "
              "(a VM's neighbours, frequency changes) slows it; judge fidelity and noise "
              "on a quieter machine")
    if not again:
        figures["stability"] = got
        return got["steady"]
    figures["stability_after"] = got
    run = figures["stability_across_the_run"] = across_the_run(figures["stability"], got)
    print(f"  across the run: steady at the start {fmt.verdict(figures['stability']['steady'])}, "
          f"at the end {fmt.verdict(got['steady'])}; full speed moved "
          f"x{run['fast_moved']:.3f} (needs within 1.00 +- {stats.FIDELITY_TOLERANCE:.2f})   "
          f"{fmt.verdict(run['steady'])}")
    if not run["steady"]:
        print("  this machine was not steady throughout the run: the FAILs of the parts "
              "between say as much about it as about the suite")
    return run["steady"]
