"""The steps of `tfgpubench run`: one `asv run` per stack, an existing installation,
the machine's registration, and publishing html/.

Each stack is its own `asv run`, so one that fails to install costs nothing
else; stacks already measured are not redone.
"""

import os
import subprocess
import sys
from pathlib import Path

from .config import load_config
from .names import INSTALL_MARKER_FILE, OWN_LABEL_PREFIX, TABLE_FILE
from .pairing import series
from .report import publish_page
from .stacks import ledger
from .stacks import repo as stacks_repo
from .stacks.install_stack import parse_pin
from .stacks.machine import register_machine
from .stacks.selection import Target, fits
from .stacks.table import TENSORFLOWS

INSTALLER = "tfgpubench/stacks/install_stack.py"
SNAPSHOT_DIR = "tfgpubench-snapshot"  # beside asv's env_dir, under .asv/
# asv exits 2 when a benchmark failed but results were saved, 1 when none were.
ASV_SOME_FAILED = 2


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


def run_asv(cmd):
    """Run asv; on Ctrl-C let it finish its own interrupt handling, then re-raise."""
    proc = subprocess.Popen(cmd)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        raise


def run_stack(stack, commit, machine, config_path, conf, results_dir, snapshot_dir, asv_args):
    """Measure one stack; None when it went well, else a one-line reason."""
    wanted = ledger.selected_benchmarks(results_dir, _bench_patterns(asv_args))
    if ledger.measured(results_dir, machine, commit, wanted):
        print(f"  already measured on {machine}; skipped")
        return None
    before = set(ledger.result_files(results_dir, machine, commit))
    ledger.snapshot(ledger.files_asv_rewrites(results_dir, machine, commit), results_dir,
                    snapshot_dir)
    cmd = asv_command(["run", f"{commit}^!", "--machine", machine, "--skip-existing-successful",
                *launch_method_args(asv_args), *asv_args], config_path)
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
        reason = (marker or {}).get("reason") or f"asv exited {code} before installing it"
        return f"not installed: {reason}"
    env_dir = Path(marker["env_dir"])
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    gpu_multiply = probe_gpu(python, Path(conf["benchmark_dir"]))
    ledger.record_installed(results_dir, machine, {
        "label": stack.label, "commit": commit, "python": marker["python"],
        "platform": marker["platform"], "variant": marker["variant"], "pins": marker["pins"],
        "installed": marker["installed"], "also": marker.get("also", {}), "asv_exit": code,
        "gpu_multiply": gpu_multiply,
    })
    if code == ASV_SOME_FAILED:
        return "installed, but some benchmarks failed (asv's output above says which)"
    if code != 0:
        return f"asv run exited {code}"
    return None


def probe_gpu(python, benchmark_dir):
    """{dtype: why a gpu multiply is not measured, or None} in `python`, printed too.

    asv shows a skipped combination as "n/a" and keeps its reason only in
    the benchmark's stderr; this asks the environment's own TensorFlow the
    same question the benchmarks' setup asks. {} if it cannot be asked.
    """
    import json

    probe = Path(__file__).with_name("stacks") / "probe_gpu.py"
    try:
        out = subprocess.run([str(python), str(probe), str(benchmark_dir / "common.py")],
                             capture_output=True, text=True, timeout=300, check=True)
        reasons = json.loads(out.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as exc:
        print(f"  could not ask {python} where a gpu multiply runs: {exc}")
        return {}
    for dtype, reason in reasons.items():
        print(f"  gpu {dtype}: " + (f"not measured: {reason}" if reason else "measured"))
    return reasons


def _bench_patterns(asv_args):
    patterns = []
    for i, arg in enumerate(asv_args):
        if arg in ("-b", "--bench") and i + 1 < len(asv_args):
            patterns.append(asv_args[i + 1])
        elif arg.startswith("--bench="):
            patterns.append(arg.split("=", 1)[1])
    return patterns


def _install_marker(env_dir, commit):
    """What install_stack.py recorded for `commit` in asv's environments, or None."""
    import json

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


# --- an existing installation -----------------------------------------------

def query_python(python, installer=INSTALLER):
    """Platform, Python version and TensorFlow family installed in `python`."""
    import json

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


def run_existing(args, conf, config_path, stacks, own, asv_args):
    python = args.existing
    try:
        here = query_python(python)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not here["installed"]:
        print(f"error: {python} has no TensorFlow installed", file=sys.stderr)
        return 2
    root = config_path.parent
    results_dir = root / conf["results_dir"]
    versions = " ".join(f"{n}=={v}" for n, v in sorted(here["installed"].items()))
    stack = match_existing(stacks, here)
    own_entry = None
    if stack is not None:
        label = stack.label
        print(f"{python}: {versions} is stack {label}")
    else:
        own_entry = own_stack(stacks, here)
        label = own_entry["label"]
        print(f"{python}: {versions} matches no row of {TABLE_FILE}; results go under "
              f"its own label {label}")
        own = [o for o in own if o["label"] != label] + [own_entry]
    hashes = stacks_repo.build(stacks, root / conf["repo"], own)
    machine, snapshot_dir = prepare_machine(args.machine, conf, results_dir)
    commit = hashes[label]
    ledger.snapshot(ledger.files_asv_rewrites(results_dir, machine, commit), results_dir,
                    snapshot_dir)
    code = run_asv(asv_command(["run", "-E", f"existing:{python}", "--set-commit-hash", commit,
                          "--machine", machine, *launch_method_args(asv_args), *asv_args],
                         config_path))
    for message in ledger.repair(results_dir, snapshot_dir):
        print(message)
    if code in (0, ASV_SOME_FAILED):
        record = {"label": label, "commit": commit, "python": here["python"],
                  "platform": f"{here['system']} {here['machine']}", "existing": python,
                  "installed": here["installed"], "also": here["also"], "asv_exit": code,
                  "gpu_multiply": probe_gpu(Path(python), Path(conf["benchmark_dir"]))}
        if own_entry:
            record["own"] = own_entry
        ledger.record_installed(results_dir, machine, record)
    published = args.nopublish or publish(config_path, report=not args.no_report)
    return 0 if code == 0 and published else 1


def prepare_machine(name, conf, results_dir):
    """Register the machine with asv and repair what an interrupted run left.

    Returns (machine name, the directory of result snapshots)."""
    machine, info = register_machine(name)
    print(f"machine {machine}: {info['cpu']}; GPU {info['gpu']}; {info['os']}")
    snapshot_dir = Path(conf["env_dir"]).parent / SNAPSHOT_DIR
    for message in ledger.repair(results_dir, snapshot_dir):
        print(message)
    return machine, snapshot_dir


def publish(config_path, report=True):
    """asv publish, then the report page where that module exists; False on failure."""
    code = run_asv(asv_command(["publish"], config_path))
    if code != 0:
        print(f"asv publish exited {code}", file=sys.stderr)
        return False
    if not report:
        return True
    try:
        publish_page(load_config(config_path))
    except Exception as exc:  # asv's site is published; say what went wrong with the page
        print(f"report page not written: {type(exc).__name__}: {exc}", file=sys.stderr)
        return False
    return True
