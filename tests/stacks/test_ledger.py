"""Results survive interrupted runs; a stack is skipped only when this machine measured
it; the ledger says which versions each stack measured, one whole line per stack."""

import json
import shutil
from pathlib import Path

import pytest

from tfgpubench.names import INSTALLED_VERSIONS_FILE
from tfgpubench.stacks import ledger

from .conftest import RECORDED_RESULTS

COMMIT = "5805198651dad2bb754b3f6466092c9398ef3ca0"  # tf2.21.0 as recorded on machine vm
RESULT = f"{COMMIT[:8]}-virtualenv-py3.11.json"
MACHINE_JSON = json.loads((RECORDED_RESULTS / "vm" / "machine.json").read_text())


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


# --- an interrupted stack is undone from its snapshot --------------------------------

def test_a_file_cut_short_is_restored_from_the_snapshot(tmp_path):
    results, snap = tmp_path / "results", tmp_path / "snap"
    done = results / "m" / "aaaaaaaa-virtualenv-py3.11.json"
    running = results / "m" / "bbbbbbbb-virtualenv-py3.11.json"
    write(done, {"results": {"x": 1}})
    write(running, {"results": {"y": 2}})
    write(results / "m" / "machine.json", {"machine": "m"})
    ledger.begin(results, snap, "m", "bbbbbbbb" + "0" * 32)
    # What `kill -9` during asv's non-atomic write leaves behind:
    running.write_text('{"results": {"y"')
    assert not any("bbbbbbbb" in problem for problem in ledger.find_damage(results, snap))
    messages = ledger.repair(results, snap)
    assert messages == ["results/m/bbbbbbbb-virtualenv-py3.11.json: was cut short by an "
                        "interrupted run; restored"]
    assert json.loads(running.read_text()) == {"results": {"y": 2}}
    assert json.loads(done.read_text()) == {"results": {"x": 1}}


def test_a_file_the_interrupted_run_had_only_begun_is_removed(tmp_path):
    results, snap = tmp_path / "results", tmp_path / "snap"
    ledger.begin(results, snap, "m", "cccccccc" + "0" * 32)
    new = results / "m" / "cccccccc-virtualenv-py3.11.json"
    write(new, {})
    new.write_text('{"commit_ha')
    assert "removed (that stack is measured again)" in ledger.repair(results, snap)[0]
    assert not new.exists()


def test_a_broken_file_no_interrupted_run_explains_is_named_and_left_alone(tmp_path):
    results, snap = tmp_path / "results", tmp_path / "snap"
    ledger.begin(results, snap, "m", "dddddddd" + "0" * 32)
    other = results / "m" / "eeeeeeee-virtualenv-py3.11.json"
    write(other, {})
    other.write_text("{")
    assert ledger.find_damage(results, snap) == [
        "results/m/eeeeeeee-virtualenv-py3.11.json: not valid JSON (Expecting property name "
        "enclosed in double quotes: line 1 column 2 (char 1)), and no interrupted run of "
        "tfgpubench left it so: fix or remove it"]
    assert ledger.repair(results, snap) == []
    assert other.read_text() == "{"


def test_a_finished_stack_leaves_nothing_to_repair(tmp_path):
    results, snap = tmp_path / "results", tmp_path / "snap"
    ledger.begin(results, snap, "m", "ffffffff" + "0" * 32)
    assert ledger.in_progress(snap) == ("m", "ffffffff" + "0" * 32)
    ledger.end(snap)
    assert ledger.in_progress(snap) is None
    broken = results / "m" / "ffffffff-virtualenv-py3.11.json"
    write(broken, {})
    broken.write_text("{")
    assert len(ledger.find_damage(results, snap)) == 1


