"""Shared fixtures: real asv results (tests/fixtures/results), the stacks repo they
point at, and scratch copies to break."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .stackrepo import make_stack_repo

FIXTURE_RESULTS = Path(__file__).resolve().parent / "fixtures" / "results"
MACHINE = "testbox"
# Made up from a stated model by make_synthetic_gpu_results.py: NOT a measurement.
SYNTHETIC_GPU_RESULTS = Path(__file__).resolve().parent / "fixtures" / "synthetic_gpu"
SYNTHETIC_MACHINE = "synthetic-gpu-model"


def result_files(results_dir=FIXTURE_RESULTS):
    return sorted(p for p in (Path(results_dir) / MACHINE).glob("*.json")
                  if p.name != "machine.json")


def raw(path):
    """A result file as plain JSON, read without the code under test."""
    return json.loads(Path(path).read_text())


@pytest.fixture(scope="session")
def stack_repo(tmp_path_factory):
    path = tmp_path_factory.mktemp("stacks") / "repo"
    hashes = make_stack_repo(path)
    recorded = {raw(p)["commit_hash"] for p in result_files()}
    assert recorded == set(hashes.values()), "fixture results must point at the stack repo"
    return path


@pytest.fixture
def results_copy(tmp_path):
    """A scratch copy of the fixture results, to damage."""
    target = tmp_path / "results"
    shutil.copytree(FIXTURE_RESULTS, target)
    return target


def write_config(directory, results_dir, repo, html_dir=None):
    config = {
        "version": 1, "project": "tfgpubench", "project_url": "",
        "repo": str(repo), "branches": ["main"], "dvcs": "git",
        "environment_type": "virtualenv", "build_command": [], "install_command": [],
        "uninstall_command": [], "benchmark_dir": str(directory / "benchmarks"),
        "env_dir": str(directory / "env"), "results_dir": str(results_dir),
        "html_dir": str(html_dir or directory / "html"), "show_commit_url": "", "matrix": {},
    }
    (directory / "benchmarks").mkdir(exist_ok=True)
    path = directory / "asv.conf.json"
    path.write_text(json.dumps(config, indent=1))
    return path


def asv_publish(config_path):
    """The real `asv publish` over the config's results (writes html_dir)."""
    subprocess.run(
        [sys.executable, "-m", "asv", "--config", str(config_path), "publish"],
        check=True, capture_output=True, text=True,
    )
