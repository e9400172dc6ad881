"""The steps of `tfgpubench run`: one `asv run` per stack, an existing installation,
the machine's registration, and publishing html/ (asv's site, made to work
offline, and the report page).

Each stack is its own `asv run`, so one that fails to install costs nothing
else; stacks already measured are not redone.
"""

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import alerts
from . import format as fmt
from .config import load_config
from .names import (
    COMPARATOR_BENCHMARKS,
    FRAMEWORK_MULTIPLY,
    GPU_CHECKS_ENV,
    INSTALL_HISTORY_FILE,
    INSTALL_MARKER_FILE,
    OWN_LABEL_PREFIX,
    REGRESSIONS_FILE,
    REGRESSIONS_MARKDOWN_FILE,
    TABLE_FILE,
    TENSORFLOW,
    TENSORFLOW_STACK_BENCHMARKS,
)
from .pairing import series
from .report import publish_page
from .report.changes import control_benchmarks, recorded_versions
from .stacks import ledger
from .stacks import repo as stacks_repo
from .stacks.install_stack import parse_pin
from .stacks.machine import (
    HARDWARE_KEYS,
    check_machine_name,
    describe_machine,
    differences,
    name_conflict,
    register_machine,
)
from .stacks.selection import Target, fits
from .stacks.table import TENSORFLOWS, load_table
from .suite import suite_module
from .vendor import describe, make_self_contained

INSTALLER = "tfgpubench/stacks/install_stack.py"
SNAPSHOT_DIR = "tfgpubench-snapshot"  # beside asv's env_dir, under .asv/
EXISTING_GPU_CHECKS = "tfgpubench-existing-gpu-checks.json"  # likewise
# asv exits 2 when a benchmark failed but results were saved, 1 when none were.
ASV_SOME_FAILED = 2
# Keep every sample in the result files: asv compare, asv continuous and the
# report's version story then test significance with Mann-Whitney on them,
# not with the cruder overlap of confidence intervals.
ASV_RUN_DEFAULTS = ["--record-samples"]


def read_conf(path):
    from asv import util

    return util.load_json(str(path), js_comments=True)


def launch_method_args(asv_args, system=sys.platform):
    """asv's --launch-method for this platform, unless the user chose one.

    forkserver imports TensorFlow once and forks a process per benchmark
    (minutes become seconds); on macOS forking after Metal has loaded is
    unsafe, so spawn stays.
    """
    if any(a.startswith("--launch-method") for a in asv_args):
        return []
    return ["--launch-method", "spawn" if system == "darwin" else "forkserver"]


def asv_command(args, config_path):
    return [sys.executable, "-m", "asv", *args, "--config", str(config_path)]


@contextlib.contextmanager
def engine_scope(environ=os.environ):
    """A folder of its own for the TensorFlow engines (benchmarks/engine.py) of one asv run,
    set in `environ` for asv's benchmark processes; the engines are asked to end after it,
    and the folder removed. An engine left by a killed run ends on its own when idle."""
    engine = suite_module("engine")
    # Short: a socket's path may not exceed 104 bytes on macOS, whose temporary folder
    # is already ~50 long.
    folder = tempfile.mkdtemp(prefix="tfgpb-")
    previous = environ.get(engine.ENGINE_DIR_ENV)
    environ[engine.ENGINE_DIR_ENV] = folder
    try:
        yield folder
    finally:
        if previous is None:
            environ.pop(engine.ENGINE_DIR_ENV, None)
        else:
            environ[engine.ENGINE_DIR_ENV] = previous
        engine.stop_engines(folder)
        shutil.rmtree(folder, ignore_errors=True)


class Terminated(KeyboardInterrupt):
    """SIGTERM to tfgpubench (cli.main), unwound as Ctrl-C is."""


