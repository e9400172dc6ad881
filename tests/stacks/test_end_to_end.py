"""The real flow on this machine with two real tensorflow-cpu releases: run (killed
and resumed), publish, compare by version, continuous's exit code; and the faults.

Each stack is installed for real by pip into asv's virtualenv (pip's cache
keeps that to ~25 s a release); `--quick -b Wait.time_wait` keeps the
benchmarks to seconds. The slow tests share one workspace, in file order.
"""

import json
import signal
import sys
import time
from pathlib import Path

import pytest

from tfgpubench.stacks import repo
from tfgpubench.stacks.table import load_table

from .conftest import ROOT, asv, make_workspace, run_until, tfgpubench

OLD, NEW = "tf2.20.0", "tf2.21.0"
BENCH = ["--quick", "-b", "Wait.time_wait"]
MACHINE = "e2e"
RUN = ["run", "--stacks", f"{OLD}..{NEW}", "--machine", MACHINE, "--no-report", "--", *BENCH]


def result_file(path, label):
    commit = repo.tags(path / ".stacks")[label]
    files = sorted((path / "results" / MACHINE).glob(f"{commit[:8]}-*.json"))
    return files[0] if files else None


def snapshot_bytes(path):
    return {p: p.read_bytes() for p in sorted((path / "results").rglob("*.json"))}


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """Two releases measured: the first run killed with -9 during the second stack,
    then resumed. Returns the workspace and what each step printed."""
    path = make_workspace(tmp_path_factory.mktemp("e2e") / "suite")
    killed, code = run_until(path, RUN, f"[2/2] {NEW}:", signal.SIGKILL, 3)
    assert code == -signal.SIGKILL, killed
    first = result_file(path, OLD)
    assert first is not None, killed
    before = snapshot_bytes(path)
    start = time.monotonic()
    resumed = tfgpubench(path, *RUN)
    seconds = time.monotonic() - start
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    return {"path": path, "killed": killed, "before": before, "resumed": resumed.stdout,
            "resume_seconds": seconds}


@pytest.mark.slow
def test_kill_9_keeps_finished_results_and_the_rerun_resumes(measured):
    path = measured["path"]
    # Everything the killed run left parses, and the first stack's results are intact.
    for content in measured["before"].values():
        json.loads(content)
    old = result_file(path, OLD)
    assert measured["before"][old] == old.read_bytes()
    assert f"[1/2] {OLD}: tensorflow-cpu==2.20.0\n  already measured on {MACHINE}; skipped" in (
        measured["resumed"])
    assert f"For tfgpubench commit {repo.tags(path / '.stacks')[NEW][:8]} <{NEW}>" in (
        measured["resumed"])
    assert f"<{OLD}>:" not in measured["resumed"]
    # Versions really installed, recorded with the results of each stack.
    records = [json.loads(line) for line in
               (path / "results" / MACHINE / "installed-versions.jsonl").read_text().splitlines()]
    assert {(r["label"], r["installed"]["tensorflow-cpu"]) for r in records} == {
        (OLD, "2.20.0"), (NEW, "2.21.0")}
    machine = json.loads((path / "results" / MACHINE / "machine.json").read_text())
    assert {"gpu", "os", "cpu", "arch"} <= set(machine)


@pytest.mark.slow
def test_publish_puts_releases_on_the_x_axis(measured):
    path = measured["path"]
    index = json.loads((path / "html" / "index.json").read_text())
    tags = repo.tags(path / ".stacks")
    revision = {label: index["tags"][label] for label in (OLD, NEW)}
    assert index["revision_to_hash"][str(revision[OLD])] == tags[OLD]
    assert index["revision_to_hash"][str(revision[NEW])] == tags[NEW]
    assert revision[OLD] < revision[NEW]
    assert "gpu" in index["params"]
    graphs = [p for p in (path / "html" / "graphs").rglob("wait.Wait.time_wait.json")
              if "summary" not in p.parts]
    assert graphs and all("gpu-" in str(p) for p in graphs)
    points = json.loads(graphs[0].read_text())
    assert {revision[OLD], revision[NEW]} <= {point[0] for point in points}


@pytest.mark.slow
def test_compare_by_version_names(measured):
    out = asv(measured["path"], "compare", OLD, NEW, "--machine", MACHINE)
    assert out.returncode == 0, out.stderr
    assert f"<{OLD}>" in out.stdout and f"<{NEW}>" in out.stdout
    assert "wait.Wait.time_wait('cpu', 'float32')" in out.stdout
    print(out.stdout)


@pytest.mark.slow
def test_continuous_gates_an_upgrade(measured):
    path = measured["path"]
    common = ["continuous", OLD, NEW, "--machine", MACHINE, "--launch-method", "forkserver",
              *BENCH]
    # Whether 2.21 is slower than 2.20 here is what is measured, not known in
    # advance (and no honest knob makes one TensorFlow release slower than
    # another on demand): the exit status must agree with asv's own verdict.
    verdict = asv(path, *common)
    assert verdict.returncode in (0, 1), verdict.stdout + verdict.stderr
    assert (verdict.returncode == 1) == ("PERFORMANCE DECREASED" in verdict.stdout)
    assert f"<{OLD}>" in verdict.stdout and f"<{NEW}>" in verdict.stdout
    print(verdict.stdout[verdict.stdout.index("| Change"):] if "| Change" in verdict.stdout
          else verdict.stdout[-400:])
    # No real difference is 1000-fold: the gate must then pass.
    lenient = asv(path, *common, "--factor", "1000")
    assert lenient.returncode == 0 and "PERFORMANCE DECREASED" not in lenient.stdout


