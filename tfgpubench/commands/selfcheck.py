"""Measure the measurement: fidelity, noise, sensitivity and cost of the suite, side by side.

stability    the machine's own speed: a 2x2 eager multiply in 10 ms loops for 20 s, no suite
             code; whether its spread leaves room for the targets below
fidelity     every cpu case (each size, dtype and mode) under the real `asv run` with the
             launch method `run` uses, against the same call in a bare loop timed by a
             process that shares no code with the suite (target 1.00 +- 0.05)
noise        the same stack measured three times (twice quiet, once while another process is
             busy on one core for a few seconds at a time), compared with `asv compare
             --factor 1.1`: target, no time case flagged
sensitivity  the large cpu Multiply cases rerun with TF_NUM_INTRAOP_THREADS=1: every case
             whose bare-loop time changed by more than the factor must be flagged, nothing else
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
from ..names import TENSORFLOW_STACK_BENCHMARKS
from ..runner import launch_method_args
from ..selfcheck import asvruns, cost, fidelity, noise, sensitivity, stability, stats
from ..selfcheck.console import progress
from ..selfcheck.load import BurstyLoad

PARTS = ["stability", "fidelity", "noise", "sensitivity", "cost"]


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
        help="stability, and fidelity on 2 sizes: ~2 min",
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
        "--keep", metavar="DIR", help="put the scratch asv directory here and keep it"
    )
    parser.add_argument("--json", metavar="FILE", help="also write every figure to FILE")


def run(args):
    parts = args.only or (["stability", "fidelity"] if args.quick else PARTS)
    load_config(args.config)  # says where it looked when there is none
    figures = {"date": time.strftime("%Y-%m-%d %H:%M %Z"), "command": " ".join(sys.argv)}
    ok = True
    start = time.perf_counter()
    print(f"tfgpubench selfcheck, {figures['date']}: {', '.join(parts)}")
    _machine(figures)

    if "stability" in parts:
        ok &= stability.run_part(args, figures)
    if set(parts) - {"stability"}:
        with tempfile.TemporaryDirectory(prefix="tfgpubench-selfcheck-") as tmp:
            root = Path(args.keep) if args.keep else Path(tmp)
            ok &= _parts(args, root, parts, figures)

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


# --- every part runs asv in one scratch setup ------------------------------------------


def _parts(args, root, parts, figures):
    progress(f"  scratch asv directory: {root}")
    launch_method = args.launch_method or launch_method_args([])[1]
    scratch = asvruns.Scratch(root, args.config, commits=6, launch_method=launch_method)
    fidelity_run, quiet_a, quiet_b, loaded, slowed, baseline_only = scratch.hashes
    ok = True
    if "fidelity" in parts:
        ok &= fidelity.run_part(args, scratch, fidelity_run, figures)
    full_runs = {}
    wanted = [quiet_a, quiet_b] if "noise" in parts else [quiet_a] if "cost" in parts else []
    for number, commit in enumerate(wanted, 1):
        progress(f"  full default run {number}/{len(wanted) + ('noise' in parts)} "
                 f"(launch method {scratch.launch_method})...")
        full_runs[commit] = scratch.run(commit, bench=TENSORFLOW_STACK_BENCHMARKS,
                                        progress=progress)
        progress(f"    took {full_runs[commit]['wall']:.0f} s")
    if "noise" in parts:
        load = BurstyLoad()
        progress(f"  full default run {len(wanted) + 1}/{len(wanted) + 1}, with {load.describe()}")
        with load:
            full_runs[loaded] = scratch.run(loaded, bench=TENSORFLOW_STACK_BENCHMARKS,
                                            progress=progress)
        ok &= noise.run_part(args, scratch, {"quiet": (quiet_a, quiet_b),
                                             "loaded": (quiet_a, loaded)}, figures)
    if "sensitivity" in parts:
        baseline = quiet_b if quiet_b in full_runs else baseline_only
        ok &= sensitivity.run_part(args, scratch, baseline, slowed, baseline not in full_runs,
                                   figures)
    if "cost" in parts:
        quiet = {c: r for c, r in full_runs.items() if c != loaded}
        ok &= cost.run_part(scratch, quiet, figures)
    return ok