def end_interrupted(proc, interrupt):
    """After Ctrl-C or SIGTERM (`interrupt`) reached tfgpubench while asv (`proc`) ran:
    let asv finish its own interrupt handling, killed after 30 s. SIGTERM, which reached
    tfgpubench only (Ctrl-C reaches the whole foreground group), is passed on first."""
    if isinstance(interrupt, Terminated):
        proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run_asv(cmd):
    """Run asv, its TensorFlow engines scoped to it; interrupted, end it (end_interrupted)
    and re-raise."""
    with engine_scope():
        proc = subprocess.Popen(cmd)
        try:
            return proc.wait()
        except KeyboardInterrupt as interrupt:
            end_interrupted(proc, interrupt)
            raise


def split_bench_args(asv_args):
    """([-b patterns], [the other arguments]) of arguments for asv run."""
    patterns, rest, args = [], [], iter(asv_args)
    for arg in args:
        if arg in ("-b", "--bench"):
            patterns.append(next(args, ""))
        elif arg.startswith("--bench="):
            patterns.append(arg.split("=", 1)[1])
        elif arg.startswith("-b"):  # -bPATTERN and -b=PATTERN, as argparse reads them
            patterns.append(arg[3:] if arg.startswith("-b=") else arg[2:])
        else:
            rest.append(arg)
    return patterns, rest


def stack_asv_args(stack, asv_args):
    """The asv run arguments that measure `stack`.

    A comparator stack has no TensorFlow: it runs the comparator benchmarks
    only, those of the user's -b patterns that select one, else all of them. A
    TensorFlow stack runs the user's -b patterns, else all but the benchmarks of
    the frameworks it does not install.
    """
    patterns, rest = split_bench_args(asv_args)
    if not stack.is_comparators:
        return list(asv_args) if patterns else rest + ["-b", TENSORFLOW_STACK_BENCHMARKS]
    comparators = [name for framework, name in FRAMEWORK_MULTIPLY.items()
                   if framework != TENSORFLOW]
    kept = [p for p in patterns if any(re.search(p, name) for name in comparators)]
    bench = []
    for pattern in kept or COMPARATOR_BENCHMARKS:
        bench += ["-b", pattern]
    return rest + bench


def run_stack(session, stack, commit):
    """Measure one stack; None when it went well, else a one-line reason.

    Results recorded under the same machine name on other hardware or
    another OS are measured again, not skipped.
    """
    machine, results_dir, snapshot_dir = session.machine, session.results_dir, session.snapshot_dir
    conf, here = session.conf, session.here
    asv_args = stack_asv_args(stack, session.asv_args)
    wanted = ledger.selected_benchmarks(results_dir, split_bench_args(asv_args)[0])
    versions = ledger.source_versions(conf["benchmark_dir"])
    previous = ledger.previous_measurement(results_dir, machine, commit, wanted, here, versions)
    skip_measured = ["--skip-existing-successful"]
    if previous.finished:
        print(f"  already measured on {machine}; skipped")
        return None
    if previous.complete:
        # A run killed between asv's save and the ledger's line: the install that
        # made these results says what they measured, if asv's environment still has it.
        marker = _install_marker(Path(conf["env_dir"]), commit)
        if marker is not None and marker.get("ok"):
            print("  measured by an interrupted run; recording the versions it installed")
            record_stack(session, stack, commit, marker, code=0)
            session.measured.append(stack.label)
            return None
        print("  measured by an interrupted run whose install is gone: measuring it again")
        skip_measured = []
    elif previous.why:
        print(f"  {previous.why}")
    before = set(ledger.result_files(results_dir, machine, commit))
    ledger.begin(results_dir, snapshot_dir, machine, commit)
    for path in previous.stale:
        # asv would merge new results into the other configuration's file.
        path.unlink()
    cmd = asv_command(["run", f"{commit}^!", "--machine", machine, *skip_measured,
                       *ASV_RUN_DEFAULTS, *launch_method_args(asv_args), *asv_args],
                      session.config_path)
    try:
        code = run_asv(cmd)
    except KeyboardInterrupt:
        for message in ledger.repair(results_dir, snapshot_dir):
            print(message)
        print(f"interrupted during {stack.label}; results of finished stacks are kept, "
              "run again to resume", file=sys.stderr)
        raise
    for message in ledger.repair(results_dir, snapshot_dir):
        print(message)
    marker = _install_marker(Path(conf["env_dir"]), commit)
    if marker is None or not marker.get("ok"):
        ledger.restore(before, results_dir, snapshot_dir, machine, commit)
        ledger.end(snapshot_dir)
        reason = (marker or {}).get("reason") or f"asv exited {code} before installing it"
        return f"not installed: {reason}"
    record_stack(session, stack, commit, marker, code)
    session.measured.append(stack.label)
    ledger.end(snapshot_dir)
    if code == ASV_SOME_FAILED:
        return "installed, but some benchmarks failed (asv's output above says which)"
    if code != 0:
        return f"asv run exited {code}"
    return None


