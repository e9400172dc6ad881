"""Run the suite on this machine's TensorFlow stacks with asv, then publish html/.

By default the newest stack that installs here; --all, --stacks OLD..NEW or
--stacks LABEL for more; --existing PYTHON for the TensorFlow already
installed in that Python. Arguments after `--` go to `asv run` (e.g.
`-- --quick -b Multiply`). Each stack is its own `asv run`, so one that fails
to install costs nothing else; stacks already measured are not redone.
"""

import argparse
import os
import sys
from pathlib import Path

from ..config import add_config_argument
from ..names import TABLE_FILE
from ..runner import prepare_machine, publish, read_conf, run_existing, run_stack
from ..stacks import ledger
from ..stacks import repo as stacks_repo
from ..stacks.install_stack import detect_variant
from ..stacks.selection import SelectionError, Target, fits, missing_on_index, newest, pick
from ..stacks.table import TableError, load_table


def add_arguments(parser):
    add_config_argument(parser)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--all", action="store_true",
                       help="every stack of the table that installs on this machine and Python")
    which.add_argument("--stacks", metavar="SPEC",
                       help="a label (tf2.21.0), a range OLD..NEW (either end may be left "
                            "out), or labels separated by commas")
    which.add_argument("--existing", metavar="PYTHON",
                       help="measure the TensorFlow already installed in PYTHON (needs "
                            "asv_runner there); lands on the stack it matches, else on its "
                            "own 'own-...' label")
    parser.add_argument("--variant", choices=["auto", "cpu", "cuda"], default="auto",
                        help="Linux: tensorflow-cpu or the CUDA build (default: cuda where "
                             "nvidia-smi lists a GPU)")
    parser.add_argument("--machine", help="name of this machine in results/ (default: asv's, "
                                          "the host name); give CI runners stable names")
    parser.add_argument("--no-publish", action="store_true", help="skip asv publish")
    parser.add_argument("--no-report", action="store_true",
                        help="publish asv's site only, without the report page")
    parser.add_argument("--no-index-check", action="store_true",
                        help="do not ask pip's index whether the pins exist before running")
    parser.add_argument("asv_args", nargs=argparse.REMAINDER,
                        help="after --: arguments for asv run, e.g. -- --quick -b Multiply")


def run(args):
    config_path = Path(args.config).resolve()
    if not config_path.is_file():
        print(f"error: {args.config}: no asv configuration here", file=sys.stderr)
        return 2
    root = config_path.parent
    # asv resolves its directories and {conf_dir} against the working directory.
    os.chdir(root)
    conf = read_conf(config_path)
    results_dir = root / conf["results_dir"]
    asv_args = [a for a in args.asv_args if a != "--"] if args.asv_args else []

    try:
        stacks = load_table(root / TABLE_FILE)
    except TableError as exc:
        print(f"error: {exc}; nothing was run", file=sys.stderr)
        return 2
    own = ledger.own_stacks(results_dir)
    hashes = stacks_repo.build(stacks, root / conf["repo"], own)

    os.environ["TFGPUBENCH_VARIANT"] = detect_variant({"TFGPUBENCH_VARIANT": args.variant})
    if args.existing:
        return run_existing(args, conf, config_path, stacks, own, asv_args)

    target = Target.here(variant=os.environ["TFGPUBENCH_VARIANT"])
    try:
        chosen = pick(stacks, "all" if args.all or not args.stacks else args.stacks)
    except SelectionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    runnable, left_out = fits(chosen, target)
    if not (args.all or args.stacks):
        runnable, left_out = newest(runnable), []
    for stack, reason in left_out:
        print(f"left out {stack.label}: {reason}")
    if not runnable:
        print(f"no stack of this selection installs on {target.describe()}", file=sys.stderr)
        return 1
    if not args.no_index_check:
        problems = missing_on_index(runnable)
        if problems:
            for _, message in problems:
                print(f"error: {message}", file=sys.stderr)
            print("error: nothing was run", file=sys.stderr)
            return 2

    machine, snapshot_dir = prepare_machine(args.machine, conf, results_dir)

    failures = []
    total = len(runnable)
    for number, (stack, pins) in enumerate(runnable, start=1):
        print(f"[{number}/{total}] {stack.label}: {' '.join(pins)}", flush=True)
        outcome = run_stack(stack, hashes[stack.label], machine, config_path, conf,
                             results_dir, snapshot_dir, asv_args)
        if outcome:
            print(f"[{number}/{total}] {stack.label}: {outcome}", flush=True)
            failures.append(stack.label)
    published = args.no_publish or publish(config_path, report=not args.no_report)
    if failures:
        print(f"{len(failures)} of {total} stacks failed: {', '.join(failures)}", file=sys.stderr)
    return 0 if published and not failures else 1
