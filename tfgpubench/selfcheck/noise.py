"""Noise: the same stack measured twice must not be flagged, quiet or under passing load.

Two A/A pairs, each the time benchmarks of one stack under two commits, measured
as the gate's `asv continuous` measures two stacks: one round of every case for
each commit in turn, the order reversed every round (Scratch.run_interleaved).
The first pair on a quiet machine, the second while a second process is busy on
one core for a few seconds at a time (load.py). `asv compare --factor F` of each
pair, then the gate's second pass (commands/gate.py): the time cases the first pass
finds changed past the screening factor (alerts.screening_factor, F's square root)
measured again under two more commits, interleaved alike, and judged on that pass
alone, at F. Target: no time case flagged either way by the gate's verdict. Also the
distribution of each case's spread (IQR / median).
"""

from .. import alerts
from .. import format as fmt
from . import stats
from .console import section
from .load import BurstyLoad


def flags_of(scratch, before, after, factor):
    """(rows, {case: mark}) of asv compare between two commits."""
    rows = stats.parse_compare(scratch.compare(before, after, factor))
    return rows, stats.flagged(rows)


def time_flags(flags):
    """The time cases of asv compare's flags ({case: mark}): what the gate judges."""
    return {n: m for n, m in flags.items() if ".time_" in n}


def screened(scratch, pair, factor):
    """{case: mark} of the time cases asv compare finds changed between the commits of
    `pair` past the screening factor (alerts.screening_factor): what the gate measures
    again."""
    return time_flags(flags_of(scratch, *pair, alerts.screening_factor(factor))[1])


def measure_again(scratch, pair, again, rounds, factor, envs=None, progress=None):
    """The gate's second pass in the scratch: the time cases the first pass finds changed
    between the commits of `pair` (screened), measured again under the two commits
    `again`, `rounds` rounds interleaved as the first. envs: {commit of `pair`: its
    environment}, carried over to the commit of `again` in its place. Returns the cases
    measured again, as screened's {case: mark}."""
    picked = screened(scratch, pair, factor)
    cases = sorted(picked)
    if cases:
        if progress:
            progress(f"    the gate's second pass: the {len(cases)} screened case(s) again...")
        carried = {new: (envs or {}).get(old) for old, new in zip(pair, again)}
        scratch.run_interleaved(list(again), rounds, bench=alerts.case_patterns(cases),
                                envs=carried, progress=progress)
    return picked


def report_comparison(title, rows, flags):
    """Print one comparison's flagged cases; the time cases among them."""
    compared = [r for r in rows if r["ratio"] is not None]
    timed = time_flags(flags)
    print(f"  {title}: {len(compared)} cases compared; flagged: {len(timed)} time, "
          f"{len(flags) - len(timed)} one-value track")
    for name, mark in sorted(flags.items()):
        row = next(r for r in rows if r["name"] == name)
        print(f"    {mark} x{row['ratio']:.2f}  {name}")
    return timed


def report_second_pass(scratch, first, screened_first, again, factor):
    """Print the gate's verdict: each case the first pass screened ({case: mark},
    `screened`), judged on its second pass (`again`: its two commits); returns {case: mark}
    of those flagged again the same way, past the factor. first: the first pass's flags at
    the factor, the verdict where there is no second pass."""
    if not again:
        return dict(first)
    if not screened_first:  # nothing to measure again
        return {}
    rows, flags = flags_of(scratch, *again, factor)
    verdict = stats.second_pass_verdict(screened_first, flags)
    print(f"    measured again, as the gate does: the {len(screened_first)} case(s) past "
          f"x{alerts.screening_factor(factor):.4g} ({len(first)} past x{factor:g}); "
          f"{len(verdict)} flagged again past x{factor:g}")
    for name, mark in sorted(verdict.items()):
        row = next(r for r in rows if r["name"] == name)
        print(f"    {mark} x{row['ratio']:.2f}  {name}")
    return verdict


