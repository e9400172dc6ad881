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


def run_part(args, figures, seconds=STABILITY_SECONDS):
    """Print the machine's own steadiness next to what the targets need; whether steady."""
    size, dtype, mode = CASE
    section(f"stability: this machine's own speed, {size}x{size} {dtype} {mode} in ~10 ms "
            f"loops back to back for {seconds:.0f} s, no suite code")
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
    figures["stability"] = got
    return got["steady"]
