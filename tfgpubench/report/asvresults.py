"""asv result files as plain records for the report, with every unreadable file named, not fatal.

asv stores one JSON file per (machine, commit, environment) under
results/<machine>/, and the suite's current benchmark versions in
results/benchmarks.json. Files are read with asv's own loader
(asv.results.Results); what asv would skip with a log line (a corrupt or
truncated file, a machine directory without machine.json, results recorded
by an older version of a benchmark) becomes a `Problem` naming the file, and
loading carries on with the rest.

A "stack" is one commit of asv's repo (.stacks/): one TensorFlow /
tensorflow-metal release pair. Its label comes from the commit's git tag
when the repo is at hand, else the short hash.
"""

import ast
import json
import math
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..names import INSTALLED_VERSIONS_FILE, NOT_RESULT_FILES
from .changes import recorded_versions

SHORT_HASH = 8


@dataclass(frozen=True)
class Problem:
    """A file, or part of one, that was left out, and why."""

    path: str
    message: str

    def __str__(self):
        return f"{self.path}: {self.message}"


@dataclass(frozen=True)
class Measurement:
    """One parameter combination of one benchmark in one result file.

    value is NaN for a combination asv skipped (n/a) or that failed. The
    spread fields come from asv's recorded statistics (time_ benchmarks
    only; track_ benchmarks record a single value) and are None when absent.
    """

    benchmark: str
    params: dict
    value: float
    unit: str = ""
    q25: float = None
    q75: float = None
    ci_low: float = None
    ci_high: float = None
    repeat: int = None
    # The samples asv kept (it keeps them when a benchmark runs several rounds),
    # for its Mann-Whitney test; empty when it kept none.
    samples: tuple = ()
    # asv stores a failed combination as null, a skipped one (n/a) as NaN: both are
    # NaN in `value`; this tells them apart (asv compare marks a new failure "!").
    failed: bool = False

    def stats(self):
        """asv's stats dict, as its significance test takes it (None without one)."""
        if self.ci_low is None or self.ci_high is None:
            return None
        return {"ci_99_a": self.ci_low, "ci_99_b": self.ci_high,
                "repeat": self.repeat if self.repeat is not None else 0}

    @property
    def measured(self):
        return self.value is not None and not math.isnan(self.value)


@dataclass
class Run:
    """One result file: a machine, a stack (commit) and an asv environment."""

    path: str
    machine: str
    commit_hash: str
    env_name: str
    date: int
    python: str = ""
    label: str = ""
    installed: dict = field(default_factory=dict)
    # What the installer recorded besides the stack's pins ({"numpy": ...}): which
    # benchmarks run the same code in two runs (changes.control_benchmarks).
    also: dict = field(default_factory=dict)
    # {device: {dtype: {mode: why not measured, or None}}} from the GPU
    # self-check the runner recorded; empty when unknown.
    skip_reasons: dict = field(default_factory=dict)
    # That self-check's checks ({name, passed, evidence, gates}), as recorded.
    gpu_checks: list = field(default_factory=list)
    measurements: dict = field(default_factory=dict)  # benchmark -> [Measurement]
    # benchmark -> the version its results were recorded by, where that is not the
    # suite's and they were left out.
    older_versions: dict = field(default_factory=dict)

    @property
    def short_hash(self):
        return self.commit_hash[:SHORT_HASH]

    def benchmark(self, name):
        """All measurements of `name` (possibly empty)."""
        return self.measurements.get(name, [])

    def select(self, name, **params):
        """The measurements of `name` whose parameters include `params`."""
        return [
            m for m in self.benchmark(name)
            if all(m.params.get(k) == v for k, v in params.items())
        ]

    def get(self, name, **params):
        """The one measurement with exactly these parameters, or None."""
        for m in self.select(name, **params):
            return m
        return None


@dataclass
class ResultSet:
    runs: list = field(default_factory=list)
    problems: list = field(default_factory=list)
    machines: dict = field(default_factory=dict)  # name -> machine.json contents

    def by_machine(self):
        grouped = {}
        for run in self.runs:
            grouped.setdefault(run.machine, []).append(run)
        return grouped


def parse_param(text):
    """asv stores parameter values as their repr: "'cpu'" -> 'cpu', "2" -> 2."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _float(value):
    if value is None:
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _stat(stats, key):
    if not stats or stats.get(key) is None:
        return None
    return float(stats[key])


def _grid(param_lists):
    """Every parameter combination, in asv's order (the last axis fastest)."""
    combos = [[]]
    for values in param_lists:
        combos = [c + [v] for c in combos for v in values]
    return combos


def load_benchmarks(results_dir):
    """The suite's current benchmarks (results/benchmarks.json), or {} if absent/unreadable."""
    path = Path(results_dir) / "benchmarks.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)}


