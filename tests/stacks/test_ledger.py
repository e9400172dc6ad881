"""Results survive interrupted runs; the ledger says which versions each stack measured."""

import json

from tfgpubench.names import INSTALLED_VERSIONS_FILE
from tfgpubench.stacks import ledger


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_a_file_cut_short_is_restored_from_the_snapshot(tmp_path):
    results, snap = tmp_path / "results", tmp_path / "snap"
    done = results / "m" / "aaaaaaaa-virtualenv-py3.11.json"
    running = results / "m" / "bbbbbbbb-virtualenv-py3.11.json"
    write(done, {"results": {"x": 1}})
    write(running, {"results": {"y": 2}})
    write(results / "m" / "machine.json", {"machine": "m"})
    ledger.snapshot(ledger.files_asv_rewrites(results, "m", "bbbbbbbb" + "0" * 32), results,
                    snap)
    # What `kill -9` during asv's non-atomic write leaves behind:
    running.write_text('{"results": {"y"')
    messages = ledger.repair(results, snap)
    assert messages == [f"{running}: was cut short by an interrupted run; restored"]
    assert json.loads(running.read_text()) == {"results": {"y": 2}}
    assert json.loads(done.read_text()) == {"results": {"x": 1}}


def test_a_cut_file_without_a_copy_is_moved_aside(tmp_path):
    results = tmp_path / "results"
    broken = results / "m" / "cccccccc-virtualenv-py3.11.json"
    write(broken, {})
    broken.write_text("{")
    assert "moved aside" in ledger.repair(results, tmp_path / "none")[0]
    assert not broken.exists() and broken.with_name(broken.name + ".corrupt").exists()


def test_restore_removes_what_a_failed_stack_wrote(tmp_path):
    results, snap = tmp_path / "results", tmp_path / "snap"
    commit = "dddddddd" + "0" * 32
    earlier = results / "m" / f"{commit[:8]}-virtualenv-py3.10.json"
    write(earlier, {"ok": 1})
    before = set(ledger.result_files(results, "m", commit))
    ledger.snapshot(ledger.files_asv_rewrites(results, "m", commit), results, snap)
    new = results / "m" / f"{commit[:8]}-virtualenv-py3.11.json"
    write(new, {"all": "failed"})
    earlier.write_text('{"overwritten": true}')
    ledger.restore(before, results, snap, "m", commit)
    assert not new.exists() and json.loads(earlier.read_text()) == {"ok": 1}


def test_installed_log_skips_a_line_cut_short(tmp_path):
    ledger.record_installed(tmp_path, "m", {"label": "tf2.21.0"})
    with open(tmp_path / "m" / INSTALLED_VERSIONS_FILE, "a") as f:
        f.write('{"label": "tf2.2')
    assert [r["label"] for r in ledger.read_installed(tmp_path)] == ["tf2.21.0"]
