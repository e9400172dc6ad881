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

import json
import sys
import tempfile
import time
from pathlib import Path

from .. import format as fmt
from ..config import add_config_argument, load_config
from ..runner import launch_method_args
from ..selfcheck import asvruns, cost, fidelity, noise, sensitivity, stats
from ..selfcheck.console import progress

PARTS = ["fidelity", "noise", "sensitivity", "cost"]


def add_arguments(parser):
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
        default=sensitivity.SLOW_ENV_DEFAULT,
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


def run(args):
    parts = args.only or (["fidelity"] if args.quick else PARTS)
    config = load_config(args.config)
    figures = {"date": time.strftime("%Y-%m-%d %H:%M %Z"), "command": " ".join(sys.argv)}
    ok = True
    start = time.perf_counter()
    print(f"tfgpubench selfcheck, {figures['date']}: {', '.join(parts)}")
    _machine(figures)

    if "fidelity" in parts:
        ok &= fidelity.run_part(args, config, figures)

    asv_parts = [p for p in parts if p != "fidelity"]
    if asv_parts:
        keep = args.keep
        with tempfile.TemporaryDirectory(prefix="tfgpubench-selfcheck-") as tmp:
            root = Path(keep) if keep else Path(tmp)
            ok &= _asv_parts(args, root, asv_parts, figures)

    figures["selfcheck_seconds"] = time.perf_counter() - start
    print(f"\nselfcheck took {figures['selfcheck_seconds']:.0f} s; overall: {fmt.verdict(ok)}")
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


# --- noise, sensitivity, cost share one scratch asv setup -------------------------


def _asv_parts(args, root, parts, figures):
    progress(f"  scratch asv directory: {root}")
    launch_method = args.launch_method or launch_method_args([])[1]
    scratch = asvruns.Scratch(root, args.config, commits=4, launch_method=launch_method)
    first, second, slowed, baseline_only = scratch.hashes
    ok = True
    full_runs = {}
    needed_full = 2 if "noise" in parts else 1 if "cost" in parts else 0
    for i, commit in enumerate([first, second][:needed_full]):
        progress(
            f"  full default run {i + 1}/{needed_full} (launch method {scratch.launch_method})..."
        )
        full_runs[commit] = scratch.run(commit, progress=progress)
        progress(f"    took {full_runs[commit]['wall']:.0f} s")

    if "noise" in parts:
        ok &= noise.run_part(args, scratch, first, second, figures)
    if "sensitivity" in parts:
        baseline = second if second in full_runs else baseline_only
        run_baseline = baseline not in full_runs
        ok &= sensitivity.run_part(args, scratch, baseline, slowed, run_baseline, figures)
    if "cost" in parts:
        ok &= cost.run_part(scratch, full_runs, figures)
    return ok
