"""The fleet (python -m tfgpubench fleet, through .ci/fleet): what a runner measures and
gates, how the machines' artifacts come together; and (slow) the whole workflow on this
machine: discover from a recorded index, two runners measure and gate real
tensorflow-cpu stacks, their artifacts hand over as folders, the merge job publishes."""

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.stacks.conftest import workspace_env
from tests.stacks.test_discover import ANSWERS, drop_last, serving
from tfgpubench import fleet
from tfgpubench.names import REGRESSIONS_FILE
from tfgpubench.stacks.selection import Target, pick
from tfgpubench.stacks.table import load_table

ROOT = Path(__file__).resolve().parents[1]
STACKS = load_table(ROOT / "stacks.toml")
LINUX311 = Target("linux", "x86_64", "3.11")


def labels(stacks):
    return [s.label for s in stacks]


# --- what a runner measures and gates ---------------------------------------------------------

def test_a_runner_measures_what_installs_here_and_it_has_not_measured():
    measured = {"tf2.19.1", "tf2.20.0"}
    todo = fleet.unmeasured(STACKS, LINUX311, pick(STACKS, "tf2.19.1..tf2.21.0"),
                            lambda s: s.label in measured)
    assert labels(todo) == ["tf2.21.0"]
    # Everything of the table: no macOS stack on Linux; the comparators' chain too.
    everything = fleet.unmeasured(STACKS, LINUX311, STACKS, lambda s: False)
    assert not any(s.os == "macos" for s in everything)
    assert any(s.is_comparators for s in everything)


def test_only_an_upgrade_from_a_stack_measured_here_before_is_gated():
    new = pick(STACKS, "tf2.20.0..tf2.21.0")
    # A new machine measures history: nothing was measured before, nothing is gated.
    assert fleet.gate_pairs(STACKS, LINUX311, new, set()) == []
    pairs = fleet.gate_pairs(STACKS, LINUX311, pick(STACKS, "tf2.21.0"), {"tf2.20.0"})
    assert [(p.label, n.label) for p, n in pairs] == [("tf2.20.0", "tf2.21.0")]
    # Two releases at once after tf2.19.1: each is gated from the one before it that
    # was measured before, so tf2.21.0 (whose previous is new too) is not.
    pairs = fleet.gate_pairs(STACKS, LINUX311, new, {"tf2.19.1"})
    assert [(p.label, n.label) for p, n in pairs] == [("tf2.19.1", "tf2.20.0")]


def test_the_worst_exit_status_wins():
    assert fleet.worst([0, 0]) == fleet.FINE
    assert fleet.worst([0, 1]) == fleet.REGRESSED
    assert fleet.worst([1, 2, 0]) == fleet.FAILED
    assert fleet.worst([3]) == fleet.FAILED  # run's own failure


# --- artifacts, outputs, commits ---------------------------------------------------------------

def machine_dir(root, machine, content):
    path = root / "results" / machine
    path.mkdir(parents=True)
    (path / "machine.json").write_text(json.dumps({"machine": machine}))
    (path / "result.json").write_text(content)
    (root / "results" / "benchmarks.json").write_text("{}")
    return path


def test_merging_artifacts_replaces_each_machines_folder_and_keeps_the_others(tmp_path):
    results = tmp_path / "repo" / "results"
    machine_dir(tmp_path / "repo", "mac", "old mac")
    machine_dir(tmp_path / "repo", "cuda", "old cuda")
    machine_dir(tmp_path / "incoming" / "results-mac", "mac", "new mac")
    machine_dir(tmp_path / "incoming" / "results-ubuntu", "ubuntu", "new ubuntu")
    (tmp_path / "incoming" / "results-broken").mkdir()  # a runner that uploaded nothing
    assert fleet.merge_results(tmp_path / "incoming", results) == ["mac", "ubuntu"]
    assert (results / "mac" / "result.json").read_text() == "new mac"
    assert (results / "ubuntu" / "result.json").read_text() == "new ubuntu"
    assert (results / "cuda" / "result.json").read_text() == "old cuda"


