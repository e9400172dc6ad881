"""Stability: how steady is this machine's own speed, whatever the suite does?

The reference worker (no suite code) times the multiply in ~10 ms loops, back to back,
for STABILITY_SECONDS, twice: once on an op TensorFlow runs on one thread, once on an op
it splits over every core. On a machine of its own the loops agree within a few percent.
On a shared VM, neighbours that come and go slow it for milliseconds to seconds at a
time, invisibly from inside (the quiet gate reads /proc, which does not see them): this
suite's 2-core VM switched between two speeds ~1.5x apart every few seconds
(2026-12-01). Where the machine's own loops spread wider than the targets, samples taken
at other moments (asv's, the reference's) cannot agree to within them: the part says so,
with the figures, so a FAIL of fidelity or noise can be read for what it is.

Why two probes. An op split over every core ends when its slowest part does, so any core
that is late (taken by a neighbour on the host, or by another thread) delays it. On this
suite's 2-core VM, at six moments when the 2x2 loop read p90 / fast 1.04-1.08 and a
512x512 float32 multiply under TF_NUM_INTRAOP_THREADS=1 1.03-1.21, the same multiply
with the default threads read 1.23-1.81 and 2048x2048 1.29-1.61 (the reference worker, 6
s of loops of each in turn, 2026-12-07 16:11-16:18 UTC). The default threads split those
two: one thread read them at 42 us and 0.91-0.97 ms, the default at 85-86 us and
0.60-0.65 ms; at 256x256 both read 19-21 us. The 2x2 probe alone passed while the large
cases could not agree with themselves; two probes a minute later, with nothing else
running, read 1.036 and 1.036 on one core against 1.280 and 1.378 across them
(`selfcheck --only stability`, 16:25).

A probe at the start does not vouch for the run after it: on this suite's VM a probe
read p90 / fast 1.15, and over the next 40 minutes the bare loop's slowest process of a
case read up to 2.5x its fastest (2026-12-03). So where other parts ran, the probes run
again at the end (across_the_run): the figures between are read against both.
"""

from .. import format as fmt
from . import stats
from .console import progress, section
from .reference import ReferenceWorker

# name -> (size, dtype, mode), what the probe stands for
PROBES = {
    # The seed's case: dispatch-bound, the most sensitive to the machine's speed.
    "one_core": ((2, "int32", "eager"), "run as on one thread (2x2 to 256x256 on the "
                 "suite's 2-core VM)"),
    # Split over the cores and streaming from memory, as the large cases.
    "every_core": ((2048, "float32", "eager"), "split over every core (512x512 and up on "
                   "the suite's 2-core VM)"),
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
    (size, dtype, mode), stands_for = PROBES[name]
    print(f"  {name.replace('_', ' ')}: {size}x{size} {dtype} {mode}, {stands_for}")
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

    figures["stability"][name] for each of PROBES, and "steady"; again: the probes at the
    end of the run, after the other parts, recorded as figures["stability_after"] and
    read against the first (across_the_run, per probe)."""
    section(f"stability{', again after the other parts' if again else ''}: this machine's "
            f"own speed, the multiply in ~10 ms loops back to back for {seconds:.0f} s per "
            f"probe, no suite code")
    got = {}
    with ReferenceWorker() as worker:
        for name, (case, _) in PROBES.items():
            progress(f"  timing the loops of the {name.replace('_', ' ')} probe...")
            got[name] = summarize(worker.loops(*case, seconds), args.factor)
            _print_probe(name, got[name], args.factor)
    got["steady"] = all(got[name]["steady"] for name in PROBES)
    if not got["one_core"]["steady"]:
        print("  the machine itself is not steady to the targets: something it cannot see "
              "(a VM's neighbours, frequency changes) slows it; judge fidelity and noise "
              "on a quieter machine")
    elif not got["every_core"]["steady"]:
        print("  steady on one core, not across them: an op split over every core waits "
              "for its slowest part, so the large cases' fidelity and A/A misses can be the "
              "machine's (read them against the reference against itself)")
    if not again:
        figures["stability"] = got
        return got["steady"]
    figures["stability_after"] = got
    run = figures["stability_across_the_run"] = {
        name: across_the_run(figures["stability"][name], got[name]) for name in PROBES}
    run["steady"] = all(run[name]["steady"] for name in PROBES)
    for name in PROBES:
        print(f"  across the run, {name.replace('_', ' ')}: steady at the start "
              f"{fmt.verdict(figures['stability'][name]['steady'])}, at the end "
              f"{fmt.verdict(got[name]['steady'])}; full speed moved "
              f"x{run[name]['fast_moved']:.3f} (needs within 1.00 +- "
              f"{stats.FIDELITY_TOLERANCE:.2f})   {fmt.verdict(run[name]['steady'])}")
    if not run["steady"]:
        print("  this machine was not steady throughout the run: the FAILs of the parts "
              "between say as much about it as about the suite")
    return run["steady"]