@pytest.mark.slow
def test_existing_tensorflow_lands_on_its_row(measured):
    pytest.importorskip("asv_runner")
    from importlib import metadata

    try:
        version = metadata.version("tensorflow-cpu")
    except metadata.PackageNotFoundError:
        pytest.skip("this Python has no tensorflow-cpu")
    label = f"tf{version}"
    path = measured["path"]
    out = tfgpubench(path, "run", "--existing", sys.executable, "--machine", MACHINE,
                     "--no-report", "--", *BENCH)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"tensorflow-cpu=={version} is stack {label}" in out.stdout
    commit = repo.tags(path / ".stacks")[label]
    assert list((path / "results" / MACHINE).glob(f"{commit[:8]}-existing-*.json"))
    record = json.loads((path / "results" / MACHINE / "installed-versions.jsonl")
                        .read_text().splitlines()[-1])
    assert record["existing"] == sys.executable and record["label"] == label


@pytest.mark.slow
def test_ctrl_c_keeps_results_and_says_how_to_resume(measured):
    path = measured["path"]
    before = snapshot_bytes(path)
    out, code = run_until(path, ["run", "--stacks", "tf2.19.1", "--machine", MACHINE,
                                 "--no-report", "--", *BENCH], "[1/1] tf2.19.1:",
                          signal.SIGINT, 4)
    assert code == 130, out
    assert "interrupted during tf2.19.1; results of finished stacks are kept" in out
    after = snapshot_bytes(path)
    for file, content in before.items():
        if file.name not in ("benchmarks.json", "machine.json"):
            assert after[file] == content, file
    for content in after.values():
        json.loads(content)


@pytest.mark.slow
def test_a_stack_without_wheels_fails_alone(measured, tmp_path):
    # tensorflow-cpu 2.11.1 has no Python 3.11 wheel; the row claims one, so
    # only pip finds out, halfway through the run.
    table = (ROOT / "stacks.toml").read_text().split("[[linux]]")[0] + (
        '[[linux]]\nlabel = "tf2.11.1"\ndate = 2023-03-20\npins = ["tensorflow-cpu==2.11.1"]\n'
        'cuda = ["tensorflow==2.11.1"]\nwheels = { x86_64 = ["3.11"] }\n\n'
        '[[linux]]\nlabel = "tf2.21.0"\ndate = 2026-03-06\npins = ["tensorflow-cpu==2.21.0"]\n'
        'cuda = ["tensorflow[and-cuda]==2.21.0"]\nwheels = { x86_64 = ["3.11"] }\n')
    path = make_workspace(tmp_path / "suite", table)
    (path / "results").symlink_to(measured["path"] / "results")
    before = snapshot_bytes(measured["path"])
    out = tfgpubench(path, "run", "--all", "--machine", MACHINE, "--no-index-check",
                     "--no-publish", "--", *BENCH)
    assert out.returncode == 1
    assert ("[1/2] tf2.11.1: not installed: pip could not install tensorflow-cpu==2.11.1"
            in out.stdout), out.stdout
    assert "1 of 2 stacks failed: tf2.11.1" in out.stderr
    assert result_file(path, "tf2.21.0") is not None
    assert result_file(path, "tf2.11.1") is None
    after = snapshot_bytes(measured["path"])
    for file, content in before.items():
        if file.name not in ("benchmarks.json", "machine.json"):
            assert after[file] == content, file


# --- rejected before anything runs (fast; the other bad inputs: test_bad_input.py) -------

def bad_table(pin):
    text = (ROOT / "stacks.toml").read_text()
    return text.replace('pins = ["tensorflow-cpu==2.21.0"]', f"pins = [{json.dumps(pin)}]")


def test_a_version_not_on_the_index_stops_the_run(tmp_path):
    text = bad_table("tensorflow-cpu==2.99.0").replace(
        'cuda = ["tensorflow[and-cuda]==2.21.0"]', 'cuda = ["tensorflow[and-cuda]==2.99.0"]')
    path = make_workspace(tmp_path / "suite", text)
    out = tfgpubench(path, "run", "--stacks", "tf2.21.0", "--machine", "m")
    if "not on the package index" not in out.stderr and out.returncode != 2:
        pytest.skip("pip's index is not reachable from here")
    assert out.returncode == 2
    assert ("stacks.toml [[linux]] #10 (tf2.21.0): tensorflow-cpu 2.99.0 is not on the "
            "package index") in out.stderr
    assert not (path / ".asv").exists() and not (path / "results").exists()


def test_stacks_list_runs_without_asv_or_network(tmp_path):
    path = make_workspace(tmp_path / "suite")
    out = tfgpubench(path, "stacks", "list")
    assert out.returncode == 0
    assert len(out.stdout.splitlines()) == len(load_table(path / "stacks.toml")) + 1
    assert Path(path / ".stacks").exists() is False