def test_a_machine_that_ran_part_of_the_suite_leaves_the_rest_of_benchmarks_json(tmp_path):
    # The repository's results: TensorFlow's Multiply and the comparators at versions 8
    # and 7. A machine without TensorFlow brings the comparators at version 11 and a
    # suite whose Multiply is at version 10, which it did not run.
    repo_results = tmp_path / "repo" / "results"
    machine_dir(tmp_path / "repo", "xeon", "{}")
    suite = {"multiply.Multiply.time_multiply": {"version": "8"},
             "torch_multiply.TorchMultiply.time_multiply": {"version": "7"}, "version": 2}
    (repo_results / "benchmarks.json").write_text(json.dumps(suite))
    columns = ["result", "params", "version"]
    gpu = machine_dir(tmp_path / "incoming" / "h200-run", "h200", json.dumps(
        {"result_columns": columns,
         "results": {"torch_multiply.TorchMultiply.time_multiply": [[1e-05], [], "11"]}}))
    # An older file the runner's folder carried along: Multiply at the version the
    # repository's results have, not measured again by this machine.
    (gpu / "old-result.json").write_text(json.dumps(
        {"result_columns": columns,
         "results": {"multiply.Multiply.time_multiply": [[2e-05], [], "8"]}}))
    (gpu.parent / "benchmarks.json").write_text(json.dumps({
        "multiply.Multiply.time_multiply": {"version": "10"},
        "torch_multiply.TorchMultiply.time_multiply": {"version": "11"},
        "wait.Wait.time_wait": {"version": "10"}, "version": 2}))
    assert fleet.merge_results(tmp_path / "incoming", repo_results) == ["h200"]
    merged = json.loads((repo_results / "benchmarks.json").read_text())
    assert merged == {"multiply.Multiply.time_multiply": {"version": "8"},
                      "torch_multiply.TorchMultiply.time_multiply": {"version": "11"},
                      "wait.Wait.time_wait": {"version": "10"}, "version": 2}


def test_an_unreadable_benchmarks_json_stops_the_merge_before_it_changes_anything(tmp_path):
    repo_results = tmp_path / "repo" / "results"
    machine_dir(tmp_path / "repo", "mac", "old mac")
    incoming = machine_dir(tmp_path / "incoming" / "results-mac", "mac", "new mac")
    (incoming.parent / "benchmarks.json").write_text("{not json")
    with pytest.raises(fleet.MergeError, match="benchmarks.json: unreadable"):
        fleet.merge_results(tmp_path / "incoming", repo_results)
    assert (repo_results / "mac" / "result.json").read_text() == "old mac"
    assert (repo_results / "benchmarks.json").read_text() == "{}"


def test_outputs_go_where_github_actions_says_and_nowhere_outside_it(tmp_path):
    out = tmp_path / "output"
    assert fleet.append_github_file("GITHUB_OUTPUT", "sha=abc", {"GITHUB_OUTPUT": str(out)})
    assert fleet.append_github_file("GITHUB_OUTPUT", "new_stacks=\n", {"GITHUB_OUTPUT": str(out)})
    assert out.read_text() == "sha=abc\nnew_stacks=\n"
    assert not fleet.append_github_file("GITHUB_OUTPUT", "x", {})


def git(path, *args):
    return subprocess.run(["git", "-C", str(path), *args], capture_output=True, text=True,
                          check=True, env=clean_git_env()).stdout.strip()


def clean_git_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return env