def _measurements(results, name, benchmark_info, path):
    """The Measurements of one benchmark in an asv Results object; raises ValueError."""
    param_lists = results.get_result_params(name) or []
    names = benchmark_info.get("param_names") or [f"p{i}" for i in range(len(param_lists))]
    values = results.get_result_value(name, param_lists)
    stats = results.get_result_stats(name, param_lists)
    samples = results.get_result_samples(name, param_lists)
    # asv returns one-element lists for a benchmark without parameters too.
    if not isinstance(values, list):
        raise ValueError(f"{name}: result is not a list")
    combos = _grid(param_lists)
    if len(values) != len(combos) or (stats is not None and len(stats) != len(combos)):
        raise ValueError(
            f"{name}: {len(values)} results for {len(combos)} parameter combinations"
        )
    unit = benchmark_info.get("unit", "")
    out = []
    for i, combo in enumerate(combos):
        s = stats[i] if stats else None
        repeat = _stat(s, "repeat")
        out.append(
            Measurement(
                benchmark=name,
                params={n: parse_param(v) for n, v in zip(names, combo)},
                value=_float(values[i]),
                unit=unit,
                q25=_stat(s, "q_25"),
                q75=_stat(s, "q_75"),
                ci_low=_stat(s, "ci_99_a"),
                ci_high=_stat(s, "ci_99_b"),
                repeat=int(repeat) if repeat is not None else None,
                samples=tuple(samples[i] or ()) if samples and i < len(samples) else (),
                failed=values[i] is None,
            )
        )
    return out


def _machine_info(machine_dir):
    """(contents of machine.json, None) or (None, why it cannot be used)."""
    path = machine_dir / "machine.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, (
            f"unknown machine {machine_dir.name!r}: no machine.json "
            "(results copied from elsewhere? run `asv machine` there)"
        )
    except (OSError, ValueError) as exc:
        return None, f"unknown machine {machine_dir.name!r}: unreadable machine.json ({exc})"
    if not isinstance(data, dict) or not isinstance(data.get("machine"), str):
        return None, f"unknown machine {machine_dir.name!r}: machine.json names no machine"
    return data, None


def load_run(path, machine, benchmarks, results_dir=None):
    """(Run or None, [Problem]) for one result file."""
    from asv import util
    from asv.results import Results

    shown = _shown_path(path, results_dir)
    try:
        results = Results.load(str(path), machine_name=machine)
    except util.UserError as exc:
        return None, [Problem(shown, _short_asv_error(str(exc), path))]
    except (OSError, ValueError, TypeError, AttributeError, IndexError) as exc:
        return None, [Problem(shown, f"unreadable result file ({type(exc).__name__}: {exc})")]

    run = Run(
        path=shown,
        machine=machine,
        commit_hash=results.commit_hash or "",
        env_name=results.env_name or "",
        date=results.date or 0,
        python=results._python or "",
    )
    problems = []
    stale = []
    for name in sorted(results.get_all_result_keys()):
        info = benchmarks.get(name, {})
        if benchmarks and name not in benchmarks:
            stale.append(f"{name} (no longer in the suite)")
            continue
        recorded = results.benchmark_version.get(name)
        current = info.get("version")
        if recorded is not None and current is not None and recorded != current:
            # A benchmark every case of which was skipped measured nothing: no need to say
            # it is left out (a TensorFlow stack keeps the PyTorch and JAX entries, all
            # skipped, of runs from before it stopped asking for them).
            if any(not math.isnan(_float(v))
                   for v in results.get_result_value(name, info.get("params", []))):
                stale.append(f"{name} (recorded by version {recorded!r}, the suite is at "
                             f"{current!r})")
                run.older_versions[name] = recorded
            continue
        try:
            run.measurements[name] = _measurements(results, name, info, path)
        except (ValueError, TypeError, KeyError) as exc:
            problems.append(Problem(shown, f"malformed result, left out: {exc}"))
    if stale:
        problems.append(
            Problem(shown, "results from an older suite version, left out: " + "; ".join(stale))
        )
    return run, problems


def _shown_path(path, results_dir):
    if results_dir is None:
        return str(path)
    try:
        return str(Path(path).relative_to(Path(results_dir).parent))
    except ValueError:
        return str(path)


def _short_asv_error(message, path):
    """asv's message without the absolute path it repeats, which the Problem already names."""
    for text in (f"'{os.path.abspath(path)}'", os.path.abspath(path), f"'{path}'", str(path)):
        message = message.replace(text, "the file")
    if "Error parsing JSON" in message:
        return "corrupt or truncated: " + message.split(":", 1)[-1].strip()
    return message


