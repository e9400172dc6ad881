"""Keep asv's results safe across failed installs and interrupted runs, and say
which versions each result really measured.

asv writes result files in place (not atomically) and rewrites machine.json,
benchmarks.json and the file of the commit it runs; a run killed mid-write
leaves a truncated file. Before each stack the runner copies exactly the
files asv may rewrite and notes which stack is in progress; the next run puts
back, from that copy, any of them that no longer parses, and removes one that
did not exist before. A broken file no interrupted run explains (a bad merge,
an edit) is not guessed at: `find_damage` names it and the run stops.

A stack is finished when its line in installed-versions.jsonl is written,
with one write() call: a kill lands before it or after it. A result without
that line is from a run killed in between; the stack is installed again (asv
keeps its measurements) to write the line.
"""

import ast
import datetime
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from ..names import INSTALLED_VERSIONS_FILE, NOT_RESULT_FILES, OWN_LABEL_PREFIX
from ..pausepoints import pause_point
from .machine import differences

# In the snapshot directory: the machine and commit of the stack being run.
IN_PROGRESS_FILE = "in-progress.json"
# A record is a JSON object with at least these (see runner.run_stack).
RECORD_KEYS = ("label", "commit")
OWN_LABEL = re.compile(rf"^{OWN_LABEL_PREFIX}[A-Za-z0-9._+-]{{1,120}}$")


def result_files(results_dir, machine, commit):
    return sorted(Path(results_dir, machine).glob(f"{commit[:8]}-*.json"))


def files_asv_rewrites(results_dir, machine, commit):
    results_dir = Path(results_dir)
    return [results_dir / "benchmarks.json", results_dir / machine / "machine.json",
            *result_files(results_dir, machine, commit)]


def begin(results_dir, snapshot_dir, machine, commit):
    """Before asv runs a stack: copy the files it may rewrite, then note the stack as
    in progress (last, so a kill while copying leaves no note to trust)."""
    results_dir, snapshot_dir = Path(results_dir), Path(snapshot_dir)
    end(snapshot_dir)
    if snapshot_dir.exists():
        shutil.rmtree(snapshot_dir)
    for path in files_asv_rewrites(results_dir, machine, commit):
        if path.is_file() and is_valid_json(path):
            target = snapshot_dir / path.relative_to(results_dir)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    snapshot_dir.mkdir(parents=True, exist_ok=True)
    note = snapshot_dir / (IN_PROGRESS_FILE + ".tmp")
    note.write_text(json.dumps({"machine": machine, "commit": commit}))
    os.replace(note, snapshot_dir / IN_PROGRESS_FILE)


def end(snapshot_dir):
    """The stack in progress is finished (or undone): nothing left to repair."""
    Path(snapshot_dir, IN_PROGRESS_FILE).unlink(missing_ok=True)


def in_progress(snapshot_dir):
    """(machine, commit) of the stack an interrupted run was measuring, or None."""
    path = Path(snapshot_dir, IN_PROGRESS_FILE)
    try:
        note = json.loads(path.read_text())
        return note["machine"], note["commit"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def shown(path, results_dir):
    """`path` as the user knows it: from the directory holding results/."""
    try:
        return str(Path(path).relative_to(Path(results_dir).parent))
    except ValueError:
        return str(path)


def is_valid_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            json.load(f)
    except (OSError, ValueError):
        return False
    return True


def repair(results_dir, snapshot_dir):
    """Undo the half-written files of an interrupted stack: put back each file asv was
    rewriting that no longer parses, remove one it had only begun. One line per file."""
    results_dir, snapshot_dir = Path(results_dir), Path(snapshot_dir)
    messages = []
    stack = in_progress(snapshot_dir)
    if stack is not None:
        for path in files_asv_rewrites(results_dir, *stack):
            if not path.is_file() or is_valid_json(path):
                continue
            saved = snapshot_dir / path.relative_to(results_dir)
            if saved.is_file():
                shutil.copy2(saved, path)
                messages.append(f"{shown(path, results_dir)}: was cut short by an interrupted "
                                "run; restored")
            else:
                path.unlink()
                messages.append(f"{shown(path, results_dir)}: was cut short by an interrupted "
                                "run before it was ever complete; removed (that stack is "
                                "measured again)")
    for path in sorted(Path(results_dir).glob(f"*/{INSTALLED_VERSIONS_FILE}")):
        if _cut_short_tail(path):
            text = path.read_bytes()
            path.write_bytes(text[:text.rfind(b"\n") + 1])
            messages.append(f"{shown(path, results_dir)}: its last line was cut short by an "
                            "interrupted run; removed (that stack is installed again to record "
                            "it)")
    return messages


def _cut_short_tail(path):
    """Whether the file ends in a line without its newline that does not parse."""
    text = path.read_bytes()
    if not text or text.endswith(b"\n"):
        return False
    try:
        json.loads(text[text.rfind(b"\n") + 1:])
    except ValueError:
        return True
    return False


def find_damage(results_dir, snapshot_dir):
    """One line per broken file under results/ that `repair` will not fix: files no
    interrupted run explains. Empty when the run may go ahead."""
    from asv.results import Results

    results_dir, snapshot_dir = Path(results_dir), Path(snapshot_dir)
    if not results_dir.is_dir():
        return []
    stack = in_progress(snapshot_dir)
    repairable = set(files_asv_rewrites(results_dir, *stack)) if stack else set()
    problems = []
    for path in sorted(results_dir.rglob("*.json")):
        if path in repairable:
            continue
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError) as exc:
            problems.append(f"{shown(path, results_dir)}: not valid JSON ({exc}), and no "
                            "interrupted run of tfgpubench left it so: fix or remove it")
            continue
        if not isinstance(data, dict):
            problems.append(f"{shown(path, results_dir)}: holds {type(data).__name__}, not "
                            "asv's JSON object")
        elif path.parent != results_dir and path.name not in NOT_RESULT_FILES:
            try:
                Results.load(str(path))
            except Exception as exc:  # asv raises its own errors for foreign files
                problems.append(f"{shown(path, results_dir)}: not a result file asv can read "
                                f"({exc})")
    for path in sorted(results_dir.glob(f"*/{INSTALLED_VERSIONS_FILE}")):
        problems.extend(_ledger_damage(path, shown(path, results_dir)))
    return problems


