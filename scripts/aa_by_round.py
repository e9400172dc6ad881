"""Experiment: which rule on asv's samples holds the A/A target, and what it still catches.

asv compare (and continuous) run Mann-Whitney U on every sample of a case, as if each
were drawn on its own. A case's samples in one round are taken within about a second,
and a shared VM's speed can step by 2x for tens of seconds at a time, so a round's
samples share the machine's state: 40 samples from 4 rounds carry the evidence of
about 4. This script measures two A/A pairs of Multiply.time_multiply (one stack under
two commits, quiet, then under the self-check's bursty load), ROUNDS rounds interleaved
as asv continuous does, keeps the scratch, and judges each pair by asv's rule
(asv_runner's compute_stats, asv's is_different, the factor) several ways:

- the first 4, 6 and all ROUNDS rounds, every sample (what asv does now);
- the same rounds, one value per round (the round's median, or its first sample,
  which is what `repeat = 1` would record);
- with 8 rounds or more, a second pass: a case counts where rounds 1-4 flag it and
  rounds 5-8, judged on their own, flag it again the same way; rounds 1-4 judged at the
  factor, then at its square root (what `tfgpubench gate` does: it measures again the
  cases its first pass finds changed past that, and judges them at the factor).

Beside each, its power on this run's own noise: how many of the >= 100 us cases the
rule flags when B's samples are multiplied by 1.10, 1.15 and 1.25 (a known slowdown).

    python scripts/aa_by_round.py DIR [--rounds 8]      # measure (25-50 min, 2-core VM)
    python scripts/aa_by_round.py DIR --judge-only      # judge what DIR holds

Not part of the self-check: it takes twice the self-check's noise part, and it is a
question about the design, not a check of a machine.
"""

import argparse
import glob
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tfgpubench.selfcheck import stats  # noqa: E402

BENCHMARK = "multiply.Multiply.time_multiply"
FACTOR = stats.FACTOR
SLOWDOWNS = (1.10, 1.15, 1.25)


def say(message):
    print(time.strftime("%H:%M:%S"), message, flush=True)


def measure(root, rounds, config):
    from tfgpubench.selfcheck.asvruns import Scratch
    from tfgpubench.selfcheck.load import BurstyLoad

    scratch = Scratch(root, config, commits=4, launch_method="forkserver")
    quiet_a, quiet_b, loaded_a, loaded_b = scratch.hashes
    say("quiet A/A")
    scratch.run_interleaved([quiet_a, quiet_b], rounds, bench=BENCHMARK, progress=say)
    with BurstyLoad() as load:
        say(f"A/A with {load.describe()}")
        scratch.run_interleaved([loaded_a, loaded_b], rounds, bench=BENCHMARK, progress=say)
    (root / "pairs.json").write_text(json.dumps(
        {"pairs": {"quiet": [quiet_a, quiet_b], "loaded": [loaded_a, loaded_b]},
         "rounds_run": scratch.rounds_run}))


def flagged_ratio(first, second, factor=FACTOR):
    """asv's verdict on two sample lists: the ratio of medians where asv would flag it."""
    from asv._stats import is_different
    from asv_runner.statistics import compute_stats

    value_a, stats_a = compute_stats(first, 1)
    value_b, stats_b = compute_stats(second, 1)
    ratio = value_b / value_a
    if is_different(first, second, stats_a, stats_b) and not 1 / factor <= ratio <= factor:
        return ratio
    return None


def confirmed_ratio(first, again, factor=FACTOR, screen=None):
    """The second pass's ratio where asv's rule flags a case in the first pass at
    `screen` (default: the factor) and again, the same way, in a second pass judged on
    its own at the factor; else None. first, again: (A's values, B's values) of each
    pass."""
    ratio = flagged_ratio(*first, screen or factor)
    if ratio is None:
        return None
    repeat = flagged_ratio(*again, factor)
    if repeat is None or (ratio > 1) != (repeat > 1):
        return None
    return repeat


def samples_by_round(root, commit, rounds_run):
    """{case: [round 1's samples, round 2's, ...]} of one commit's time cases."""
    (path,) = glob.glob(f"{root}/results/*/{commit[:8]}-*.json")
    results = {commit: stats.unroll_results(json.loads(Path(path).read_text()))}
    out = {}
    for _, _, taken in stats.split_rounds(results, [r for r in rounds_run if r[0] == commit]):
        for case, samples in taken.items():
            out.setdefault(case, []).append(samples)
    return out


