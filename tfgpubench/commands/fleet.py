"""The steps of the fleet's CI workflow (.github/workflows/fleet.yml), one per job step.

discover: append new releases to stacks.toml (`stacks discover --write`) and commit
  them (--push: to the branch the workflow runs on); writes sha= and new_stacks= to
  $GITHUB_OUTPUT.
measure: on a runner, `run` the stacks of the table that install here and this machine
  has not measured (--stacks narrows them), then `gate` each against the stack before
  it in its chain where that one was measured here before; the gates' JSON and Markdown
  go to --out, the Markdown to $GITHUB_STEP_SUMMARY. Exit status: 0 fine, 1 a
  regression, 2 a benchmark or a stack failed. Arguments after `--` go to run and gate.
merge: put every runner's results (artifacts unpacked under a folder) into results/
  (--commit, --push: back into the repository, where the next jobs find them).
publish: `publish` html/ from the merged results (asv's site offline, and the report).
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

from .. import fleet
from ..config import add_config_argument
from ..names import REGRESSIONS_MARKDOWN_FILE, TABLE_FILE
from ..runner import read_conf, split_bench_args, stack_asv_args
from ..stacks import ledger
from ..stacks import repo as stacks_repo
from ..stacks.install_stack import detect_variant
from ..stacks.selection import SelectionError, Target, pick
from ..stacks.table import TableError, load_table
from .run import refuse

STEPS = ("discover", "measure", "merge", "publish")  # in the order a workflow runs them


def add_arguments(parser):
    add_config_argument(parser)
    steps = parser.add_subparsers(dest="step", required=True, metavar="STEP")
    discover_step = steps.add_parser("discover", help="append new releases and commit them")
    discover_step.add_argument("--index-url", metavar="URL", help="the index to ask")
    discover_step.add_argument("--push", action="store_true",
                               help="push the commit to the branch checked out")
    measure_step = steps.add_parser("measure", help="run the new stacks here, gate upgrades")
    measure_step.add_argument("--machine", required=True,
                              help="this runner's stable machine name in results/")
    measure_step.add_argument("--stacks", metavar="SPEC", default="",
                              help="only these (a label, OLD..NEW, or labels with commas)")
    measure_step.add_argument("--out", default="fleet-out",
                              help="folder for the gates' summaries (default: %(default)s)")
    measure_step.add_argument("asv_args", nargs=argparse.REMAINDER,
                              help="after --: arguments for asv (run and continuous)")
    merge_step = steps.add_parser("merge", help="put every runner's results into results/")
    merge_step.add_argument("incoming", help="the folder of unpacked artifacts "
                                             "(ARTIFACT/results/MACHINE/)")
    merge_step.add_argument("--commit", action="store_true", help="commit results/")
    merge_step.add_argument("--push", action="store_true",
                            help="push the commit to the branch checked out")
    steps.add_parser("publish", help="publish html/ from results/")


def tfgpubench(*args):
    """Run `python -m tfgpubench ARGS` here, its output passed through; its exit status."""
    return subprocess.run([sys.executable, "-m", "tfgpubench", *args], check=False).returncode


def run(args):
    root = Path(args.config).resolve().parent
    os.chdir(root)
    return {"discover": discover, "measure": measure, "merge": merge,
            "publish": publish}[args.step](args, root)


def discover(args, root):
    before = {s.label for s in load_table(root / TABLE_FILE)}
    code = tfgpubench("stacks", "discover", "--write",
                      *(["--index-url", args.index_url] if args.index_url else []))
    if code != 0:
        return code
    new = [s.label for s in load_table(root / TABLE_FILE) if s.label not in before]
    if new:
        fleet.commit_paths(root, [TABLE_FILE], f"stacks.toml: {', '.join(new)} (found by "
                                               "stacks discover)")
        if args.push:
            fleet.push(root)
    print(f"new stacks: {', '.join(new) or 'none'}")
    fleet.append_github_file("GITHUB_OUTPUT", f"sha={fleet.git(root, 'rev-parse', 'HEAD')}\n"
                                              f"new_stacks={','.join(new)}\n")
    return 0


def measure(args, root):
    asv_args = [a for a in args.asv_args if a != "--"]
    results_dir = root / "results"
    try:
        stacks = load_table(root / TABLE_FILE)
        chosen = pick(stacks, args.stacks or "all")
        target = Target.here(variant=detect_variant())
    except (TableError, ValueError) as exc:
        prefix = "--stacks " if isinstance(exc, SelectionError) else ""
        return refuse(f"{prefix}{exc}")
    hashes = stacks_repo.expected_hashes(stacks)
    recorded_before = {s.label for s in stacks
                       if ledger.recorded(results_dir, args.machine, hashes[s.label])}
    # A stack measured before a benchmark's version changed is measured again (its
    # old results leave asv's graphs), but not gated: it is no upgrade.
    versions = ledger.source_versions(root / read_conf(args.config).get("benchmark_dir",
                                                                        "benchmarks"))

    def current(stack):
        patterns = split_bench_args(stack_asv_args(stack, asv_args))[0]
        return (stack.label in recorded_before and ledger.measured_as_now(
            results_dir, args.machine, hashes[stack.label], patterns, versions))

    todo = fleet.unmeasured(stacks, target, chosen, current)
    if not todo:
        print(f"{args.machine}: every chosen stack that installs here is measured already")
        return fleet.FINE
    print(f"{args.machine}: measuring {', '.join(s.label for s in todo)}", flush=True)
    codes = [tfgpubench("run", "--stacks", ",".join(s.label for s in todo), "--machine",
                        args.machine, "--no-publish", "--", *asv_args)]
    measured = [s for s in todo if ledger.recorded(results_dir, args.machine, hashes[s.label])]
    regressions = results_dir / args.machine / REGRESSIONS_MARKDOWN_FILE
    if measured and regressions.is_file():
        fleet.append_github_file("GITHUB_STEP_SUMMARY", regressions.read_text())
    out = Path(args.out)
    new_here = [s for s in measured if s.label not in recorded_before]
    pairs = fleet.gate_pairs(stacks, target, new_here, recorded_before)
    if not pairs:
        print(f"{args.machine}: nothing to gate (no new stack follows one measured here "
              "before)")
    for previous, new in pairs:
        stem = out / f"gate-{args.machine}-{new.label}"
        code = tfgpubench("gate", "--previous", previous.label, "--new", new.label,
                          "--machine", args.machine, "--json", f"{stem}.json",
                          "--markdown", f"{stem}.md", "--", *asv_args)
        codes.append(code)
        if Path(f"{stem}.md").is_file():
            fleet.append_github_file("GITHUB_STEP_SUMMARY", Path(f"{stem}.md").read_text())
        print(f"gate {previous.label} -> {new.label} on {args.machine}: exit {code}")
    return fleet.worst(codes)


def merge(args, root):
    try:
        machines = fleet.merge_results(args.incoming, root / "results")
    except fleet.MergeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"merged results of {', '.join(machines) or 'no machine'}")
    if machines and args.commit:
        commit = fleet.commit_paths(root, ["results"], f"results: {', '.join(machines)} "
                                                       "(fleet)")
        if commit and args.push:
            fleet.push(root)
    return 0 if machines else 1


def publish(args, root):
    return tfgpubench("publish")