def record_stack(session, stack, commit, marker, code):
    """Write the stack's line in the ledger: the versions its install put in place and
    what the GPU self-check the installer ran found."""
    gpu_checks = marker.get("gpu_checks")
    if stack.is_comparators:
        print("  no GPU self-check (it needs TensorFlow): each comparator benchmark checks "
              "where its result lives")
    else:
        print_gpu_checks(gpu_checks)
    ledger.record_installed(session.results_dir, session.machine, {
        "label": stack.label, "commit": commit, "python": marker["python"],
        "platform": marker["platform"], "variant": marker["variant"], "pins": marker["pins"],
        "installed": marker["installed"], "also": marker.get("also", {}), "asv_exit": code,
        "gpu_checks": gpu_checks,
    })


def print_gpu_checks(record):
    """The GPU self-check's outcome, one line per check."""
    if not record:
        print("  GPU self-check: not recorded")
        return
    print("  GPU self-check:")
    for check in record["checks"]:
        print(f"    {fmt.check_line(check)}")


def gpu_checks_in(python, benchmark_dir, record_path):
    """Run the GPU self-check in `python` (an existing installation), saving the record
    at record_path for asv's benchmark processes; the record, or None with a message."""
    script = Path(__file__).with_name("stacks") / "check_gpu.py"
    try:
        done = subprocess.run([str(python), str(script), str(benchmark_dir), str(record_path)],
                              capture_output=True, text=True, timeout=600, check=True)
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as exc:
        print(f"  could not run the GPU self-check in {python}: {exc}")
        return None


def _install_marker(env_dir, commit):
    """What install_stack.py recorded for `commit` in asv's environments, or None."""
    found = []
    for path in env_dir.glob(f"*/{INSTALL_MARKER_FILE}"):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if record.get("commit") == commit:
            record["env_dir"] = str(path.parent)
            found.append((path.stat().st_mtime, record))
    return max(found, key=lambda item: item[0])[1] if found else None


def recorded_also_versions(env_dir, results_dir, machine, commit, ledger_first=False):
    """{distribution: version} of what the installer recorded besides the stack's pins
    (numpy, ...) for `commit`: from its latest successful install in each of asv's
    environments (install_stack.py's history), else from its line in the machine's ledger;
    {} where neither has it, or where environments disagree (then which one a comparison
    read is not known here). ledger_first: the ledger's line first, as `run` wrote it with
    the results it compares (a later install may have resolved another numpy)."""
    if ledger_first:
        return _also(ledger.installed_record(results_dir, machine, commit)) or \
            recorded_also_versions(env_dir, results_dir, machine, commit)
    latest = []  # per environment: the last successful install's versions
    for path in sorted(Path(env_dir).glob(f"*/{INSTALL_HISTORY_FILE}")):
        found = None
        with contextlib.suppress(OSError):
            for line in path.read_text().splitlines():
                with contextlib.suppress(ValueError):
                    record = json.loads(line)
                    if isinstance(record, dict) and record.get("commit") == commit \
                            and record.get("ok"):
                        found = _also(record)
        if found is not None:
            latest.append(found)
    if latest:
        return latest[0] if all(also == latest[0] for also in latest) else {}
    return _also(ledger.installed_record(results_dir, machine, commit))


