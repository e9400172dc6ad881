"""The table of TensorFlow / tensorflow-metal stacks (stacks.toml).

list: every stack, whether it installs here and why not; check: validate the
table and say, per stack, what it needs from the machine (OS, architecture,
Python, macOS, NVIDIA driver, CUDA, cuDNN) and whether this one has it (with
--online, also ask pip's index that each pin exists for this machine); build:
(re)generate .stacks/, the git repository asv runs along, and print each
label's commit; discover: ask pip's index for TensorFlow and tensorflow-metal
releases newer than each section's last row and print their rows (with
--write, append them to the table).
"""

import datetime
import sys
from pathlib import Path

from ..names import TABLE_FILE
from ..stacks.discover import (
    DEFAULT_INDEX_URL,
    PROJECTS,
    PackageIndexError,
    append_to_table,
    configured_index_url,
    discover,
    fetch_answers,
    format_rows,
    redact,
)
from ..stacks.install_stack import detect_variant
from ..stacks.machine import detect_facts
from ..stacks.repo import RepoError, build
from ..stacks.requirements import describe_stack
from ..stacks.selection import SelectionError, Target, fits, missing_on_index, pick
from ..stacks.table import PYTHON, TableError, load_table


def add_arguments(parser):
    parser.add_argument("action", choices=["list", "check", "build", "discover"], nargs="?",
                        default="list")
    parser.add_argument("--table", default=TABLE_FILE, help="default: %(default)s")
    parser.add_argument("--repo", default=".stacks", help="for build; default: %(default)s")
    parser.add_argument("--stacks", metavar="SPEC", default="all",
                        help="a label, OLD..NEW or labels separated by commas")
    parser.add_argument("--python", help="X.Y to check against (default: this Python)")
    parser.add_argument("--variant", choices=["auto", "cpu", "cuda"],
                        help="Linux: the CPU or CUDA build (default: $TFGPUBENCH_VARIANT, "
                             "else cuda where nvidia-smi lists a GPU)")
    parser.add_argument("--online", action="store_true",
                        help="check: ask pip's index that the pins of the stacks that "
                             "install here exist")
    parser.add_argument("--index-url", metavar="URL",
                        help="discover: the simple-API index to ask (default: pip's, from "
                             "PIP_INDEX_URL or `pip config`, else https://pypi.org/simple)")
    parser.add_argument("--write", action="store_true",
                        help="discover: append the new rows at the end of their sections of "
                             "the table, validated as a whole (left unchanged if it fails)")


def format_row(stack, pins, reason, commit=None):
    mark = "ok  " if pins else "--  "
    what = " ".join(pins) if pins else f"left out: {reason}"
    head = f"{commit[:8]} " if commit else ""
    return f"{mark}{head}{stack.label:24} {stack.date}  {what}"


def error(message):
    print(f"error: {message}", file=sys.stderr)
    return 2


def run(args):
    if args.action == "discover":
        return run_discover(args)
    if args.python is not None and not PYTHON.match(args.python):
        return error(f"--python {args.python}: expected X.Y, such as 3.11")
    try:
        variant = detect_variant({"TFGPUBENCH_VARIANT": args.variant} if args.variant else None)
    except ValueError as exc:
        return error(exc)
    try:
        stacks = load_table(args.table)
        chosen = pick(stacks, args.stacks)
    except TableError as exc:
        return error(exc)
    except SelectionError as exc:
        return error(f"--stacks {exc}")
    target = Target.here(python=args.python, variant=variant)
    runnable, left_out = fits(chosen, target)
    if args.action == "check":
        return check(args, stacks, chosen, runnable, variant)
    hashes = {}
    if args.action == "build":
        try:
            hashes = build(stacks, Path(args.repo))
        except RepoError as exc:
            return error(exc)
    pins_of = {stack.label: pins for stack, pins in runnable}
    reason_of = {stack.label: reason for stack, reason in left_out}
    print(f"stacks for {target.describe()}:")
    for stack in chosen:
        print(format_row(stack, pins_of.get(stack.label), reason_of.get(stack.label),
                         hashes.get(stack.label)))
    return 0


def run_discover(args):
    try:
        stacks = load_table(args.table)
    except TableError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    index_url = args.index_url or configured_index_url()
    print(f"asking {redact(index_url)} about {', '.join(PROJECTS)}", file=sys.stderr)
    try:
        answers = fetch_answers(index_url)
    except PackageIndexError as exc:
        print(f"error: {exc}; {args.table} not changed", file=sys.stderr)
        return 2
    today = datetime.date.today()
    found = discover(stacks, answers, today)
    for note in found.notes:
        print(f"note: {note}", file=sys.stderr)
    rows = found.all_rows()
    if not rows:
        last_of_section = {stack.os: stack.label for stack in stacks}
        newest = ", ".join(last_of_section.values())
        print(f"no new releases (the newest rows: {newest})" if not found.notes else
              f"no new rows to append ({len(found.notes)} note(s) above)")
        return 0
    if not found.dated:
        print(f"warning: {redact(index_url)} gives no upload times (PEP 700): the rows are "
              f"dated {today}, the day they were found, not the day of their first upload",
              file=sys.stderr)
    print(format_rows(rows), end="")
    if not args.write:
        print(f"{len(rows)} new row(s); `python -m tfgpubench stacks discover --write` appends "
              f"them to {args.table}", file=sys.stderr)
        return 0
    if not found.dated:
        print(f"error: not written: a row's date must be its first upload; ask an index that "
              f"gives upload times (PIP_INDEX_URL={DEFAULT_INDEX_URL}) or append the rows by "
              f"hand with their dates", file=sys.stderr)
        return 2
    try:
        append_to_table(args.table, found)
    except TableError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{args.table}: appended {', '.join(s.label for s in rows)}", file=sys.stderr)
    return 0


def check(args, stacks, chosen, runnable, variant):
    print(f"{args.table}: {len(stacks)} stacks, valid")
    facts = detect_facts(python=args.python)
    here = 0
    for stack in chosen:
        lines = describe_stack(stack, variant, facts)
        here += lines[0].endswith("runs here")
        print("\n".join(lines))
    print(f"{here} of {len(chosen)} stacks can run on this machine ({variant} build on Linux)")
    if args.online:
        problems = missing_on_index(runnable)
        for _, message in problems:
            print(f"error: {message}", file=sys.stderr)
        return 2 if problems else 0
    return 0
