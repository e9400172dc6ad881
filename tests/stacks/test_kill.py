"""kill -9 at every write of a run, then the next run repairs it and loses no finished
stack's result: while asv rewrites a finished stack's result file, while .stacks/ is
generated, and while the ledger appends. Each kill lands at a named point (TFGPUBENCH_PAUSE_AT, see
tfgpubench/pausepoints.py; asv's own write is paused by pause_asv/sitecustomize.py),
not at a random moment, so the test is the same every time.

Two real tensorflow-cpu releases, installed once each (pip's cache: ~25 s each; the
steps are ordered so that neither is installed twice);
`--quick -b Wait.time_wait` keeps the benchmarks to seconds. The steps share one
workspace, in order.
"""

import json
import os
import re
import signal
from pathlib import Path

import pytest

from tfgpubench.names import CPU_REFERENCE, INSTALLED_VERSIONS_FILE, PAUSE_AT_ENV
from tfgpubench.stacks import repo
from tfgpubench.stacks.ledger import is_valid_json
from tfgpubench.stacks.table import load_table

from .conftest import make_workspace, run_until, tfgpubench

pytestmark = pytest.mark.slow

OLD, NEW = "tf2.20.0", "tf2.21.0"
MACHINE = "kill"
BENCH = ["--quick", "-b", "Wait.time_wait"]
HOOK = str(Path(__file__).resolve().parent / "pause_asv")


def run_args(stacks, bench=BENCH):
    return ["run", "--stacks", stacks, "--machine", MACHINE, "--no-publish", "--no-index-check",
            "--", *bench]


def result(path, label):
    commit = repo.expected_hashes(load_table(path / "stacks.toml"))[label]
    files = sorted((path / "results" / MACHINE).glob(f"{commit[:8]}-*.json"))
    assert len(files) <= 1
    return files[0] if files else path / "results" / MACHINE / f"{commit[:8]}-missing.json"


def ledger_labels(path):
    lines = (path / "results" / MACHINE / INSTALLED_VERSIONS_FILE).read_text().splitlines()
    return [json.loads(line)["label"] for line in lines]


def results_bytes(path):
    return {p: p.read_bytes() for p in sorted((path / "results").rglob("*")) if p.is_file()}


def killed_at(path, args, marker, **environment):
    out, code = run_until(path, args, marker, signal.SIGKILL, 0.5, environment)
    assert code == -signal.SIGKILL, out
    return out


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """OLD measured and finished; each test below kills or resumes the next run."""
    path = make_workspace(tmp_path_factory.mktemp("kill") / "suite")
    first = tfgpubench(path, *run_args(OLD))
    assert first.returncode == 0, first.stdout + first.stderr
    return {"path": path, "old": result(path, OLD).read_bytes()}


def test_killed_while_asv_rewrites_a_finished_stacks_result_file(workspace):
    path = workspace["path"]
    # One more benchmark for OLD: asv rewrites OLD's finished result file to add it.
    # The reference's class alone (asv's -b is a regex search: not StreamScaleInPlace).
    reference_class = re.escape(CPU_REFERENCE.rsplit(".", 1)[0]) + r"\."
    more = ["--quick", "-b", "Wait.time_wait", "-b", reference_class]
    killed_at(path, run_args(OLD, more), "paused in asv's write of",
              TFGPUBENCH_TEST_PAUSE_RESULT=result(path, OLD).name[:8],
              PYTHONPATH=f"{HOOK}{os.pathsep}{path}")
    assert not is_valid_json(result(path, OLD))
    workspace["cut"] = results_bytes(path)


def test_killed_while_stacks_are_generated(workspace):
    path = workspace["path"]
    killed_at(path, run_args(f"{OLD}..{NEW}"), "tfgpubench: paused at stacks-swap",
              **{PAUSE_AT_ENV: "stacks-swap"})
    # Killed between moving the old repository aside and putting the new one in place;
    # nothing under results/ was touched yet.
    assert not (path / ".stacks").exists() and (path / ".stacks.old").is_dir()
    assert results_bytes(path) == workspace["cut"]


def test_killed_while_the_ledger_appends(workspace):
    path = workspace["path"]
    out = killed_at(path, run_args(f"{OLD}..{NEW}"), "tfgpubench: paused at ledger-append",
                    **{PAUSE_AT_ENV: "ledger-append"})
    # This run first put back the result file the first kill cut short ...
    assert (f"results/{MACHINE}/{result(path, OLD).name}: was cut short by an interrupted run; "
            "restored") in out
    assert f"[1/2] {OLD}: tensorflow-cpu==2.20.0\n  already measured on {MACHINE}; skipped" in out
    assert result(path, OLD).read_bytes() == workspace["old"]
    # ... then measured NEW, and was killed after asv saved it, before its ledger line.
    assert is_valid_json(result(path, NEW))
    assert ledger_labels(path) == [OLD]
    workspace["new"] = json.loads(result(path, NEW).read_text())["results"]


def test_the_next_run_repairs_everything_and_loses_no_finished_result(workspace):
    path = workspace["path"]
    out = tfgpubench(path, *run_args(f"{OLD}..{NEW}"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"[1/2] {OLD}: tensorflow-cpu==2.20.0\n  already measured on {MACHINE}; skipped" in (
        out.stdout)
    # NEW's measurement was complete: its install is still in asv's environment, so only
    # the ledger line is written; asv does not run.
    assert ("[2/2] tf2.21.0: tensorflow-cpu==2.21.0\n  measured by an interrupted run; "
            "recording the versions it installed") in out.stdout
    assert "For tfgpubench commit" not in out.stdout
    assert result(path, OLD).read_bytes() == workspace["old"]
    assert json.loads(result(path, NEW).read_text())["results"] == workspace["new"]
    assert ledger_labels(path) == [OLD, NEW]
    assert all(is_valid_json(p) for p in (path / "results").rglob("*.json"))
    # .stacks is whole again, and nothing of the killed generation is left beside it.
    assert repo.tags(path / ".stacks") == repo.expected_hashes(load_table(path / "stacks.toml"))
    assert sorted(p.name for p in path.iterdir() if p.name.startswith(".stacks")) == [".stacks"]
