"""Noise: two full default runs of the same stack, compared with `asv compare`.

Target: nothing flagged at the factor; also the distribution of each case's
interquartile range relative to its median, the run's own spread.
"""

from .. import format as fmt
from . import stats
from .console import section


def run_part(args, scratch, first, second, figures):
    """Print how two runs of the same stack compare; whether nothing was flagged."""
    section(f"noise: two full runs of the same stack, asv compare --factor {args.factor}")
    rows = stats.parse_compare(scratch.compare(first, second, args.factor))
    flags = stats.flagged(rows)
    compared = [r for r in rows if r["ratio"] is not None]
    insignificant = [r for r in compared if r["insignificant"]]
    timed = {n: m for n, m in flags.items() if ".time_" in n}
    print(
        f"  {len(compared)} cases compared; flagged: {len(flags)} ({len(timed)} time, "
        f"{len(flags) - len(timed)} track)  target 0  {fmt.verdict(not flags)}"
    )
    for name, mark in sorted(flags.items()):
        row = next(r for r in rows if r["name"] == name)
        print(f"    {mark} x{row['ratio']:.2f}  {name}")
    if len(flags) > len(timed):
        print(
            "    (track benchmarks record one value, no samples: asv flags them on the "
            "factor alone)"
        )
    print(f"  past the factor but not significant ('~'): {len(insignificant)}")

    spreads = {}
    for commit in (first, second):
        cases = stats.unroll_results(scratch.result_file(commit))
        for name, value in stats.spreads(cases).items():
            spreads.setdefault(name, []).append(value)
    flat = [v for values in spreads.values() for v in values]
    d = stats.distribution(flat)
    print(
        f"  spread (IQR / median) over {d['n']} measured time cases x 2 runs: "
        f"median {d['median']:.1%}, 90th percentile {d['p90']:.1%}, max {d['max']:.1%}"
    )
    by_benchmark = {}
    for name, values in spreads.items():
        by_benchmark.setdefault(name.split("(")[0], []).extend(values)
    for benchmark, values in sorted(by_benchmark.items()):
        b = stats.distribution(values)
        print(
            f"    {benchmark:<34} median {b['median']:.1%}  p90 {b['p90']:.1%}  max {b['max']:.1%}"
        )
    worst = sorted(spreads.items(), key=lambda kv: -max(kv[1]))[:3]
    for name, values in worst:
        print(f"    widest: {max(values):.1%}  {name}")
    figures["noise"] = {
        "compared": len(compared),
        "flagged": flags,
        "insignificant": len(insignificant),
        "spread": d,
        "spread_by_benchmark": {k: stats.distribution(v) for k, v in by_benchmark.items()},
    }
    return not flags
