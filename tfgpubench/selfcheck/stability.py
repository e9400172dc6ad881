"""Stability: how steady is this machine's own speed, whatever the suite does?

The reference worker (no suite code) times the eager multiply in ~10 ms loops, back to
back, for STABILITY_SECONDS, twice: a small op, and a large one (PROBES). On a machine
of its own the loops agree within a few percent. On a shared VM, neighbours that come
and go slow it for milliseconds to seconds at a time, invisibly from inside (the quiet
gate reads /proc, which does not see them): this suite's 2-core VM switched between two
speeds ~1.5x apart every few seconds (2026-12-01). Where the machine's own loops spread
wider than the targets, samples taken at other moments (asv's, the reference's) cannot
agree to within them: the part says so, with the figures, so a FAIL of fidelity or noise
can be read for what it is.

Why two probes. TensorFlow's default threads split an op of 512x512 and up over every
core (here: one thread reads 512x512 float32 at 42 us, the default at 84-87 us; 256x256
reads 19-21 us either way), and a split op ends when its slowest part does, so any core
that is late (taken by a neighbour on the host, or by another thread) delays it; an op
streaming from memory also meets what neighbours do to memory. On this suite's 2-core
VM, at the twelve moments of 16:11-16:25 UTC on 2026-12-07 when the 2x2 loop read p90 /
fast 1.03-1.08, 512x512 float32 read 1.03-1.21 on one thread (1.10 or less at 11 of
them) and 1.11-1.81 with the default threads (at none); 2048x2048 float32 read 1.09-1.29
on one thread (at 2 of 9) and 1.18-1.61 with the default threads (at none)
(scripts/probes_side_by_side.py's forerunner: 6 s of loops of each in turn). The 2x2
probe alone passed while the large cases could not agree with themselves; run right
after, at 16:25 and 16:26 (`selfcheck --only stability`, nothing else running), both
read 1.036 for the small probe against 1.280 and 1.378 for the large one.

A probe at the start does not vouch for the run after it: on this suite's VM a probe
read p90 / fast 1.15, and over the next 40 minutes the bare loop's slowest process of a
case read up to 2.5x its fastest (2026-12-03). So where other parts ran, the probes run
again at the end (across_the_run): the figures between are read against both.
"""

from .. import format as fmt
from . import stats
from .console import progress, section
from .reference import ReferenceWorker

# name -> ((size, dtype, mode), what it is and which cases it vouches for)
PROBES = {
    # The seed's case: dispatch-bound, the most sensitive to the machine's speed.
    "small": ((2, "int32", "eager"), "as on one thread, from the caches (what the cases up "
              "to 256x256 need)"),
    "large": ((2048, "float32", "eager"), "split over every core, streaming from memory "
              "(what the cases from 512x512 up need)"),
}
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
    """The machine over the whole self-check, from one probe at its start and its end.

    fast_moved: the end's full-speed time over the start's. Steady throughout when both
    probes were steady and the full speed moved no more than the fidelity tolerance: a
    machine whose full speed changed between them (another host, a frequency cap) ran
    the parts between at a speed neither probe saw.
    """
    moved = after["fast"] / before["fast"]
    return {"fast_moved": moved,
            "steady": before["steady"] and after["steady"] and stats.within(moved, tolerance)}


def _print_probe(name, got, factor):
    (size, dtype, mode), what = PROBES[name]
    print(f"  {name}: {size}x{size} {dtype} {mode}, {what}")
    print(f"    {got['loops']} loops; fast (10th percentile) {fmt.seconds(got['fast'])} per op")
    print(f"    median / fast {got['median_over_fast']:.3f}   needs <= "
          f"{1 + stats.FIDELITY_TOLERANCE:.2f} for fidelity to be judged")
    print(f"    p90 / fast    {got['p90_over_fast']:.3f}   needs <= {factor:.2f} for an A/A "
          f"at factor {factor} to hold")
    print(f"    {fmt.share(got['slow_share'])} of the loops ran more than x{factor} slower "
          f"than the fast time   {fmt.verdict(got['steady'])}")


def run_part(args, figures, seconds=STABILITY_SECONDS, again=False):
    """Print the machine's own steadiness, each probe next to what the targets need;
    whether every probe was steady.

    Recorded as figures["stability"]: {"probes": {name: summarize(...)}, "steady": ...};
    again: the probes at the end of the run, after the other parts, recorded as
    figures["stability_after"] and read against the first, probe by probe
    (figures["stability_across_the_run"], of the same shape, across_the_run's)."""
    section(f"stability{', again after the other parts' if again else ''}: this machine's "
            f"own speed, the eager multiply in ~10 ms loops back to back for {seconds:.0f} s "
            f"per probe, no suite code")
    probes = {}
    with ReferenceWorker() as worker:
        for name, (case, _) in PROBES.items():
            progress(f"  timing the {name} probe's loops...")
            probes[name] = summarize(worker.loops(*case, seconds), args.factor)
            _print_probe(name, probes[name], args.factor)
    got = {"probes": probes, "steady": all(p["steady"] for p in probes.values())}
    if not probes["small"]["steady"]:
        print("  the machine itself is not steady to the targets: something it cannot see "
              "(a VM's neighbours, frequency changes) slows it; judge fidelity and noise "
              "on a quieter machine")
    elif not probes["large"]["steady"]:
        print("  steady for small ops, not for large ones: an op split over every core waits "
              "for its slowest part, and one streaming from memory meets its neighbours "
              "there; the large cases' fidelity and A/A misses can be the machine's (read "
              "them against the reference against itself)")
    if not again:
        figures["stability"] = got
        return got["steady"]
    figures["stability_after"] = got
    before = figures["stability"]["probes"]
    across = {name: across_the_run(before[name], probes[name]) for name in PROBES}
    run = figures["stability_across_the_run"] = {
        "probes": across, "steady": all(a["steady"] for a in across.values())}
    for name in PROBES:
        print(f"  across the run, {name}: steady at the start "
              f"{fmt.verdict(before[name]['steady'])}, at the end "
              f"{fmt.verdict(probes[name]['steady'])}; full speed moved "
              f"x{across[name]['fast_moved']:.3f} (needs within 1.00 +- "
              f"{stats.FIDELITY_TOLERANCE:.2f})   {fmt.verdict(across[name]['steady'])}")
    if not run["steady"]:
        print("  this machine was not steady throughout the run: the FAILs of the parts "
              "between say as much about it as about the suite")
    return run["steady"]