def ways(rounds):
    return {
        "every sample (asv now)": lambda taken: [x for r in taken[:rounds] for x in r],
        "one value a round (its median)": lambda taken: [statistics.median(r)
                                                         for r in taken[:rounds]],
        "one value a round (its first sample)": lambda taken: [r[0] for r in taken[:rounds]],
    }


def judge(root):
    kept = json.loads((root / "pairs.json").read_text())
    rounds_run = kept["rounds_run"]
    for pair, (first, second) in kept["pairs"].items():
        a = samples_by_round(root, first, rounds_run)
        b = samples_by_round(root, second, rounds_run)
        most = min(len(taken) for taken in a.values())
        print(f"== {pair} A/A, {BENCHMARK}, factor {FACTOR}")
        for rounds in sorted({4, 6, most} & set(range(1, most + 1))):
            for way, pick in ways(rounds).items():
                flags, compared, power = [], 0, {k: [0, 0] for k in SLOWDOWNS}
                for case, taken in a.items():
                    other = b.get(case)
                    if not other or not all(taken[:rounds]) or not all(other[:rounds]):
                        continue
                    compared += 1
                    first_values, second_values = pick(taken), pick(other)
                    ratio = flagged_ratio(first_values, second_values)
                    if ratio:
                        flags.append(f"x{ratio:.2f} {case}")
                    if statistics.median(first_values) >= 100e-6:
                        for k, counts in power.items():
                            counts[1] += 1
                            # Caught: flagged slower (a flag the other way is no catch).
                            counts[0] += (flagged_ratio(first_values,
                                                        [x * k for x in second_values])
                                          or 0) > 1
                print(f"  {rounds} rounds, {way}: {len(flags)} of {compared} flagged; "
                      "B slowed " + ", ".join(f"x{k}: {n} of {t} flagged"
                                              for k, (n, t) in power.items())
                      + " (cases >= 100 us)")
                for flag in flags:
                    print(f"      {flag}")
        if most >= 8:
            judge_confirmed(a, b)


def judge_confirmed(a, b):
    """Rounds 1-4 as the gate's pass, rounds 5-8 as its confirmation of what it flagged:
    flagged at the factor, then (what the gate does) at its square root
    (alerts.screening_factor)."""
    from tfgpubench.alerts import screening_factor

    def passes(taken, other, slowdown=1.0):
        first = ([x for r in taken[:4] for x in r], [x * slowdown for r in other[:4] for x in r])
        again = ([x for r in taken[4:8] for x in r],
                 [x * slowdown for r in other[4:8] for x in r])
        return first, again

    for screen in (FACTOR, screening_factor(FACTOR)):
        flags, once, compared, power = [], 0, 0, {k: [0, 0] for k in SLOWDOWNS}
        for case, taken in a.items():
            other = b.get(case)
            if not other or not all(taken[:8]) or not all(other[:8]):
                continue
            compared += 1
            first, again = passes(taken, other)
            once += flagged_ratio(*first, screen) is not None
            ratio = confirmed_ratio(first, again, screen=screen)
            if ratio:
                flags.append(f"x{ratio:.2f} {case}")
            if statistics.median(first[0]) >= 100e-6:
                for k, counts in power.items():
                    counts[1] += 1
                    counts[0] += (confirmed_ratio(*passes(taken, other, k), screen=screen)
                                  or 0) > 1
        print(f"  4 rounds, every sample, past x{screen:.4g} then confirmed by rounds 5-8 "
              f"past x{FACTOR}: {len(flags)} of {compared} flagged ({once} measured again); "
              "B slowed " + ", ".join(f"x{k}: {n} of {t} flagged"
                                      for k, (n, t) in power.items())
              + " (cases >= 100 us)")
        for flag in flags:
            print(f"      {flag}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir", type=Path, help="scratch folder, kept")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--config", default="asv.conf.json")
    parser.add_argument("--judge-only", action="store_true")
    args = parser.parse_args()
    if not args.judge_only:
        if args.dir.exists():
            parser.error(f"{args.dir} exists: give a new folder, or --judge-only")
        measure(args.dir, args.rounds, args.config)
    judge(args.dir)


if __name__ == "__main__":
    main()
