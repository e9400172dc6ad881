"""Measure the measurement: fidelity, noise, sensitivity and cost of the suite, side by side.

fidelity     the suite's per-op time for each cpu eager case, run in this process through
             asv_runner, against a bare perf_counter loop of the same call (target 1.00 +- 0.05);
             the 2x2 float32 case against TensorFlow's own eager microbenchmark method
noise        two full default runs of the same stack compared with `asv compare --factor 1.1`
             (target: nothing flagged), and the distribution of each case's IQR / median
sensitivity  the large cpu Multiply cases rerun with TF_NUM_INTRAOP_THREADS=1: every case whose
             bare-clock time changed by more than the factor must be flagged, nothing else
cost         wall time of the full default run (target <= 5 min on 2 cores) and the share
             spent starting processes and importing TensorFlow

The asv runs go to a temporary directory (own config copy, git repo, results, HOME) and
use this interpreter's TensorFlow: the project's results/ and .stacks are never touched.
"""

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

from . import stats

PARTS = ["fidelity", "noise", "sensitivity", "cost"]
COST_TARGET_SECONDS = 300
MULTIPLY = "multiply.Multiply.time_multiply"
SLOW_ENV_DEFAULT = "TF_NUM_INTRAOP_THREADS=1"


def add_arguments(parser):
    from ..config import add_config_argument

    add_config_argument(parser)
    parser.add_argument(
        "--only",
        action="append",
        choices=PARTS,
        metavar="PART",
        help=f"run only this part (repeatable): {', '.join(PARTS)}",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="fidelity on 2 sizes with one interleave, no asv runs: ~1 min",
    )
    parser.add_argument(
        "--launch-method",
        choices=["spawn", "forkserver"],
        help="asv launch method for the asv runs (default: what `tfgpubench run` uses here: "
        "forkserver on Linux, spawn on macOS)",
    )
    parser.add_argument(
        "--slow-env",
        default=SLOW_ENV_DEFAULT,
        metavar="VAR=VALUE",
        help="environment of the slowed run for sensitivity (default: %(default)s)",
    )
    parser.add_argument(
        "--sizes",
        default="1000,2048,4096",
        help="sensitivity: the cpu sizes rerun slowed (default: %(default)s, "
        "where a multiply is limited by memory and threads, not dispatch)",
    )
    parser.add_argument(
        "--factor",
        type=float,
        default=stats.FACTOR,
        help="asv compare factor (default: %(default)s)",
    )
    parser.add_argument(
        "--interleave",
        type=int,
        default=5,
        help="fidelity: suite/bare alternations per case (default: %(default)s)",
    )
    parser.add_argument(
        "--keep", metavar="DIR", help="put the scratch asv directory here and keep it"
    )
    parser.add_argument("--json", metavar="FILE", help="also write every figure to FILE")


def _progress(message):
    print(message, file=sys.stderr, flush=True)


def _section(title):
    print(f"\n== {title}", flush=True)