def test_a_commit_only_when_something_changed_then_pushed(tmp_path, monkeypatch):
    for key in [k for k in os.environ if k.startswith("GIT_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    origin, work = tmp_path / "origin.git", tmp_path / "work"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    subprocess.run(["git", "clone", "-q", str(origin), str(work)], check=True,
                   capture_output=True)
    git(work, "checkout", "-q", "-b", "main")
    (work / "stacks.toml").write_text("a\n")
    first = fleet.commit_paths(work, ["stacks.toml"], "first")
    assert first and fleet.commit_paths(work, ["stacks.toml"], "again") is None
    assert git(work, "log", "-1", "--format=%an <%ae>") == (
        "tfgpubench fleet <fleet@tfgpubench.invalid>")
    fleet.push(work, branch="main")
    assert git(origin, "rev-parse", "main") == first


# --- the whole workflow on this machine (slow) ---------------------------------------------

OLD, NEW = "tf2.20.0", "tf2.21.0"
# The minimum that installs two real releases and runs asv: one quick benchmark.
ASV = ["--", "--quick", "-b", "Wait.time_wait"]
CHECKOUT = ("asv.conf.json", "stacks.toml", "pyproject.toml", "README.md", ".ci", ".gitignore",
            "benchmarks", "tfgpubench")


def sh(path, *args, env_extra=None, timeout=900):
    """Run .ci/fleet ARGS in checkout `path`, as a runner's step would."""
    env = {k: v for k, v in workspace_env(path).items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", **(env_extra or {}))
    done = subprocess.run([str(path / ".ci" / "fleet"), *args], cwd=path, env=env,
                          capture_output=True, text=True, timeout=timeout)
    print(f"$ .ci/fleet {' '.join(args)}  (exit {done.returncode})\n{done.stdout[-3000:]}"
          f"{done.stderr[-3000:]}")
    return done


def clone(origin, path, venv=None):
    """A runner's checkout of the repository; with `venv`, sharing the virtualenv the
    first job's `setup` made (each job here would make the same one)."""
    subprocess.run(["git", "clone", "-q", str(origin), str(path)], check=True,
                   env=clean_git_env())
    (path / "home").mkdir()
    if venv is not None:
        (path / ".venv").symlink_to(venv)
    return path


def artifact(runner, machine, incoming):
    """What upload-artifact keeps of a runner (its paths under their common root), unpacked
    as download-artifact puts it: incoming/results-MACHINE/..."""
    target = incoming / f"results-{machine}"
    shutil.copytree(runner / "results" / machine, target / "results" / machine)
    shutil.copy2(runner / "results" / "benchmarks.json", target / "results")
    if (runner / "fleet-out").is_dir():
        shutil.copytree(runner / "fleet-out", target / "fleet-out")


@pytest.fixture(scope="module")
def fleet_run(tmp_path_factory):
    """The workflow twice: a runner measures OLD; the merge job commits its results;
    discover finds NEW on a recorded index; two runners measure it (one gates the
    upgrade); the merge job merges both and publishes. What each step printed."""
    base = tmp_path_factory.mktemp("fleet")
    start = time.monotonic()
    seed = base / "seed"
    seed.mkdir()
    table, _ = drop_last((ROOT / "stacks.toml").read_text(), "linux", 1)
    for name in CHECKOUT:
        if name == "stacks.toml":
            (seed / name).write_text(table)
        elif (ROOT / name).is_dir() and name != ".ci":
            (seed / name).symlink_to(ROOT / name)
        elif name == ".ci":
            shutil.copytree(ROOT / name, seed / name)
        else:
            shutil.copy2(ROOT / name, seed / name)
    origin = base / "origin.git"
    subprocess.run(["git", "init", "-q", "-b", "main", str(seed)], check=True)
    git(seed, "add", "-A")
    git(seed, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-q", "-m", "seed")
    subprocess.run(["git", "clone", "-q", "--bare", str(seed), str(origin)], check=True)

    steps = {}
    jobs = base / "jobs"
    first = clone(origin, jobs / "setup")
    steps["setup"] = sh(first, "setup", timeout=900)
    venv = first / ".venv"

    # Day 1: a runner measures OLD (nothing before it here: no gate); merged and committed.
    a1 = clone(origin, jobs / "a1", venv)
    steps["measure day 1"] = sh(a1, "measure", "--machine", "e2e-a", "--stacks", f"{OLD}..",
                                *ASV)
    incoming = base / "incoming1"
    artifact(a1, "e2e-a", incoming)
    merge1 = clone(origin, jobs / "merge1", venv)
    steps["merge day 1"] = sh(merge1, "merge", str(incoming), "--commit", "--push")

    # Day 2: NEW appears on the index.
    discover = clone(origin, jobs / "discover", venv)
    output = base / "github_output"
    with serving(ANSWERS) as index_url:
        steps["discover"] = sh(discover, "discover", "--push", "--index-url", index_url,
                               env_extra={"GITHUB_OUTPUT": str(output)})
    # Two runners measure it; e2e-a gates OLD -> NEW, e2e-b (new here) gates nothing.
    summary = base / "step_summary"
    a2 = clone(origin, jobs / "a2", venv)
    steps["measure a"] = sh(a2, "measure", "--machine", "e2e-a", "--stacks", f"{OLD}..", *ASV,
                            env_extra={"GITHUB_STEP_SUMMARY": str(summary)})
    b2 = clone(origin, jobs / "b2", venv)
    steps["measure b"] = sh(b2, "measure", "--machine", "e2e-b", "--stacks", NEW, *ASV)
    incoming = base / "incoming2"
    artifact(a2, "e2e-a", incoming)
    artifact(b2, "e2e-b", incoming)
    merge2 = clone(origin, jobs / "merge2", venv)
    steps["merge day 2"] = sh(merge2, "merge", str(incoming), "--commit", "--push")
    steps["publish"] = sh(merge2, "publish")
    return {"steps": steps, "origin": origin, "a2": a2, "merge": merge2, "output": output,
            "summary": summary, "seconds": time.monotonic() - start}


@pytest.mark.slow
def test_every_step_of_the_workflow_succeeds_or_reports_asvs_verdict(fleet_run):
    steps = fleet_run["steps"]
    for name in ("setup", "measure day 1", "merge day 1", "discover", "measure b",
                 "merge day 2", "publish"):
        assert steps[name].returncode == 0, name
    # Whether NEW is slower than OLD here is what is measured: only 0 or 1 are right.
    assert steps["measure a"].returncode in (0, 1)
    assert "nothing to gate" in steps["measure day 1"].stdout
    assert "nothing to gate" in steps["measure b"].stdout
    print(f"the workflow's steps took {fleet_run['seconds']:.0f} s")


@pytest.mark.slow
def test_discover_commits_the_new_row_for_the_runners(fleet_run):
    origin = fleet_run["origin"]
    table = git(origin, "show", "main:stacks.toml")
    assert f'label = "{NEW}"' in table
    output = fleet_run["output"].read_text()
    assert f"new_stacks={NEW}\n" in output
    sha = output.split("sha=")[1].split()[0]
    assert git(origin, "log", "-1", "--format=%s", sha) == (
        f"stacks.toml: {NEW} (found by stacks discover)")


@pytest.mark.slow
def test_the_gate_summary_is_asvs_verdict_on_the_upgrade(fleet_run):
    a2, code = fleet_run["a2"], fleet_run["steps"]["measure a"].returncode
    data = json.loads((a2 / "fleet-out" / f"gate-e2e-a-{NEW}.json").read_text())
    (comparison,) = data["comparisons"]
    assert comparison["machine"] == "e2e-a"
    assert (comparison["previous"]["label"], comparison["new"]["label"]) == (OLD, NEW)
    assert comparison["source"] == "asv continuous"
    # asv continuous's own exit is the gate's, unless the gate measured flagged cases again
    # (then asv's on the second pass, and the gate's from what both passes flagged), or
    # asv flagged only controls (the same numpy on both stacks: the machine's drift).
    only_controls = comparison["controls"]["changed"] and not comparison["regressions"]
    if "first_pass" not in comparison:
        assert comparison["asv_exit"] == code or (code == 0 and only_controls)
    assert data["regressed"] == (code == 1)
    assert comparison["compared"] > 0
    summary = fleet_run["summary"].read_text()
    assert f"## Gate {OLD} -> {NEW} on e2e-a" in summary
    # run's own summary of the stack it measured, beside the machine's results.
    (line,) = (a2 / "results" / "e2e-a" / REGRESSIONS_FILE).read_text().splitlines()
    assert json.loads(line)["new"]["label"] == NEW and json.loads(line)["source"] == "run"


@pytest.mark.slow
def test_the_merge_job_publishes_every_machine_and_commits_their_results(fleet_run):
    merge, origin = fleet_run["merge"], fleet_run["origin"]
    committed = git(origin, "ls-tree", "-r", "--name-only", "main", "results").splitlines()
    for machine in ("e2e-a", "e2e-b"):
        assert f"results/{machine}/machine.json" in committed
    index = json.loads((merge / "html" / "index.json").read_text())
    assert {"e2e-a", "e2e-b"} <= set(index["params"]["machine"])
    assert {OLD, NEW} <= set(index["tags"])
    assert (merge / "html" / "report" / "index.html").is_file()