def load_results(results_dir, stack_labels=None):
    """Every readable run under `results_dir`, and a Problem for everything left out.

    stack_labels: commit hash -> label (see `stack_labels_from_repo`).
    """
    results_dir = Path(results_dir)
    result_set = ResultSet()
    if not results_dir.is_dir():
        result_set.problems.append(Problem(str(results_dir), "no results directory"))
        return result_set
    benchmarks = load_benchmarks(results_dir)
    if not benchmarks:
        result_set.problems.append(
            Problem(
                str(results_dir / "benchmarks.json"),
                "missing or unreadable: benchmark versions cannot be checked and units are unknown",
            )
        )
    stack_labels = stack_labels or {}
    for machine_dir in sorted(p for p in results_dir.iterdir() if p.is_dir()):
        files = sorted(
            p for p in machine_dir.glob("*.json") if p.name not in NOT_RESULT_FILES
        )
        if not files:
            continue
        info, why_not = _machine_info(machine_dir)
        if why_not:
            for path in files:
                result_set.problems.append(Problem(_shown_path(path, results_dir), why_not))
            continue
        machine = info["machine"]
        result_set.machines[machine] = info
        installed = read_installed_versions(machine_dir, result_set.problems, results_dir)
        for path in files:
            run, problems = load_run(path, machine, benchmarks, results_dir)
            result_set.problems.extend(problems)
            if run is None:
                continue
            run.label = stack_labels.get(run.commit_hash) or run.short_hash
            entry = (
                installed.get((run.commit_hash, run.env_name))
                or installed.get((run.commit_hash, None))
                or {}
            )
            run.installed = entry.get("versions", {})
            run.also = entry.get("also", {})
            run.skip_reasons = entry.get("skip_reasons", {})
            run.gpu_checks = entry.get("gpu_checks", [])
            result_set.runs.append(run)
    order = {commit: i for i, commit in enumerate(stack_labels)}
    result_set.runs.sort(
        key=lambda r: (r.machine, order.get(r.commit_hash, len(order)), r.date, r.env_name)
    )
    return result_set


def skip_reasons_of(entry):
    """{device: {dtype: {mode: reason}}} from a ledger entry: the GPU self-check's
    verdicts, or, in entries written before it existed, {dtype: reason} for gpu."""
    record = entry.get("gpu_checks")
    if isinstance(record, dict) and isinstance(record.get("verdicts"), dict):
        return record["verdicts"]
    legacy = entry.get("gpu_multiply")
    if isinstance(legacy, dict) and legacy:
        return {"gpu": {dtype: {"*": reason} for dtype, reason in legacy.items()}}
    return {}


def read_installed_versions(machine_dir, problems, results_dir=None):
    """{(commit, env or None): {"versions": {package: version}, "also": {package:
    version}, "skip_reasons": ..., "gpu_checks": [...]}} from installed-versions.jsonl, if
    present.

    The file is optional (asv itself records no versions for existing
    environments); a bad line is reported and skipped.
    """
    path = Path(machine_dir) / INSTALLED_VERSIONS_FILE
    found = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return found
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            commit = entry.get("commit_hash") or entry["commit"]
            versions = entry.get("versions") or entry.get("installed") or {}
            if not isinstance(versions, dict):
                raise ValueError("versions is not an object")
        except (ValueError, KeyError, AttributeError, TypeError) as exc:
            problems.append(
                Problem(f"{_shown_path(path, results_dir)}:{number}", f"unreadable line ({exc})")
            )
            continue
        record = entry.get("gpu_checks")
        found[(commit, entry.get("env_name"))] = {
            "versions": {str(k): str(v) for k, v in versions.items()},
            "also": recorded_versions(entry.get("also")),
            "skip_reasons": skip_reasons_of(entry),
            "gpu_checks": record.get("checks", []) if isinstance(record, dict) else [],
        }
    return found


def stack_labels_from_repo(repo):
    """{commit hash: label} for the commits of asv's repo, oldest first.

    The label is the commit's tag (asv publish draws tags on its graphs); a
    commit without one gets its short hash. Returns {} when `repo` is not a
    local git repository (a URL, a missing directory, no git).
    """
    if not repo or not Path(repo).is_dir():
        return {}

    def git(*args):
        return subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
        ).stdout

    try:
        commits = git("rev-list", "--topo-order", "--reverse", "--all").split()
        refs = git(
            "for-each-ref", "--sort=creatordate",
            "--format=%(objectname) %(*objectname) %(refname:short)", "refs/tags",
        )
    except (OSError, subprocess.CalledProcessError):
        return {}
    tags = {}
    for line in refs.splitlines():
        parts = line.split()
        if len(parts) == 3:
            _, commit, tag = parts  # annotated: the tag object, then the commit
        elif len(parts) == 2:
            commit, tag = parts
        else:
            continue
        tags.setdefault(commit, tag)
    return {commit: tags.get(commit, commit[:SHORT_HASH]) for commit in commits}