def run(args):
    from ..config import load_config

    parts = args.only or (["fidelity"] if args.quick else PARTS)
    config = load_config(args.config)
    figures = {"date": time.strftime("%Y-%m-%d %H:%M %Z"), "command": " ".join(sys.argv)}
    ok = True
    start = time.perf_counter()
    print(f"tfgpubench selfcheck, {figures['date']}: {', '.join(parts)}")
    _machine(figures)

    if "fidelity" in parts:
        ok &= _fidelity(args, config, figures)

    asv_parts = [p for p in parts if p != "fidelity"]
    if asv_parts:
        keep = args.keep
        with tempfile.TemporaryDirectory(prefix="tfgpubench-selfcheck-") as tmp:
            root = Path(keep) if keep else Path(tmp)
            ok &= _asv_parts(args, root, asv_parts, figures)

    figures["selfcheck_seconds"] = time.perf_counter() - start
    print(f"\nselfcheck took {figures['selfcheck_seconds']:.0f} s; overall: {stats.verdict(ok)}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1, default=str))
    return 0 if ok else 1


def _machine(figures):
    import os
    import platform

    figures["machine"] = {
        "platform": f"{platform.system()} {platform.machine()}",
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }
    m = figures["machine"]
    print(f"machine: {m['platform']}, {m['cpus']} CPUs, Python {m['python']}")


# --- fidelity -------------------------------------------------------------------


def _fidelity(args, config, figures):
    from . import fidelity

    _section("fidelity: suite (asv_runner, in process) vs bare perf_counter loop, cpu eager")
    _progress("  measuring in this process (each case alternates suite and bare loop)...")
    sizes = [2, 1000] if args.quick else None
    interleave = 1 if args.quick else args.interleave
    cases = fidelity.run_fidelity(
        config.benchmark_dir, sizes=sizes, interleave=interleave, progress=_progress
    )
    print(
        f"  {'case':<20} {'suite/op':>10} {'bare/op':>10} {'ratio':>7}  target 1.00 +- 0.05"
        "  (median of back-to-back pairs)"
    )
    for c in cases:
        label = f"{c['size']}x{c['size']} {c['dtype']}"
        pairs = f"{min(c['pair_ratios']):.2f}-{max(c['pair_ratios']):.2f}"
        print(
            f"  {label:<20} {stats.human_seconds(c['asv']):>10} "
            f"{stats.human_seconds(c['bare']):>10} {c['ratio']:7.3f}  "
            f"{stats.verdict(c['ok'])}  (pairs {pairs})"
        )
    ratios = [c["ratio"] for c in cases]
    within = sum(c["ok"] for c in cases)
    print(f"  {within}/{len(cases)} within target; ratio range {min(ratios):.3f}-{max(ratios):.3f}")

    _progress("  TensorFlow's method (30,000 calls after one warm-up, mean)...")
    tf = fidelity.run_tensorflow_method(config.benchmark_dir, interleave=interleave)
    print("  2x2 float32 eager vs TensorFlow's eager microbenchmark method:")
    print(
        f"    suite (asv) {stats.human_seconds(tf['asv'])}/op, TensorFlow's method on the "
        f"same call {stats.human_seconds(tf['tf_method'])}/op, ratio {tf['ratio']:.3f}  "
        f"target 1.00 +- 0.05  {stats.verdict(tf['ok'])}"
    )
    print(
        f"    (benchmark_tf_multiply_op_CPU's own call, a 2-element tensor times itself: "
        f"{stats.human_seconds(tf['tf_own_benchmark'])}/op)"
    )
    figures["fidelity"] = {"cases": cases, "tensorflow_method": tf}
    return fidelity.fidelity_ok(cases) and tf["ok"]


# --- noise, sensitivity, cost ---------------------------------------------------


def _asv_parts(args, root, parts, figures):
    from . import asvruns

    _progress(f"  scratch asv directory: {root}")
    from ..runner import launch_method_args

    launch_method = args.launch_method or launch_method_args([])[1]
    scratch = asvruns.Scratch(root, args.config, commits=4, launch_method=launch_method)
    first, second, slowed, baseline_only = scratch.hashes
    ok = True
    full_runs = {}
    needed_full = 2 if "noise" in parts else 1 if "cost" in parts else 0
    for i, commit in enumerate([first, second][:needed_full]):
        _progress(
            f"  full default run {i + 1}/{needed_full} (launch method {scratch.launch_method})..."
        )
        full_runs[commit] = scratch.run(commit, progress=_progress)
        _progress(f"    took {full_runs[commit]['wall']:.0f} s")

    if "noise" in parts:
        ok &= _noise(args, scratch, first, second, figures)
    if "sensitivity" in parts:
        baseline = second if second in full_runs else baseline_only
        ok &= _sensitivity(args, scratch, baseline, slowed, baseline not in full_runs, figures)
    if "cost" in parts:
        ok &= _cost(scratch, full_runs, figures)
    return ok


def _noise(args, scratch, first, second, figures):
    _section(f"noise: two full runs of the same stack, asv compare --factor {args.factor}")
    rows = stats.parse_compare(scratch.compare(first, second, args.factor))
    flags = stats.flagged(rows)
    compared = [r for r in rows if r["ratio"] is not None]
    insignificant = [r for r in compared if r["insignificant"]]
    timed = {n: m for n, m in flags.items() if ".time_" in n}
    print(
        f"  {len(compared)} cases compared; flagged: {len(flags)} ({len(timed)} time, "
        f"{len(flags) - len(timed)} track)  target 0  {stats.verdict(not flags)}"
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


def _sensitivity(args, scratch, baseline, slowed, run_baseline, figures):
    from . import truthdriver

    variable, _, value = args.slow_env.partition("=")
    _section(f"sensitivity: {MULTIPLY} with {args.slow_env} vs default")
    sizes = [int(s) for s in args.sizes.split(",")]
    # asv's -b matches "name(param, ...)" too, so only these combinations start processes.
    selection = stats.case_regex(MULTIPLY, "cpu", sizes)
    if run_baseline:
        _progress("  Multiply baseline run...")
        scratch.run(baseline, bench=selection, progress=_progress)
    _progress(f"  Multiply run with {args.slow_env}...")
    scratch.run(slowed, bench=selection, extra_env={variable: value}, progress=_progress)
    rows = [
        r
        for r in stats.parse_compare(scratch.compare(baseline, slowed, args.factor))
        if r["name"].startswith(MULTIPLY + "(")
    ]
    flags = stats.flagged(rows)

    _progress("  bare-clock truth: two workers (default, slowed), asked in turn...")
    truth = truthdriver.measure(
        scratch.benchmark_dir,
        {variable: value},
        progress=_progress,
        keep=lambda case: case[0] == "cpu" and case[1] in sizes,
    )
    ratios = {name: t["slowed"] / t["default"] for name, t in truth.items()}
    match = stats.match_flags(ratios, flags, args.factor)
    real = len(match["caught"]) + len(match["missed"]) + len(match["wrong_way"])
    asv_ratio = {r["name"]: r["ratio"] for r in rows}
    print(
        f"  cases measured: {len(truth)}; really changed by more than x{args.factor} "
        f"(bare clock): {real}"
    )
    passed = not match["missed"] and not match["wrong_way"]
    # With no real change there is nothing to catch: say so rather than pass.
    word = stats.verdict(passed) if real else "INCONCLUSIVE (no real change to catch)"
    print(
        f"  flagged by asv: {len(flags)}; caught {len(match['caught'])}/{real}  "
        f"target {real}/{real}  {word}"
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
    changed = sorted(ratios.items(), key=lambda kv: -kv[1])[:5]
    print(
        "  largest real slowdowns: "
        + ", ".join(f"{name[len(MULTIPLY) :]} x{r:.2f}" for name, r in changed)
    )
    figures["sensitivity"] = {
        "env": args.slow_env,
        "truth_ratios": ratios,
        "flagged": flags,
        "match": match,
        "really_changed": real,
    }
    return passed and real > 0


def _cost(scratch, full_runs, figures):
    from . import asvruns

    _section("cost: the full default run for one stack")
    walls = [r["wall"] for r in full_runs.values()]
    benchmarks = scratch.benchmarks()
    method = scratch.launch_method
    counts = stats.process_count(benchmarks, method)
    spawn_counts = stats.process_count(benchmarks, "spawn")
    _progress("  timing a fresh interpreter importing asv_runner and the suite...")
    start_import = asvruns.import_seconds(scratch.benchmark_dir)
    share = counts["fresh_interpreters"] * start_import
    wall = stats.median(walls)
    print(
        f"  wall time ({method}): "
        + ", ".join(f"{w:.0f} s" for w in walls)
        + f"  target <= {COST_TARGET_SECONDS} s  {stats.verdict(wall <= COST_TARGET_SECONDS)}"
    )
    print(
        f"  benchmark processes: {counts['benchmark_processes']}; fresh interpreters "
        f"importing TensorFlow: {counts['fresh_interpreters']} x {start_import:.2f} s "
        f"= {share:.0f} s ({share / wall:.0%} of the run)"
    )
    if method != "spawn":
        spawn_share = spawn_counts["fresh_interpreters"] * start_import
        print(
            f"  with spawn the same run would start {spawn_counts['fresh_interpreters']} "
            f"interpreters: ~{spawn_share:.0f} s more, ~{wall + spawn_share:.0f} s in all"
        )
    durations = stats.benchmark_durations(scratch.result_file(next(iter(full_runs))))
    for name, seconds in sorted(durations.items(), key=lambda kv: -kv[1]):
        print(f"    {seconds:6.1f} s  {name}")
    figures["cost"] = {
        "launch_method": method,
        "walls": walls,
        "import_seconds": start_import,
        **counts,
        "start_import_share": share / wall,
        "durations": durations,
    }
    return wall <= COST_TARGET_SECONDS


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="tfgpubench selfcheck",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))