def _ledger_damage(path, name):
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    if _cut_short_tail(path):
        lines = lines[:-1]  # repair removes it
    problems = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            problems.append(f"{name}:{number}: not a JSON record ({exc}): fix or remove "
                            "the line")
            continue
        if not isinstance(record, dict) or not all(
                isinstance(record.get(key), str) for key in RECORD_KEYS):
            problems.append(f"{name}:{number}: not a record of a stack (needs "
                            f"{' and '.join(RECORD_KEYS)})")
        elif "own" in record and not valid_own(record["own"]):
            problems.append(f"{name}:{number}: its own stack is not one run --existing "
                            "records (label own-..., a parent, a stack with os and pins)")
    return problems


def valid_own(own):
    """Whether an `own` entry can become a side commit: it is turned into a git tag."""
    if not isinstance(own, dict) or not isinstance(own.get("stack"), dict):
        return False
    label, stack = own.get("label"), own["stack"]
    return (isinstance(label, str) and OWN_LABEL.match(label) is not None
            and ".." not in label and not label.endswith((".", ".lock"))
            and (own.get("parent") is None or isinstance(own.get("parent"), str))
            and isinstance(stack.get("os"), str) and isinstance(stack.get("pins"), list))


def restore(paths_before, results_dir, snapshot_dir, machine, commit):
    """Undo what a failed stack did: its new result files go, changed or removed ones
    come back from the snapshot."""
    results_dir, snapshot_dir = Path(results_dir), Path(snapshot_dir)
    for path in result_files(results_dir, machine, commit):
        if path not in paths_before:
            path.unlink()
    for saved in result_files(snapshot_dir, machine, commit):
        shutil.copy2(saved, results_dir / saved.relative_to(snapshot_dir))


def failed(value):
    return value is None or (isinstance(value, list) and None in value)


@dataclass
class Previous:
    """What this machine already has of a stack (see previous_measurement)."""

    complete: bool = False  # every wanted benchmark measured on this machine as it is now
    recorded: bool = False  # and its installed versions written to the ledger
    stale: list = field(default_factory=list)  # result files of another configuration
    why: str = None  # one line for the user when there is something but not enough

    @property
    def finished(self):
        return self.complete and self.recorded


