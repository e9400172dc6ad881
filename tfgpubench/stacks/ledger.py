"""Keep asv's results safe across failed installs and interrupted runs, and say
which versions each result really measured.

asv writes result files in place (not atomically) and rewrites machine.json,
benchmarks.json and the file of the commit it runs; a run killed mid-write
leaves a truncated file. Before each stack the runner copies exactly the
files asv may rewrite; afterwards (and at the start of every run) any file
that no longer parses is put back from that copy.
"""

import datetime
import json
import re
import shutil
from pathlib import Path

from ..names import INSTALLED_VERSIONS_FILE


def result_files(results_dir, machine, commit):
    return sorted(Path(results_dir, machine).glob(f"{commit[:8]}-*.json"))


def files_asv_rewrites(results_dir, machine, commit):
    results_dir = Path(results_dir)
    return [results_dir / "benchmarks.json", results_dir / machine / "machine.json",
            *result_files(results_dir, machine, commit)]


def snapshot(paths, results_dir, snapshot_dir):
    """Copy `paths` (those that exist) under snapshot_dir, replacing the last snapshot."""
    snapshot_dir = Path(snapshot_dir)
    if snapshot_dir.exists():
        shutil.rmtree(snapshot_dir)
    for path in paths:
        if path.is_file() and is_valid_json(path):
            target = snapshot_dir / path.relative_to(results_dir)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)


def is_valid_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            json.load(f)
    except (OSError, ValueError):
        return False
    return True


def repair(results_dir, snapshot_dir):
    """Put back every unparsable *.json under results_dir from the snapshot, or move it
    aside as *.json.corrupt so asv skips it. One line per file, for the user."""
    results_dir, snapshot_dir = Path(results_dir), Path(snapshot_dir)
    messages = []
    if not results_dir.is_dir():
        return messages
    for path in sorted(results_dir.rglob("*.json")):
        if is_valid_json(path):
            continue
        saved = snapshot_dir / path.relative_to(results_dir)
        if saved.is_file():
            shutil.copy2(saved, path)
            messages.append(f"{path}: was cut short by an interrupted run; restored")
        else:
            path.rename(path.with_name(path.name + ".corrupt"))
            messages.append(f"{path}: was cut short by an interrupted run and had no earlier "
                            f"copy; moved aside to {path.name}.corrupt")
    return messages


def restore(paths_before, results_dir, snapshot_dir, machine, commit):
    """Undo what a failed stack wrote: its new result files go, changed ones come back."""
    results_dir, snapshot_dir = Path(results_dir), Path(snapshot_dir)
    for path in result_files(results_dir, machine, commit):
        saved = snapshot_dir / path.relative_to(results_dir)
        if saved.is_file():
            shutil.copy2(saved, path)
        elif path not in paths_before:
            path.unlink()


def failed(value):
    return value is None or (isinstance(value, list) and None in value)


def measured(results_dir, machine, commit, wanted):
    """Whether every benchmark in `wanted` already has a successful result for this commit."""
    from asv.results import Results

    if not wanted:
        return False
    for path in result_files(results_dir, machine, commit):
        try:
            results = Results.load(str(path), machine)
        except Exception:  # asv raises its own errors for old or foreign files
            continue
        have = set(results.get_result_keys(wanted))
        if all(
            name in have and not failed(results.get_result_value(name, wanted[name]["params"]))
            for name in wanted
        ):
            return True
    return False


def selected_benchmarks(results_dir, patterns):
    """{name: benchmark} from asv's benchmarks.json matching any of the -b regexes."""
    path = Path(results_dir, "benchmarks.json")
    if not is_valid_json(path):
        return {}
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    benchmarks = {k: v for k, v in data.items() if k != "version"}
    if not patterns:
        return benchmarks
    return {k: v for k, v in benchmarks.items() if any(re.search(p, k) for p in patterns)}


def record_installed(results_dir, machine, record):
    """Append one line saying which versions a stack's results were measured with."""
    record = dict(record, recorded_at=datetime.datetime.now(datetime.timezone.utc)
                  .isoformat(timespec="seconds"))
    path = Path(results_dir, machine, INSTALLED_VERSIONS_FILE)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record, sort_keys=True) + "\n")


def read_installed(results_dir):
    """Every record of every machine, oldest first; unreadable lines are skipped."""
    records = []
    for path in sorted(Path(results_dir).glob(f"*/{INSTALLED_VERSIONS_FILE}")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                records.append(json.loads(line))
            except ValueError:
                continue  # a line cut short by a kill: the rest stay usable
    return records


def own_stacks(results_dir):
    """The side stacks recorded by `run --existing` for installations matching no row."""
    own = {}
    for record in read_installed(results_dir):
        if record.get("own"):
            own[record["own"]["label"]] = record["own"]
    return list(own.values())