def test_restore_undoes_what_a_failed_stack_did(tmp_path):
    results, snap = tmp_path / "results", tmp_path / "snap"
    commit = "dddddddd" + "0" * 32
    earlier = results / "m" / f"{commit[:8]}-virtualenv-py3.10.json"
    stale = results / "m" / f"{commit[:8]}-virtualenv-py3.9.json"
    write(earlier, {"ok": 1})
    write(stale, {"other": "machine"})
    before = set(ledger.result_files(results, "m", commit))
    ledger.begin(results, snap, "m", commit)
    stale.unlink()  # what the runner does to results of another configuration
    new = results / "m" / f"{commit[:8]}-virtualenv-py3.11.json"
    write(new, {"all": "failed"})
    earlier.write_text('{"overwritten": true}')
    ledger.restore(before, results, snap, "m", commit)
    assert not new.exists() and json.loads(earlier.read_text()) == {"ok": 1}
    assert json.loads(stale.read_text()) == {"other": "machine"}


# --- a measured stack is skipped only on the machine that measured it ----------------------

@pytest.fixture
def committed(tmp_path):
    """results/ with a recorded tf2.21.0 result and ledger of machine `vm`."""
    results = tmp_path / "results"
    (results / "vm").mkdir(parents=True)
    shutil.copy(RECORDED_RESULTS / "benchmarks.json", results)
    shutil.copy(RECORDED_RESULTS / "vm" / RESULT, results / "vm")
    shutil.copy(RECORDED_RESULTS / "vm" / INSTALLED_VERSIONS_FILE, results / "vm")
    return results


def wait_benchmark(results):
    return ledger.selected_benchmarks(results, ["Wait.time_wait"])


@pytest.mark.parametrize("change,skipped,why", [
    ({}, True, None),
    # Another kernel build, or memory the kernel counts differently: the same machine.
    ({"os": "Debian GNU/Linux 12 (bookworm), Linux 6.18.45-fc-v657"}, True, None),
    ({"ram": "25325268992"}, True, None),
    ({"cpu": "Intel(R) Xeon(R) Processor"}, False,
     "measured on vm with cpu 'AMD EPYC' (this machine: 'Intel(R) Xeon(R) Processor')"),
    ({"num_cpu": "4"}, False, "num_cpu '2' (this machine: '4')"),
    ({"ram": "34359738368"}, False, "ram '25276059648' (this machine: '34359738368')"),
    ({"gpu": "NVIDIA H200 (143771 MiB)"}, False, "gpu 'none'"),
    ({"os": "Debian GNU/Linux 13 (trixie), Linux 6.12.0-1-amd64"}, False, "os 'Debian"),
    ({"arch": "arm64"}, False, "arch 'x86_64' (this machine: 'arm64')"),
])
def test_skipped_only_when_recorded_on_this_machine_as_it_is(committed, change, skipped, why):
    here = dict(MACHINE_JSON, **change)
    previous = ledger.previous_measurement(committed, "vm", COMMIT, wait_benchmark(committed), here)
    assert previous.finished is skipped and previous.recorded
    assert previous.stale == ([] if skipped else [committed / "vm" / RESULT])
    assert (previous.why is None) is skipped
    if why:
        assert why in previous.why and previous.why.endswith("measuring it again")


def test_a_result_whose_versions_were_never_recorded_is_not_finished(committed):
    path = committed / "vm" / INSTALLED_VERSIONS_FILE
    path.write_text("".join(line + "\n" for line in path.read_text().splitlines()
                            if COMMIT not in line))
    previous = ledger.previous_measurement(
        committed, "vm", COMMIT, wait_benchmark(committed), MACHINE_JSON)
    assert previous.complete and not previous.recorded and not previous.finished


def test_a_benchmark_not_measured_is_not_skipped(committed):
    wanted = ledger.selected_benchmarks(committed, ["Wait.time_wait"])
    wanted["wait.Wait.time_something_new"] = {"params": []}
    previous = ledger.previous_measurement(committed, "vm", COMMIT, wanted, MACHINE_JSON)
    assert not previous.complete and previous.recorded and previous.why is None


def test_a_benchmark_whose_version_changed_since_is_measured_again(committed):
    wanted = wait_benchmark(committed)
    recorded_version = wanted["wait.Wait.time_wait"]["version"]
    same = {"wait.Wait": str(recorded_version)}
    assert ledger.previous_measurement(committed, "vm", COMMIT, wanted, MACHINE_JSON,
                                       same).finished
    # The suite's source now says another version: benchmarks.json is from before it.
    bumped = {"wait.Wait": str(recorded_version) + "1"}
    previous = ledger.previous_measurement(committed, "vm", COMMIT, wanted, MACHINE_JSON, bumped)
    assert not previous.complete and previous.recorded and not previous.stale
    assert "wait.Wait changed version" in previous.why


