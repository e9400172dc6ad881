"""The self-check's numbers as pure functions: no TensorFlow, no asv runs, no I/O.

Everything here takes plain data (lists, dicts, the text asv prints, the JSON
asv writes) so tests can feed it outputs captured from real runs.
"""

import collections
import itertools
import math
import re
import statistics

from ..names import case_id

# The factor `asv compare` uses for the noise and sensitivity checks.
FACTOR = 1.1
# Fidelity target: the suite's per-op time within 5% of a bare loop's.
FIDELITY_TOLERANCE = 0.05


def percentile(values, q):
    """The q-th quantile (0..1) of `values`, linearly interpolated like numpy's default."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def median(values):
    return percentile(values, 0.5)


# The fast time of a set of samples: the op while the machine ran at full speed.
FAST_QUANTILE = 0.1


def fast(samples):
    """The FAST_QUANTILE of `samples` (None if there are none)."""
    return percentile(samples, FAST_QUANTILE) if samples else None


def within(ratio, tolerance=FIDELITY_TOLERANCE):
    """Whether a ratio of two timings is 1.00 +- tolerance."""
    return abs(ratio - 1.0) <= tolerance


def spread(q25, q75, middle):
    """asv's interquartile range relative to its median: the run's own noise."""
    if middle is None or q25 is None or q75 is None or not middle or math.isnan(middle):
        return math.nan
    return (q75 - q25) / middle


def distribution(values):
    """Summary of a list of numbers: count, min, median, 90th percentile, max."""
    values = [v for v in values if v is not None and not math.isnan(v)]
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "min": min(values),
        "median": median(values),
        "p90": percentile(values, 0.9),
        "max": max(values),
    }


# --- asv's result files ------------------------------------------------------


def case_regex(benchmark, device, sizes):
    """An `asv run -b` regex selecting `benchmark`'s combinations for one device and
    some sizes: asv matches -b against "name(param, ...)" for each combination."""
    alternatives = "|".join(str(size) for size in sizes)
    return f"^{re.escape(benchmark)}\\('{device}', ({alternatives}), "


def unroll_results(result_file):
    """{case id: {value, q25, q75, repeat, samples}} for every parameter combination
    in a parsed asv result file (format version 2, columns named in result_columns;
    samples only where asv ran with --record-samples, else None)."""
    columns = result_file["result_columns"]
    cases = {}
    for benchmark, row in result_file["results"].items():
        entry = dict(zip(columns, row))
        params = entry.get("params") or []
        combos = list(itertools.product(*params)) if params else [()]
        values = entry["result"]
        if not isinstance(values, list):
            values = [values]
        for i, combo in enumerate(combos):

            def column(name, i=i, entry=entry):
                got = entry.get(name)
                return got[i] if isinstance(got, list) and i < len(got) else None

            value = values[i] if i < len(values) else None
            cases[case_id(benchmark, combo)] = {
                "benchmark": benchmark,
                "value": value,
                "q25": column("stats_q_25"),
                "q75": column("stats_q_75"),
                "repeat": column("stats_repeat"),
                "samples": column("samples"),
            }
    return cases


def spreads(cases, prefix="time_"):
    """{case id: IQR/median} for the measured (not skipped) cases of time benchmarks."""
    out = {}
    for name, case in cases.items():
        if prefix not in case["benchmark"].rsplit(".", 1)[-1]:
            continue
        value = case["value"]
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        out[name] = spread(case["q25"], case["q75"], value)
    return out


def split_rounds(results, rounds_run, prefix="time_"):
    """Each round's own samples of an interleaved run.

    results: {commit: unroll_results of its result file}; rounds_run: [(commit, round
    number, {case: samples it held after that round})] in the order the rounds ran
    (Scratch.rounds_run). Returns [(commit, number, {case: that round's samples})] in
    that order, for the cases of `prefix` benchmarks.
    """
    rounds = []
    before = {}  # {(commit, case): samples it held before this round}
    for commit, number, counts in rounds_run:
        taken = {}
        for case, count in counts.items():
            got = results[commit].get(case) or {}
            if prefix not in got.get("benchmark", "").rsplit(".", 1)[-1]:
                continue
            # A case that failed in a later round has no samples left in the final file
            # (asv drops them); one that failed and came back counts again from 0. Either
            # leaves some round without samples, and the case out of round_drift's `common`.
            taken[case] = (got.get("samples") or [])[before.get((commit, case), 0):count]
            before[commit, case] = count
        rounds.append((commit, number, taken))
    return rounds


def round_drift(results, rounds_run, prefix="time_"):
    """How the machine's speed moved from round to round of an interleaved run
    (arguments as split_rounds).

    Returns [(commit, number, ratio)] in the order the rounds ran: over the cases every
    round measured, the median of (the round's median sample / the case's median over
    every round of every commit). In an A/A every commit runs the same code, so these
    move only with the machine.
    """
    rounds = split_rounds(results, rounds_run, prefix)
    if not rounds:
        return []
    common = set.intersection(*({c for c, got in taken.items() if got}
                                for _, _, taken in rounds))
    if not common:
        return []
    overall = {c: median([x for _, _, taken in rounds for x in taken[c]]) for c in common}
    return [(commit, number, median([median(taken[c]) / overall[c] for c in common]))
            for commit, number, taken in rounds]


def round_spread(results, rounds_run, prefix="time_"):
    """Where an interleaved run's noise sits (arguments as split_rounds).

    Returns {"within": distribution of the spread (IQR / median) of each case's samples in
    each round, "between": distribution of each case's slowest round median over its
    fastest, per commit, over the cases every round of that commit measured}. asv's test
    takes every sample as a draw of its own; where "between" is past the factor while
    "within" is small, a case's samples carry the evidence of its rounds, not of their
    number, and its flags are the rounds' (docs/selfcheck-runs.md).
    """
    rounds = split_rounds(results, rounds_run, prefix)
    within, medians = [], {}
    for commit, _, taken in rounds:
        for case, samples in taken.items():
            if not samples:
                continue
            middle = median(samples)
            within.append(spread(percentile(samples, 0.25), percentile(samples, 0.75), middle))
            medians.setdefault((commit, case), []).append(middle)
    count = collections.Counter(commit for commit, _, _ in rounds)
    between = [max(m) / min(m) for (commit, _), m in medians.items()
               if len(m) == count[commit] > 1 and min(m) > 0]
    return {"within": distribution(within), "between": distribution(between)}


def drift_lean(drift, before, after):
    """What round_drift's rounds alone make of `after` against `before`: the mean of
    after's round ratios over the mean of before's. 1.0 where the machine's drift fell on
    both alike; asv continuous's order (before, after, after, before, ...) cancels a
    steady drift, not a slow first or last round, which is before's."""
    def mean(commit):
        return statistics.fmean(ratio for c, _, ratio in drift if c == commit)

    return mean(after) / mean(before)


def benchmark_durations(result_file):
    """{benchmark: seconds asv spent on it, all its combinations and rounds}."""
    columns = result_file["result_columns"]
    index = columns.index("duration")
    return {name: row[index] for name, row in result_file["results"].items()}


def process_count(benchmarks, launch_method):
    """Benchmark processes an `asv run` starts for a suite, from asv's benchmarks.json.

    asv starts one process per (benchmark, parameter combination, round),
    skipped combinations included; time benchmarks run `rounds` rounds, others
    one. With spawn each is a fresh interpreter importing TensorFlow; with
    forkserver each is a fork of one server that imported the suite once.
    Discovery adds one interpreter either way, forkserver's server another.
    """
    total = 0
    for name, info in benchmarks.items():
        if name == "version":
            continue
        combos = 1
        for values in info.get("params") or []:
            combos *= len(values)
        total += combos * int(info.get("rounds", 1))
    fresh = 1 + (total if launch_method == "spawn" else 1)
    return {"benchmark_processes": total, "fresh_interpreters": fresh}


# --- asv compare's output ----------------------------------------------------

_SECTIONS = {
    "Benchmarks that have improved:": "improved",
    "Benchmarks that have stayed the same:": "same",
    "Benchmarks that have got worse:": "worse",
    "Benchmarks that are not comparable:": "not comparable",
    "All benchmarks:": "all",
}
_ROW = re.compile(
    r"^\|\s*(?P<mark>[-+~x!* ]?)\s*\|(?P<before>[^|]*)\|(?P<after>[^|]*)\|"
    r"(?P<ratio>[^|]*)\|\s*(?P<name>.*?)\s*\|\s*$"
)


def parse_compare(text):
    """Rows of `asv compare` (with or without --split) as dicts.

    Each row: section, mark ('+' slower, '-' faster, ' ' unchanged or not
    significant, 'x' not comparable, '!' newly failing, '*' fixed), before,
    after, ratio (float or None), insignificant (asv printed '~': the ratio is
    past the factor but the statistics don't support it), name.
    """
    rows = []
    section = "all"
    for line in text.splitlines():
        stripped = line.strip()
        if stripped in _SECTIONS:
            section = _SECTIONS[stripped]
            continue
        match = _ROW.match(stripped)
        if not match or match["name"] == "Benchmark (Parameter)":
            continue
        if set(match["before"].strip()) <= {"-"}:  # the header's ruler
            continue
        ratio_text = match["ratio"].strip()
        number = ratio_text.lstrip("~")
        try:
            ratio = float(number)
        except ValueError:
            ratio = None
        rows.append(
            {
                "section": section,
                "mark": match["mark"].strip() or " ",
                "before": match["before"].strip(),
                "after": match["after"].strip(),
                "ratio": ratio,
                "insignificant": ratio_text.startswith("~"),
                "name": match["name"],
            }
        )
    return rows


def flagged(rows):
    """{case id: mark} for the rows asv calls a significant change ('+' or '-')."""
    return {row["name"]: row["mark"] for row in rows if row["mark"] in ("+", "-")}


def second_pass_verdict(first, second):
    """The gate's verdict (commands/gate.py): {case: mark} of the cases the first pass
    flagged ({case: mark}) that the second, measuring them again, flagged the same way.
    A case the first pass did not flag stays unflagged."""
    return {case: mark for case, mark in second.items() if first.get(case) == mark}


def changed(truth_ratios, factor=FACTOR):
    """Cases whose independently measured time ratio is past the factor either way."""
    return {
        name
        for name, ratio in truth_ratios.items()
        if ratio is not None and not math.isnan(ratio) and (ratio > factor or ratio < 1 / factor)
    }


def settle(pass_ratios, factor=FACTOR):
    """(ratios, unsettled) of the truth from bare-loop ratios taken pass by pass, at
    moments spread over the run ({case: [after/before of each pass]}): each case's
    median ratio, and the cases whose passes fall on different sides of the factor
    (past it slower, within it, past it faster). There the machine moved, within the
    run, by as much as the change to be judged: the truth cannot say whether the case
    changed past the factor, so neither a catch nor a false alarm is counted there."""
    def side(ratio):
        if ratio is None or not math.isfinite(ratio):
            return None  # a pass that could not say: never agrees with another
        return 1 if ratio > factor else -1 if ratio < 1 / factor else 0

    ratios, unsettled = {}, []
    for case, values in pass_ratios.items():
        sides = [side(v) for v in values]
        if None in sides or len(set(sides)) > 1:
            unsettled.append(case)
        finite = [v for v in values if v is not None and math.isfinite(v)]
        ratios[case] = median(finite) if finite else math.nan
    return ratios, sorted(unsettled)


def match_flags(truth_ratios, flags, factor=FACTOR, unsettled=()):
    """How asv's verdicts line up with the real changes.

    truth_ratios: {case id: after/before from bare timings}; flags: from
    `flagged`; unsettled: cases whose truth `settle` could not decide, judged
    neither way. Returns caught (really changed and flagged in the right
    direction), missed (really changed, not flagged), false (flagged, not
    really changed past the factor) and wrong_way (flagged opposite to the
    real change), each sorted.
    """
    unsettled = set(unsettled)
    real = changed(truth_ratios, factor) - unsettled
    caught, missed, wrong_way = [], [], []
    for name in sorted(real):
        mark = flags.get(name)
        direction = "+" if truth_ratios[name] > 1 else "-"
        if mark == direction:
            caught.append(name)
        elif mark is None:
            missed.append(name)
        else:
            wrong_way.append(name)
    false = sorted(name for name in flags if name not in real and name not in unsettled)
    return {"caught": caught, "missed": missed, "false": false, "wrong_way": wrong_way}
