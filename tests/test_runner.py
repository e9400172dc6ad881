"""The runner's choices: launch method, asv's -b patterns, where an existing install lands."""

from pathlib import Path

from tfgpubench import runner
from tfgpubench.stacks.selection import Target
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
    # The forms argparse also reads as -b: attached, and with "=".
    assert runner.split_bench_args(["-bWait", "-b=Seed", "--bench", "x"]) == (
        ["Wait", "Seed", "x"], [])


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


# --- what run compares a newly measured stack with ---------------------------------------

def test_a_new_stack_is_compared_with_the_one_before_it_that_installs_here():
    stacks = STACKS
    linux311 = Target("linux", "x86_64", "3.11")
    assert runner.previous_in_chain(stacks, linux311, "tf2.21.0").label == "tf2.20.0"
    assert runner.previous_in_chain(stacks, linux311, "tf2.12.1") is None
    # tf2.12.1 has no Python 3.8 wheels: on 3.8, tf2.13.1 is the first of the chain.
    assert runner.previous_in_chain(stacks, Target("linux", "x86_64", "3.8"),
                                    "tf2.13.1") is None
    # A Linux stack is never compared with a comparator stack, nor the other way round.
    comparators = [s for s in stacks if s.is_comparators]
    assert runner.previous_in_chain(stacks, linux311, comparators[0].label) is None
    # An Intel Mac skips the arm64-only stacks between its own.
    intel = Target("darwin", "x86_64", "3.10")
    assert runner.previous_in_chain(stacks, intel, "tf2.13.1-metal1.0.0").label == (
        "tf2.12.0-metal0.8.0")
    assert runner.previous_in_chain(stacks, intel, "tf2.18.1-metal1.2.0") is None


def test_the_versions_besides_a_stack_come_from_its_latest_install_else_the_ledger(tmp_path):
    import json

    from tfgpubench.names import INSTALL_HISTORY_FILE, INSTALLED_VERSIONS_FILE

    def write(path, records):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in records) + "not json\n")

    env_dir, results = tmp_path / "env", tmp_path / "results"
    # The gate's rounds: both stacks installed in turn into one environment; a failed
    # install of one says nothing of what it measured with.
    write(env_dir / "0123abcd" / INSTALL_HISTORY_FILE, [
        {"commit": "a" * 40, "ok": True, "also": {"numpy": "2.1.3"}},
        {"commit": "b" * 40, "ok": True, "also": {"numpy": "2.4.6"}},
        {"commit": "a" * 40, "ok": True, "also": {"numpy": "2.4.6"}},
        {"commit": "b" * 40, "ok": False, "reason": "pip failed"},
        {"commit": "e" * 40, "ok": True, "also": ["numpy"]},
    ])
    also = runner.recorded_also_versions
    assert also(env_dir, results, "m", "a" * 40) == {"numpy": "2.4.6"}
    assert also(env_dir, results, "m", "b" * 40) == {"numpy": "2.4.6"}
    assert also(env_dir, results, "m", "e" * 40) == {}  # damaged: nothing known
    # A stack measured by an earlier run, whose environment is gone: the ledger's line.
    write(results / "m" / INSTALLED_VERSIONS_FILE, [
        {"commit": "c" * 40, "also": {"numpy": "1.26.4", "keras": None}},
        {"commit": "a" * 40, "also": {"numpy": "2.1.3"}}])
    assert also(env_dir, results, "m", "c" * 40) == {"numpy": "1.26.4"}
    assert also(env_dir, results, "other", "c" * 40) == {}
    assert also(tmp_path / "none", results, "m", "d" * 40) == {}
    # run compares the results its own ledger line describes: that line first.
    assert also(env_dir, results, "m", "a" * 40, ledger_first=True) == {"numpy": "2.1.3"}
    assert also(env_dir, results, "m", "b" * 40, ledger_first=True) == {"numpy": "2.4.6"}
    # Two environments (two Pythons) that installed other numpys for one stack: which one
    # a comparison read is not known here, so none is claimed.
    write(env_dir / "4567efgh" / INSTALL_HISTORY_FILE, [
        {"commit": "a" * 40, "ok": True, "also": {"numpy": "2.2.0"}},
        {"commit": "b" * 40, "ok": True, "also": {"numpy": "2.4.6"}}])
    assert also(env_dir, results, "m", "a" * 40) == {}
    assert also(env_dir, results, "m", "b" * 40) == {"numpy": "2.4.6"}
