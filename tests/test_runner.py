"""The runner's choices: launch method, asv's -b patterns, where an existing install lands."""

from pathlib import Path

from tfgpubench import runner
from tfgpubench.stacks.table import load_table

ROOT = Path(__file__).resolve().parents[1]
STACKS = load_table(ROOT / "stacks.toml")


def test_launch_method_per_platform():
    assert runner.launch_method_args([], "linux") == ["--launch-method", "forkserver"]
    assert runner.launch_method_args([], "darwin") == ["--launch-method", "spawn"]
    assert runner.launch_method_args(["--launch-method=spawn"], "linux") == []


def test_bench_patterns():
    assert runner.split_bench_args(["--quick", "-b", "Wait", "--bench=Seed"]) == (
        ["Wait", "Seed"], ["--quick"])


def here(installed, system="linux", arch="x86_64", python="3.11"):
    return {"system": system, "machine": arch, "python": python, "installed": installed,
            "also": {}}


def test_existing_installation_lands_on_its_row():
    assert runner.match_existing(STACKS, here({"tensorflow-cpu": "2.21.0"})).label == "tf2.21.0"
    assert runner.match_existing(STACKS, here({"tensorflow": "2.20.0"})).label == "tf2.20.0"
    mac = here({"tensorflow": "2.18.1", "tensorflow-metal": "1.2.0"}, "darwin", "arm64")
    assert runner.match_existing(STACKS, mac).label == "tf2.18.1-metal1.2.0"
    # A row's versions on a Python it has no wheels for is not that row.
    assert runner.match_existing(STACKS, here({"tensorflow-cpu": "2.21.0"}, python="3.9")) is None


def test_existing_installation_matching_no_row_gets_its_own_label():
    mac = here({"tensorflow": "2.16.1", "tensorflow-metal": "1.2.0"}, "darwin", "arm64")
    assert runner.match_existing(STACKS, mac) is None
    own = runner.own_stack(STACKS, mac)
    assert own["label"] == "own-tensorflow2.16.1-tensorflow-metal1.2.0"
    assert own["parent"] == "tf2.16.2-metal1.1.0"
    assert own["stack"]["pins"] == ["tensorflow==2.16.1", "tensorflow-metal==1.2.0"]
