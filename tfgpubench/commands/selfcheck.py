"""Measure the measurement: fidelity, noise, sensitivity and cost of the suite, side by side.

stability    the machine's own speed, no suite code: the multiply in 10 ms loops for 20 s,
             2x2 (one thread) and 2048x2048 (split over every core); whether their spread
             leaves room for the targets below; with other parts, again at the end:
             whether the machine stayed so under them
fidelity     every cpu case (each size, dtype and mode) under the real `asv run` with the
             launch method `run` uses, against the same call in a bare loop timed by a
             process that shares no code with the suite (target 1.00 +- 0.05); beside
             each, the page faults per op of both sides, and where they differ
noise        A/A: the time benchmarks of one stack measured under two commits, one round of
             each at a time in turn, as the gate's `asv continuous` does; once quiet, once
             while another process is busy on one core for a few seconds at a time;
             `asv compare --factor 1.1`, and the cases it finds changed past 1.049 measured
             again, as the gate does: target, no time case flagged by both passes the
             same way, the second past 1.1
sensitivity  the large cpu Multiply cases, default and with TF_NUM_INTRAOP_THREADS=1, rounds
             interleaved, cases past 1.049 measured again as the gate does: every case whose
             bare-loop time changed by more than the factor (in every pass, before asv and
             after) must be flagged, nothing else; a case whose passes disagree is listed,
             judged neither way
cost         wall time of the full default run (target <= 5 min on 2 cores) and the share
             spent starting processes and importing TensorFlow

The asv runs go to a temporary directory (own config copy, git repo, results, HOME) and
use this interpreter's TensorFlow: the project's results/ and .stacks are never touched.
"""

import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path

from .. import format as fmt
from ..config import add_config_argument, load_config
from ..names import GATED_BENCHMARKS, TENSORFLOW_STACK_BENCHMARKS
from ..runner import launch_method_args
from ..selfcheck import asvruns, cost, fidelity, noise, sensitivity, stability, stats
from ..selfcheck.console import progress
from ..selfcheck.load import BurstyLoad
from ..suite import suite_module

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
        help="stability, and fidelity on 2 sizes: ~3 min",
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
        "--keep", metavar="DIR",
        help="put the scratch asv directory here and keep it: asv's results, and in "
             "rounds.json where each interleaved round's samples end"
    )
    parser.add_argument("--json", metavar="FILE",
                        help="also write every figure to FILE, after each part; its `complete` "
                             "is false where the self-check was cut short")


def run(args):
    parts = args.only or (["stability", "fidelity"] if args.quick else PARTS)
    load_config(args.config)  # says where it looked when there is none
    # Every part times this interpreter's TensorFlow; the main job's `pip install -e .`
    # installs none here (asv's environments get their own).
    if importlib.util.find_spec("tensorflow") is None:
        print(f"tfgpubench selfcheck: no TensorFlow in {sys.executable} to measure; "
              "install it with `pip install -e '.[tf]'`", file=sys.stderr)
        return 2
    figures = {"date": time.strftime("%Y-%m-%d %H:%M %Z"), "command": " ".join(sys.argv),
               "complete": False}
    ok = True
    start = time.perf_counter()

    def save():
        # After every part, and when the self-check is cut short (Ctrl-C, SIGTERM): a run
        # of half an hour keeps the figures of the parts it finished.
        figures["selfcheck_seconds"] = time.perf_counter() - start
        if args.json:
            Path(args.json).write_text(json.dumps(figures, indent=1, default=str))

    print(f"tfgpubench selfcheck, {figures['date']}: {', '.join(parts)}")
    _machine(figures)
    try:
        save()  # now, so a --json that cannot be written stops it before, not after, it all
    except OSError as exc:
        print(f"tfgpubench selfcheck: --json {args.json}: {exc.strerror}", file=sys.stderr)
        return 2
    try:
        if "stability" in parts:
            ok &= stability.run_part(args, figures)
            save()
        if set(parts) - {"stability"}:
            with tempfile.TemporaryDirectory(prefix="tfgpubench-selfcheck-") as tmp:
                root = Path(args.keep) if args.keep else Path(tmp)
                ok &= _parts(args, root, parts, figures, save)
            if "stability" in parts:
                ok &= stability.run_part(args, figures, again=True)
        figures["complete"] = True
    finally:
        save()
    print(f"\nselfcheck took {figures['selfcheck_seconds']:.0f} s; overall: {fmt.verdict(ok)}")
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


def _parts(args, root, parts, figures, save):
    progress(f"  scratch asv directory: {root}")
    launch_method = args.launch_method or launch_method_args([])[1]
    scratch = asvruns.Scratch(root, args.config, commits=14, launch_method=launch_method)
    (fidelity_run, quiet_a, quiet_b, loaded_a, loaded_b, cost_run, baseline, slowed,
     *second_passes) = scratch.hashes
    # The gate measures again what its first pass finds changed past the screening factor
    # (commands/gate.py): two more commits for each comparison's second pass.
    quiet_again, loaded_again, slowed_again = zip(second_passes[::2], second_passes[1::2])
    rounds = suite_module("multiply").Multiply.rounds
    ok = True
    if "fidelity" in parts:
        ok &= fidelity.run_part(args, scratch, fidelity_run, figures)
        save()
    if "noise" in parts:
        # Both pairs are measured the way the gate measures two stacks (asv continuous):
        # the time benchmarks, one round of each commit at a time, in turn.
        progress(f"  quiet A/A: two commits of one stack, {rounds} interleaved rounds...")
        scratch.run_interleaved([quiet_a, quiet_b], rounds, bench=GATED_BENCHMARKS,
                                progress=progress)
        screened = {"quiet": noise.measure_again(scratch, (quiet_a, quiet_b), quiet_again,
                                                 rounds, args.factor, progress=progress)}
        load = BurstyLoad()
        progress(f"  A/A again, with {load.describe()}...")
        with load:
            scratch.run_interleaved([loaded_a, loaded_b], rounds, bench=GATED_BENCHMARKS,
                                    progress=progress)
            screened["loaded"] = noise.measure_again(
                scratch, (loaded_a, loaded_b), loaded_again, rounds, args.factor,
                progress=progress)
        ok &= noise.run_part(args, scratch, {"quiet": (quiet_a, quiet_b, *quiet_again),
                                             "loaded": (loaded_a, loaded_b, *loaded_again)},
                             screened, figures)
        save()
    if "sensitivity" in parts:
        ok &= sensitivity.run_part(args, scratch, baseline, slowed, rounds, figures,
                                   again=slowed_again)
        save()
    if "cost" in parts:
        progress(f"  full default run (launch method {scratch.launch_method})...")
        done = scratch.run(cost_run, bench=TENSORFLOW_STACK_BENCHMARKS, progress=progress)
        progress(f"    took {done['wall']:.0f} s")
        ok &= cost.run_part(scratch, {cost_run: done}, figures)
    return ok