def source_versions(benchmark_dir):
    """{"module.Class": version} for every class of the suite that sets `version`, read
    from the source's syntax trees (nothing imported: the suite imports TensorFlow)."""
    versions = {}
    for path in sorted(Path(benchmark_dir).glob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            continue
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            for item in node.body:
                if (isinstance(item, ast.Assign) and isinstance(item.value, ast.Constant)
                        and any(getattr(t, "id", None) == "version" for t in item.targets)):
                    versions[f"{path.stem}.{node.name}"] = str(item.value.value)
    return versions


def outdated(wanted, versions):
    """Names of `wanted` (benchmarks.json's entries) whose recorded version is not the
    source's: results under the recorded one are not what the suite measures now."""
    return sorted(name for name, benchmark in wanted.items()
                  if versions.get(name.rsplit(".", 1)[0], str(benchmark.get("version")))
                  != str(benchmark.get("version")))


def previous_measurement(results_dir, machine, commit, wanted, here, versions=None):
    """What results/<machine>/ holds of `commit`, judged against this machine as it is
    now (`here`: its asv machine entry) and the suite as it is now (`versions`: see
    source_versions). Results recorded on other hardware or another OS do not count,
    and are listed as stale: a new measurement replaces them. Results of a benchmark
    whose version changed since do not count either: asv measures it again."""
    previous = Previous(recorded=recorded(results_dir, machine, commit))
    if not wanted:
        return previous
    changed_versions = outdated(wanted, versions or {})
    if changed_versions:
        classes = sorted({name.rsplit(".", 1)[0] for name in changed_versions})
        previous.why = (f"the suite's {', '.join(classes)} changed version since the last "
                        "measurement here; measuring again")
        return previous
    for path, results in _loaded_results(results_dir, machine, commit):
        changed = differences(results.params, here)
        if changed:
            previous.stale.append(path)
            previous.why = (f"measured on {machine} with {'; '.join(changed)}; "
                            "measuring it again")
            continue
        have = set(results.get_result_keys(wanted))
        previous.complete = previous.complete or all(
            name in have and not failed(results.get_result_value(name, wanted[name]["params"]))
            for name in wanted
        )
    return previous


def measured_as_now(results_dir, machine, commit, patterns, versions):
    """Whether results/<machine>/ holds every benchmark of the suite (those the -b
    `patterns` select) for `commit` under the versions the suite's source has now.

    benchmarks.json says what the last asv run found; where its versions are not the
    source's (`versions`, see source_versions), no result is taken as current."""
    wanted = selected_benchmarks(results_dir, patterns)
    if not wanted or outdated(wanted, versions):
        return False
    return any(set(wanted) <= set(results.get_result_keys(wanted))
               for _, results in _loaded_results(results_dir, machine, commit))


def _loaded_results(results_dir, machine, commit):
    """(path, asv Results) of each of `commit`'s result files that asv can read."""
    from asv.results import Results

    for path in result_files(results_dir, machine, commit):
        try:
            results = Results.load(str(path), machine)
        except Exception:  # asv raises its own errors for old or foreign files
            continue
        yield path, results


def recorded(results_dir, machine, commit):
    """Whether installed-versions.jsonl of `machine` has a line for `commit`."""
    path = Path(results_dir, machine, INSTALLED_VERSIONS_FILE)
    return path.is_file() and any(r.get("commit") == commit for r in _records(path))


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
    """Append one line saying which versions a stack's results were measured with.

    One write() of the whole line, opened for appending: a kill lands before
    or after it, never inside, and no other line is touched. A file that does
    not end in a newline (written by hand) gets one first.
    """
    record = dict(record, recorded_at=datetime.datetime.now(datetime.timezone.utc)
                  .isoformat(timespec="seconds"))
    path = Path(results_dir, machine, INSTALLED_VERSIONS_FILE)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(record, sort_keys=True) + "\n").encode("utf-8")
    if path.is_file() and path.stat().st_size and not path.read_bytes().endswith(b"\n"):
        line = b"\n" + line
    pause_point("ledger-append")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        written = os.write(fd, line)
        while written < len(line):  # only on a full disk or the like
            written += os.write(fd, line[written:])
    finally:
        os.close(fd)


def _records(path):
    """The records of one ledger file; lines that do not parse are skipped."""
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue  # find_damage names it before a run; readers carry on
        if isinstance(record, dict):
            records.append(record)
    return records


def read_installed(results_dir):
    """Every record of every machine, oldest first; unreadable lines are skipped."""
    records = []
    for path in sorted(Path(results_dir).glob(f"*/{INSTALLED_VERSIONS_FILE}")):
        records.extend(_records(path))
    return records


def installed_record(results_dir, machine, commit):
    """The latest record of `commit` on `machine`, or None."""
    path = Path(results_dir, machine, INSTALLED_VERSIONS_FILE)
    found = [r for r in _records(path) if r.get("commit") == commit] if path.is_file() else []
    return found[-1] if found else None


def own_stacks(results_dir):
    """The side stacks recorded by `run --existing` for installations matching no row."""
    own = {}
    for record in read_installed(results_dir):
        if valid_own(record.get("own")):
            own[record["own"]["label"]] = record["own"]
    return list(own.values())