def report_drift(scratch, before, after, factor):
    """Print how the machine's speed moved over the pair's rounds (stats.round_drift) and
    the lean that alone gives `after` against `before`; returns both for the record."""
    results = {c: stats.unroll_results(scratch.result_file(c)) for c in (before, after)}
    rounds_run = [r for r in scratch.rounds_run if r[0] in results]
    drift = stats.round_drift(results, rounds_run)
    if not drift:
        print("    (no case was measured in every round: no drift between rounds to show)")
        return {}
    label = {before: "A", after: "B"}
    ratios = [ratio for _, _, ratio in drift]
    lean = stats.drift_lean(drift, before, after)
    print("    each round against the case's median, in the order they ran: "
          + "  ".join(f"{label[c]}{n} x{ratio:.2f}" for c, n, ratio in drift))
    print(f"    the machine moved x{max(ratios) / min(ratios):.2f} between rounds; "
          f"that alone puts B at x{lean:.2f} of A")
    where = stats.round_spread(results, rounds_run)
    within, between = where["within"], where["between"]
    if within["n"] and between["n"]:
        print(f"    a case's samples within one round spread {within['median']:.1%} (IQR / "
              f"median, median over cases and rounds); its round medians differ by "
              f"x{between['median']:.2f} (median; 90th percentile x{between['p90']:.2f})")
        if between["median"] > factor:
            print("    (past the factor: asv's test takes each sample as a draw of its own, "
                  "but a case's samples move together with their round, and the rounds "
                  "by more than the factor: a flag here can be the rounds', not the code's)")
    # Half the factor: a lean that size already turns the noisier cases into flags.
    if abs(lean - 1) > (factor - 1) / 2:
        first, last = label[drift[0][0]], label[drift[-1][0]]
        ends = (f"{first} ran both the first and the last round" if first == last
                else f"{first} ran the first round, {last} the last")
        print(f"    ({ends}, as asv continuous orders its commits; the drift reads as "
              f"{'B' if lean < 1 else 'A'} faster, and flags that lean that way are the "
              "machine's)")
    return {"order": [[label[c], n, ratio] for c, n, ratio in drift], "lean": lean,
            "within_round_spread": within, "between_rounds": between}


def run_part(args, scratch, runs, screened_first, figures):
    """runs: {"quiet": (A, B, A2, B2), "loaded": (A, C, A3, C3)} commits already measured:
    each A/A pair, then the commits of its second pass; screened_first: {"quiet": ...,
    "loaded": ...}, what measure_again returned for each pair. Prints the comparisons;
    whether the gate's verdict flagged no time case in either."""
    section(f"noise: the same stack measured again, asv compare --factor {args.factor}")
    figures["noise"] = {"load": BurstyLoad().describe()}
    ok = True
    for name, (before, after, *again) in runs.items():
        rows, flags = flags_of(scratch, before, after, args.factor)
        title = "quiet A/A" if name == "quiet" else f"A/A with {BurstyLoad().describe()}"
        timed = report_comparison(title, rows, flags)
        picked = screened_first[name] if again else {}
        confirmed = report_second_pass(scratch, timed, picked, again, args.factor)
        print(f"    the gate's verdict: {len(confirmed)} time case(s) flagged  target 0  "
              f"{fmt.verdict(not confirmed)}")
        figures["noise"][name] = {"compared": len([r for r in rows if r["ratio"] is not None]),
                                  "flagged_first_pass": flags, "time_flagged_first_pass":
                                  len(timed),
                                  # time cases only; {} where there is no second pass
                                  "screened_first_pass": picked,
                                  "flagged": confirmed,
                                  "time_flagged": len(confirmed),
                                  "rounds": report_drift(scratch, before, after, args.factor)}
        ok &= not confirmed
    spreads = {}
    # Each pair's first pass: every case once (a second pass holds only the screened ones,
    # and none where nothing was screened).
    for commit in {c for before, after, *_ in runs.values() for c in (before, after)}:
        for case, value in stats.spreads(stats.unroll_results(scratch.result_file(commit))).items():
            spreads.setdefault(case, []).append(value)
    d = stats.distribution([v for values in spreads.values() for v in values])
    if d["n"]:
        print(f"  spread (IQR / median) over {d['n']} measured time cases x runs: "
              f"median {d['median']:.1%}, 90th percentile {d['p90']:.1%}, max {d['max']:.1%}")
    figures["noise"]["spread"] = d
    return ok