def test_the_fleet_takes_a_stack_as_measured_only_under_the_suites_versions(committed):
    recorded_version = wait_benchmark(committed)["wait.Wait.time_wait"]["version"]
    now = {"wait.Wait": str(recorded_version)}
    assert ledger.measured_as_now(committed, "vm", COMMIT, ["Wait.time_wait"], now)
    bumped = {"wait.Wait": str(recorded_version) + "1"}
    assert not ledger.measured_as_now(committed, "vm", COMMIT, ["Wait.time_wait"], bumped)
    # Another commit, nothing selected, a benchmark the result file lacks: not measured.
    assert not ledger.measured_as_now(committed, "vm", "0" * 40, ["Wait.time_wait"], now)
    assert not ledger.measured_as_now(committed, "vm", COMMIT, ["NoSuchBench"], now)
    index = json.loads((committed / "benchmarks.json").read_text())
    index["wait.Wait.time_new"] = dict(index["wait.Wait.time_wait"], name="wait.Wait.time_new")
    (committed / "benchmarks.json").write_text(json.dumps(index))
    assert not ledger.measured_as_now(committed, "vm", COMMIT, ["Wait.time_"], now)


def test_the_suite_versions_are_read_from_the_source_without_importing_it(tmp_path):
    (tmp_path / "mod.py").write_text(
        "import not_installed_anywhere\n"
        "class Timed:\n    version = '3'\n    def time_x(self):\n        pass\n"
        "class Unversioned:\n    def time_y(self):\n        pass\n")
    (tmp_path / "broken.py").write_text("class (:\n")
    versions = ledger.source_versions(tmp_path)
    assert versions == {"mod.Timed": "3"}
    wanted = {"mod.Timed.time_x": {"version": "2"}, "mod.Unversioned.time_y": {"version": "ab"}}
    assert ledger.outdated(wanted, versions) == ["mod.Timed.time_x"]
    # The real suite: every benchmark class sets its version (asv would hash the code).
    suite = ledger.source_versions(Path(__file__).resolve().parents[2] / "benchmarks")
    assert {"multiply.Multiply", "wait.Wait", "numpy_multiply.NumpyMultiply"} <= set(suite)


# --- the ledger: one whole line per stack ----------------------------------------------------

def test_an_append_after_a_line_cut_short_starts_on_its_own_line(tmp_path):
    results = tmp_path / "results"
    ledger.record_installed(results, "m", {"label": "tf2.20.0", "commit": "a"})
    path = results / "m" / INSTALLED_VERSIONS_FILE
    with open(path, "a") as f:
        f.write('{"label": "tf2.2')  # what a write cut short would leave
    assert ledger.repair(results, tmp_path / "snap") == [
        "results/m/installed-versions.jsonl: its last line was cut short by an interrupted "
        "run; removed (that stack is installed again to record it)"]
    ledger.record_installed(results, "m", {"label": "tf2.21.0", "commit": "b", "own": {
        "label": "own-x", "parent": None, "stack": {"os": "linux", "pins": []}}})
    assert [r["label"] for r in ledger.read_installed(results)] == ["tf2.20.0", "tf2.21.0"]
    assert [o["label"] for o in ledger.own_stacks(results)] == ["own-x"]
    assert ledger.find_damage(results, tmp_path / "snap") == []


def test_a_line_without_its_newline_that_parses_is_kept(tmp_path):
    path = tmp_path / "m" / INSTALLED_VERSIONS_FILE
    path.parent.mkdir()
    path.write_text('{"label": "tf2.20.0", "commit": "a"}')  # saved by an editor
    assert ledger.repair(tmp_path, tmp_path / "snap") == []
    ledger.record_installed(tmp_path, "m", {"label": "tf2.21.0", "commit": "b"})
    assert [r["label"] for r in ledger.read_installed(tmp_path)] == ["tf2.20.0", "tf2.21.0"]
    assert ledger.recorded(tmp_path, "m", "a") and ledger.recorded(tmp_path, "m", "b")