def _also(record):
    return recorded_versions((record or {}).get("also"))


def stack_controls(session, previous_commit, new_commit, ledger_first=False):
    """The controls between two stacks measured on this machine (changes.control_benchmarks:
    the benchmarks whose code is the same in both, by the versions the installer recorded)."""
    env_dir = session.root / session.conf["env_dir"]
    return control_benchmarks(*(
        recorded_also_versions(env_dir, session.results_dir, session.machine, commit,
                               ledger_first)
        for commit in (previous_commit, new_commit)))


# --- an existing installation -----------------------------------------------

def query_python(python, installer=INSTALLER):
    """Platform, Python version and TensorFlow family installed in `python`."""
    out = subprocess.run([python, installer, "--query"], capture_output=True, text=True,
                         check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{python}: could not run it: {out.stderr.strip()[-300:]}")
    return json.loads(out.stdout)


def match_existing(stacks, here):
    """The stack whose pins are exactly what `here` has installed, or None."""
    installed = set(here["installed"].items())
    for variant in ("cpu", "cuda"):
        target = Target(here["system"], here["machine"], here["python"], variant)
        for stack, pins in fits(stacks, target)[0]:
            if {parse_pin(p) for p in pins} == installed:
                return stack
    return None


def own_stack(stacks, here):
    """A side stack for an installation no row matches, labeled with its versions."""
    os_name = {"darwin": "macos"}.get(here["system"], here["system"])
    installed = dict(sorted(here["installed"].items()))
    label = OWN_LABEL_PREFIX + "-".join(f"{name}{version}" for name, version in installed.items())
    tf = next((v for n, v in installed.items() if n in TENSORFLOWS.get(os_name, ()) or
               n in ("tensorflow", "tensorflow-cpu", "tensorflow-macos")), None)
    # Drawn right after the newest row of its OS with an older or equal TensorFlow.
    parent = None
    for stack in stacks:
        if stack.os == os_name and tf and series(stack.tensorflow_version()) <= series(tf):
            parent = stack.label
    return {"label": label, "parent": parent, "stack": {
        "label": label, "os": os_name, "own": True,
        "pins": [f"{n}=={v}" for n, v in installed.items()],
        "wheels": {here["machine"]: [here["python"]]},
    }}


def existing_stack(stacks, python):
    """(here, label, own entry or None) for the TensorFlow installed in `python`.

    Raises RunRefused when `python` cannot be asked or has no TensorFlow."""
    try:
        here = query_python(python)
    except (OSError, RuntimeError, ValueError) as exc:
        raise RunRefused(f"--existing {python}: cannot ask it what it has installed ({exc})") \
            from None
    if not here["installed"]:
        raise RunRefused(f"--existing {python}: no TensorFlow installed there")
    versions = " ".join(f"{n}=={v}" for n, v in sorted(here["installed"].items()))
    stack = match_existing(stacks, here)
    if stack is not None:
        print(f"{python}: {versions} is stack {stack.label}")
        return here, stack.label, None
    own_entry = own_stack(stacks, here)
    print(f"{python}: {versions} matches no row of {TABLE_FILE}; results go under "
          f"its own label {own_entry['label']}")
    return here, own_entry["label"], own_entry


def run_existing(session, python, here, label, own_entry, commit):
    """Measure the installation in `python` under `commit`; asv's exit status."""
    record = {"label": label, "commit": commit, "python": here["python"],
              "platform": f"{here['system']} {here['machine']}", "existing": python,
              "installed": here["installed"], "also": here["also"]}
    if own_entry:
        # Recorded before asv writes a result under the side commit, so a kill
        # in between leaves no result whose commit the next run cannot rebuild.
        record["own"] = own_entry
        ledger.record_installed(session.results_dir, session.machine,
                                dict(record, asv_exit=None, gpu_checks=None))
    record_path = Path(session.conf["env_dir"]).parent / EXISTING_GPU_CHECKS
    record_path.parent.mkdir(parents=True, exist_ok=True)
    gpu_checks = gpu_checks_in(python, Path(session.conf["benchmark_dir"]), record_path)
    print_gpu_checks(gpu_checks)
    if gpu_checks:
        # asv's benchmark processes read it instead of each running the checks.
        os.environ[GPU_CHECKS_ENV] = str(record_path)
    ledger.begin(session.results_dir, session.snapshot_dir, session.machine, commit)
    code = run_asv(asv_command(["run", "-E", f"existing:{python}", "--set-commit-hash", commit,
                                "--machine", session.machine, *ASV_RUN_DEFAULTS,
                                *launch_method_args(session.asv_args), *session.asv_args],
                               session.config_path))
    for message in ledger.repair(session.results_dir, session.snapshot_dir):
        print(message)
    if code in (0, ASV_SOME_FAILED):
        record.update(asv_exit=code, gpu_checks=gpu_checks)
        ledger.record_installed(session.results_dir, session.machine, record)
    ledger.end(session.snapshot_dir)
    return code


# --- before anything runs ----------------------------------------------------------

class RunRefused(ValueError):
    """An input the run cannot go ahead with; the message names it, in one line."""


@dataclass
class Session:
    """What every step of one `run` shares."""

    config_path: Path
    conf: dict
    asv_args: list
    machine: str = ""
    here: dict = field(default_factory=dict)
    # Labels of the stacks this run measured (not those it found measured already).
    measured: list = field(default_factory=list)

    @property
    def root(self):
        return self.config_path.parent

    @property
    def results_dir(self):
        return self.root / self.conf["results_dir"]

    @property
    def snapshot_dir(self):
        return self.root / Path(self.conf["env_dir"]).parent / SNAPSHOT_DIR


def choose_machine(requested, results_dir):
    """(name, asv entry) of this machine; RunRefused for a bad name or one that holds
    another machine's results. Saves nothing."""
    problem = check_machine_name(requested) if requested is not None else None
    if problem:
        raise RunRefused(f"--machine: {problem}")
    name, info = describe_machine(requested)
    problem = check_machine_name(name)
    if problem:
        raise RunRefused(f"this machine's host name makes a bad default: {problem}; "
                         "pass --machine NAME")
    recorded = _read_json_object(results_dir / name / "machine.json")
    conflict = name_conflict(name, recorded, info, chosen=requested is not None)
    if conflict:
        raise RunRefused(conflict)
    if recorded and differences(recorded, info, HARDWARE_KEYS):
        print(f"results/{name}/ was recorded on other hardware "
              f"({'; '.join(differences(recorded, info, HARDWARE_KEYS))}): its stacks are "
              "measured again on this machine, replacing those results")
    return name, info


def _read_json_object(path):
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def check_results(session):
    """RunRefused naming the first broken file under results/ no interrupted run explains."""
    damage = ledger.find_damage(session.results_dir, session.snapshot_dir)
    if damage:
        raise RunRefused("\n".join(damage))


def start(session):
    """The first changes of a run, once every input is known good: register the machine
    with asv, and undo what an interrupted run left half-written."""
    register_machine(session.machine, session.here)
    here = session.here
    print(f"machine {session.machine}: {here['cpu']}; GPU {here['gpu']}; {here['os']}")
    for message in ledger.repair(session.results_dir, session.snapshot_dir):
        print(message)
    ledger.end(session.snapshot_dir)


def build_stacks_repo(root, conf):
    """The stacks repository asv measures along and publishes from, (re)built from
    stacks.toml and the side stacks recorded in results/: (stacks, own, {label: hash}).

    Raises TableError for a broken table, RepoError for an empty one.
    """
    stacks = load_table(root / TABLE_FILE)
    own = ledger.own_stacks(root / conf["results_dir"])
    return stacks, own, stacks_repo.build(stacks, root / conf["repo"], own)


def previous_in_chain(stacks, target, label):
    """The stack before `label` in its section, of those that install on `target`; None
    for the first. (The stacks in between do not install here: nothing to compare.)"""
    runnable = [stack for stack, _ in fits(stacks, target)[0]]
    mine = next((stack for stack in runnable if stack.label == label), None)
    if mine is None:
        return None
    chain = [stack for stack in runnable if stack.os == mine.os]
    index = chain.index(mine)
    return chain[index - 1] if index else None


def write_run_alerts(session, stacks, target, hashes):
    """Compare each stack this run measured with the one before it in its chain on this
    machine, by asv's rule, into results/<machine>/regressions.jsonl and .md (replaced:
    they say what the latest run that measured something found). The Alerts."""
    if not session.measured:
        return []
    env_names = alerts.environment_names(session.config_path)
    found, notes = [], []
    for label in session.measured:
        previous = previous_in_chain(stacks, target, label)
        if previous is None:
            notes.append(f"{label}: the first stack of its chain on this machine; nothing "
                         "before it to compare with")
            continue
        alert, note = alerts.compare_stacks(
            session.results_dir, session.machine,
            {"label": previous.label, "commit": hashes[previous.label]},
            {"label": label, "commit": hashes[label]}, env_names, source="run",
            controls=stack_controls(session, hashes[previous.label], hashes[label],
                                    ledger_first=True))
        found += [alert] if alert else []
        notes += [note] if note else []
    machine_dir = session.results_dir / session.machine
    alerts.write_summary(found, machine_dir / REGRESSIONS_FILE,
                         machine_dir / REGRESSIONS_MARKDOWN_FILE, notes, as_lines=True,
                         heading=f"Regressions found by run on {session.machine}")
    regressed = [a for a in found if a.regressions]
    for alert in found:
        drift = alert.drift()
        print(f"{alert.previous['label']} -> {alert.new['label']}: "
              f"{len(alert.regressions)} regression(s) of {alert.compared} cases"
              + (f"; the controls (the same code in both) moved by up to x{drift:.2f}"
                 if drift else ""))
    print(f"{len(regressed)} of {len(found)} comparison(s) regressed; see "
          f"{ledger.shown(machine_dir / REGRESSIONS_MARKDOWN_FILE, session.results_dir)}")
    if regressed:
        # Sequential runs carry the machine's drift between them; the gate interleaves.
        print("  measured one stack after the other: before acting on a regression, "
              "measure the two stacks interleaved, e.g.\n    "
              + alerts.gate_command(regressed[-1]))
    return found


def publish(config_path, report=True, self_contained=True, registry=None):
    """asv publish, then its site made to work offline, then the report page; False on failure.

    self_contained: serve the libraries asv's pages load from CDNs from html/
    itself (tfgpubench.vendor); a library that cannot be had keeps its CDN
    link and is named, and the site is still published. registry: the npm
    registry to take them from (default: the environment's, with the user's cache).
    """
    code = run_asv(asv_command(["publish"], config_path))
    if code != 0:
        print(f"asv publish exited {code}", file=sys.stderr)
        return False
    config = load_config(config_path)
    if self_contained:
        outcome = make_self_contained(config.html_dir, registry)
        for line in describe(outcome, config.html_dir):
            print(line)
    if not report:
        return True
    try:
        publish_page(config)
    except Exception as exc:  # asv's site is published; say what went wrong with the page
        print(f"report page not written: {type(exc).__name__}: {exc}", file=sys.stderr)
        return False
    return True
