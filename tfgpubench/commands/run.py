"""Run the suite on this machine's TensorFlow stacks with asv, then publish html/.

By default the newest stack that installs here; --all, --stacks OLD..NEW or
--stacks LABEL for more; --existing PYTHON for the TensorFlow already
installed in that Python. Arguments after `--` go to `asv run` (e.g.
`-- --quick -b Multiply`). Each stack is its own `asv run`, so one that fails
to install costs nothing else; stacks already measured on this machine are
not redone. A bad input (a row of stacks.toml, a selection, a machine name, a
broken file under results/) stops the run before anything is installed or
changed, with one line naming it, exit status 2.
"""

import argparse
import os
import sys
from pathlib import Path

from ..config import add_config_argument
from ..names import TABLE_FILE
from ..runner import (
    RunRefused,
    Session,
    check_results,
    choose_machine,
    existing_stack,
    publish,
    read_conf,
    run_existing,
    run_stack,
    start,
    write_run_alerts,
)
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
    parser.add_argument("--variant", choices=["auto", "cpu", "cuda"],
                        help="Linux: tensorflow-cpu or the CUDA build (default: "
                             "$TFGPUBENCH_VARIANT, else cuda where nvidia-smi lists a GPU)")
    parser.add_argument("--machine", help="name of this machine in results/ (default: asv's, "
                                          "the host name); give CI runners stable names")
    parser.add_argument("--no-publish", action="store_true", help="skip asv publish")
    parser.add_argument("--no-report", action="store_true",
                        help="publish asv's site only, without the report page")
    parser.add_argument("--no-index-check", action="store_true",
                        help="do not ask pip's index whether the pins exist before running")
    parser.add_argument("asv_args", nargs=argparse.REMAINDER,
                        help="after --: arguments for asv run, e.g. -- --quick -b Multiply")


def refuse(message):
    """One line per problem, the last saying nothing ran; exit status 2."""
    lines = str(message).splitlines()
    for line in lines[:-1]:
        print(f"error: {line}", file=sys.stderr)
    print(f"error: {lines[-1]}; nothing was run", file=sys.stderr)
    return 2


def open_session(args):
    """The Session of --config and the arguments after `--`, from the config's folder.

    Raises RunRefused when the configuration is missing or unreadable."""
    config_path = Path(args.config).resolve()
    if not config_path.is_file():
        raise RunRefused(f"--config {args.config}: no asv configuration here")
    # asv resolves its directories and {conf_dir} against the working directory.
    os.chdir(config_path.parent)
    try:
        conf = read_conf(config_path)
    except Exception as exc:  # asv raises its own UserError for unreadable JSON
        raise RunRefused(f"--config {args.config}: {exc}") from exc
    return Session(config_path, conf, [a for a in args.asv_args or [] if a != "--"])


def run(args):
    try:
        session = open_session(args)
    except RunRefused as exc:
        return refuse(str(exc))

    # Every input is checked before anything is installed or changed.
    try:
        variant = detect_variant({"TFGPUBENCH_VARIANT": args.variant} if args.variant else None)
    except ValueError as exc:
        return refuse(exc)
    try:
        stacks = load_table(session.root / TABLE_FILE)
        check_results(session)
        own = ledger.own_stacks(session.results_dir)
        if args.existing:
            here, label, own_entry = existing_stack(stacks, args.existing)
            if own_entry:
                own = [o for o in own if o["label"] != label] + [own_entry]
        else:
            runnable = choose_stacks(args, stacks, Target.here(variant=variant))
        session.machine, session.here = choose_machine(args.machine, session.results_dir)
    except SelectionError as exc:
        return refuse(f"--stacks {exc}")
    except (TableError, RunRefused) as exc:
        return refuse(exc)
    if not args.existing and not runnable:
        return 1

    os.environ["TFGPUBENCH_VARIANT"] = variant
    try:
        hashes = stacks_repo.build(stacks, session.root / session.conf["repo"], own)
    except stacks_repo.RepoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    start(session)
    if args.existing:
        code = run_existing(session, args.existing, here, label, own_entry, hashes[label])
        published = args.no_publish or publish(session.config_path, report=not args.no_report)
        return 0 if code == 0 and published else 1

    failures = []
    total = len(runnable)
    for number, (stack, pins) in enumerate(runnable, start=1):
        print(f"[{number}/{total}] {stack.label}: {' '.join(pins)}", flush=True)
        outcome = run_stack(session, stack, hashes[stack.label])
        if outcome:
            print(f"[{number}/{total}] {stack.label}: {outcome}", flush=True)
            failures.append(stack.label)
    # Each newly measured stack against the one before it here, by asv's rule.
    write_run_alerts(session, stacks, Target.here(variant=variant), hashes)
    published = args.no_publish or publish(session.config_path, report=not args.no_report)
    if failures:
        print(f"{len(failures)} of {total} stacks failed: {', '.join(failures)}", file=sys.stderr)
    return 0 if published and not failures else 1


def choose_stacks(args, stacks, target):
    """[(stack, pins)] this run measures, left-out stacks printed; RunRefused when the
    selection names no stack or a pin is not on pip's index."""
    chosen = pick(stacks, "all" if args.all or not args.stacks else args.stacks)
    runnable, left_out = fits(chosen, target)
    if not (args.all or args.stacks):
        runnable, left_out = newest(runnable), []
    for stack, reason in left_out:
        print(f"left out {stack.label}: {reason}")
    if not runnable:
        print(f"no stack of this selection installs on {target.describe()}", file=sys.stderr)
        return []
    if not args.no_index_check:
        problems = missing_on_index(runnable)
        if problems:
            raise RunRefused("\n".join(message for _, message in problems))
    return runnable
