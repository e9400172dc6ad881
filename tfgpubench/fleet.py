"""The fleet's steps, shared by every CI runner: what to measure here, which upgrades to
gate, and how the machines' results come together (`python -m tfgpubench fleet STEP`,
called by .ci/fleet from .github/workflows/fleet.yml).

A machine measures the stacks of the table that install on it and it has not measured
yet (its results/<machine>/ travels with the repository), then gates each new stack
against the one before it in its chain, when that one had been measured here before:
an upgrade from a known state. A machine's first job measures history and gates nothing.

Pure functions over the table and plain data first; the edge (git, files, the CI's
output files) at the bottom.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

from .names import BENCHMARKS_FILE, NOT_RESULT_FILES
from .runner import previous_in_chain
from .stacks.selection import fits

# Exit statuses of `fleet measure`, worst last: asv continuous's, and a stack that
# could not be installed or measured counts as a failed benchmark.
FINE, REGRESSED, FAILED = 0, 1, 2


def unmeasured(stacks, target, chosen, is_recorded):
    """The stacks of `chosen` that install on `target` and `is_recorded(stack)` says this
    machine has not measured, in table order."""
    runnable = {stack.label for stack, _ in fits(stacks, target)[0]}
    return [s for s in chosen if s.label in runnable and not is_recorded(s)]


def gate_pairs(stacks, target, measured_now, recorded_before):
    """[(previous, new)] to gate: each stack measured now whose previous stack in its
    chain (of those installing on `target`) had been measured before this job."""
    pairs = []
    for stack in measured_now:
        previous = previous_in_chain(stacks, target, stack.label)
        if previous is not None and previous.label in recorded_before:
            pairs.append((previous, stack))
    return pairs


def merge_benchmarks(existing, incoming, measured):
    """benchmarks.json after merging a machine's results: the incoming suite's entry for
    each benchmark those results measured (`measured`: their names), and for one not
    there before; the existing entry for the rest, which the results already in the
    repository were measured by. asv shows a result only under its benchmark's version:
    a machine that ran part of the suite (the comparators, on a machine without
    TensorFlow) leaves the other machines' results of the rest on the graphs."""
    merged = dict(existing)
    for name, entry in incoming.items():
        if name in measured or name not in existing:
            merged[name] = entry
    return merged


def worst(codes):
    """The exit status of several steps: FAILED over REGRESSED over FINE."""
    codes = list(codes)
    if any(code not in (FINE, REGRESSED) for code in codes):
        return FAILED
    return REGRESSED if REGRESSED in codes else FINE


# --- the edge ------------------------------------------------------------------------------

def machine_dirs(incoming):
    """[(machine, directory)] of the results/<machine>/ folders under `incoming` (each
    runner's artifact, unpacked: incoming/ARTIFACT/results/MACHINE/), sorted."""
    found = []
    for machine_json in sorted(Path(incoming).glob("*/results/*/machine.json")):
        found.append((machine_json.parent.name, machine_json.parent))
    return found


class MergeError(Exception):
    """An artifact the merge cannot read; raised before anything is changed."""


def measured_benchmarks(result_files, suite):
    """The benchmarks of `suite` (benchmarks.json's content) that the asv result files
    hold results of at the suite's version of them: a runner's folder carries the
    repository's older files too, whose benchmarks it may not have measured again."""
    names = set()
    for data in result_files:
        results = data.get("results") if isinstance(data, dict) else None
        columns = data.get("result_columns") if isinstance(data, dict) else None
        if not isinstance(results, dict) or not isinstance(columns, list) \
                or "version" not in columns:
            continue
        at = columns.index("version")
        for name, row in results.items():
            entry = suite.get(name)
            if isinstance(entry, dict) and isinstance(row, list) and len(row) > at \
                    and row[at] == entry.get("version"):
                names.add(name)
    return names


def _read_json(path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise MergeError(f"{path}: unreadable ({exc}); nothing was merged") from None


def merge_results(incoming, results_dir):
    """Put every machine's results from the artifacts under `incoming` into results_dir:
    each machine's folder replaces the one there (a runner starts from the repository's
    and adds to it, so its folder is the newer whole). The suite's benchmarks.json takes
    the artifact's entries for the benchmarks its results measured (merge_benchmarks).
    Every benchmarks.json is read before anything changes (MergeError). The machines."""
    results_dir = Path(results_dir)
    target_suite = results_dir / BENCHMARKS_FILE
    suite = _read_json(target_suite) if target_suite.is_file() else None
    found = machine_dirs(incoming)
    for _, directory in found:
        benchmarks = directory.parent / BENCHMARKS_FILE
        if not benchmarks.is_file():
            continue
        theirs = _read_json(benchmarks)
        if suite is None:
            suite = theirs
            continue
        result_files = []
        for path in sorted(directory.glob("*.json")):
            if path.name not in NOT_RESULT_FILES:
                try:
                    result_files.append(json.loads(path.read_text()))
                except (OSError, ValueError):
                    continue  # not asv's result file: it measured nothing here
        suite = merge_benchmarks(suite, theirs, measured_benchmarks(result_files, theirs))
    merged = []
    for machine, directory in found:
        target = results_dir / machine
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(directory, target)
        merged.append(machine)
    if suite is not None and found:
        # As asv writes it.
        target_suite.write_text(json.dumps(suite, indent=4, sort_keys=True))
    return merged


def append_github_file(variable, text, environ=os.environ):
    """Append `text` to the file GitHub Actions names in $variable (GITHUB_OUTPUT,
    GITHUB_STEP_SUMMARY); nothing outside Actions. Whether it was written."""
    path = environ.get(variable)
    if not path:
        return False
    with open(path, "a", encoding="utf-8") as f:
        f.write(text if text.endswith("\n") else text + "\n")
    return True


def git(root, *args, check=True):
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                          check=check).stdout.strip()


def commit_paths(root, paths, message, environ=os.environ):
    """Commit `paths` if they changed, as the fleet (unless git's identity is set in the
    environment); the new commit's hash, or None when nothing changed."""
    git(root, "add", "--", *paths)
    if subprocess.run(["git", "-C", str(root), "diff", "--cached", "--quiet"],
                      check=False).returncode == 0:
        return None
    identity = []
    for key, value in (("user.name", "tfgpubench fleet"),
                       ("user.email", "fleet@tfgpubench.invalid")):
        if not environ.get("GIT_AUTHOR_NAME"):
            identity += ["-c", f"{key}={value}"]
    git(root, *identity, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD")


def push(root, remote="origin", branch=None):
    """Push HEAD to `branch` of `remote` (default: the branch checked out, else
    $GITHUB_REF_NAME); once rebased on what another job pushed meanwhile."""
    branch = branch or os.environ.get("GITHUB_REF_NAME") or git(root, "rev-parse",
                                                                "--abbrev-ref", "HEAD")
    refspec = f"HEAD:refs/heads/{branch}"
    if subprocess.run(["git", "-C", str(root), "push", "-q", remote, refspec],
                      capture_output=True, check=False).returncode == 0:
        return
    git(root, "pull", "-q", "--rebase", remote, branch)
    git(root, "push", "-q", remote, refspec)
