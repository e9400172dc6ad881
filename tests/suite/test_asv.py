"""The suite under the real asv CLI: check, run and publish, in a scratch copy."""

import itertools
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("tensorflow")
pytest.importorskip("asv")

ROOT = Path(__file__).resolve().parents[2]
ASV = [sys.executable, "-m", "asv"]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """A config like the suite's, with its own results, html and a one-commit repo."""
    tmp = tmp_path_factory.mktemp("asv")
    repo = tmp / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "stack"], check=True)
    commit = subprocess.run(
        [*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    config = json.loads((ROOT / "asv.conf.json").read_text())
    config.update(
        repo=str(repo),
        branches=["main"],  # the scratch repo's one branch, not .stacks' per-platform ones
        benchmark_dir=str(ROOT / "benchmarks"),
        results_dir=str(tmp / "results"),
        html_dir=str(tmp / "html"),
        env_dir=str(tmp / "env"),
    )
    path = tmp / "asv.conf.json"
    path.write_text(json.dumps(config))
    # asv keeps machine names in ~/.asv-machine.json: keep the user's untouched.
    env = {**os.environ, "HOME": str(tmp)}
    subprocess.run(
        [*ASV, "--config", str(path), "machine", "--yes", "--machine", "testbox"],
        check=True,
        env=env,
        capture_output=True,
    )
    return {"config": path, "commit": commit, "tmp": tmp, "env": env}


def asv(scratch, *args):
    return subprocess.run(
        [*ASV, "--config", str(scratch["config"]), *args],
        capture_output=True,
        text=True,
        env=scratch["env"],
        timeout=900,
    )


def test_asv_check_finds_no_problems(scratch):
    out = asv(scratch, "check", "-E", f"existing:{sys.executable}")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "No problems found" in out.stdout


@pytest.mark.slow
def test_asv_run_measures_every_cpu_combination_and_skips_gpu_with_its_reason(scratch):
    launch = ["--launch-method", "forkserver"] if sys.platform == "linux" else []
    out = asv(
        scratch,
        "run",
        "--quick",
        "--show-stderr",
        "-b",
        r"Multiply\.time_multiply",
        "-E",
        f"existing:{sys.executable}",
        "--set-commit-hash",
        scratch["commit"],
        "--machine",
        "testbox",
        *launch,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    machine_dir = scratch["tmp"] / "results" / "testbox"
    (result_file,) = machine_dir.glob(f"{scratch['commit'][:8]}-*.json")
    saved = json.loads(result_file.read_text())
    columns = saved["result_columns"]
    entry = dict(zip(columns, saved["results"]["multiply.Multiply.time_multiply"]))
    devices, sizes, dtypes, modes = entry["params"]
    values = iter(entry["result"])
    for device, *_ in itertools.product(devices, sizes, dtypes, modes):
        value = next(values)
        if device == "'cpu'":
            assert value is not None and math.isfinite(value) and value > 0
        elif "no GPU visible" in out.stdout:
            assert value is None or math.isnan(value)
    assert "asv: skipped: NotImplementedError(" in out.stdout

    published = asv(scratch, "publish")
    assert published.returncode == 0, published.stdout + published.stderr
    assert (scratch["tmp"] / "html" / "index.html").is_file()
    graphs = list((scratch["tmp"] / "html" / "graphs").rglob("*.json"))
    assert graphs, "asv publish wrote no graph data"
