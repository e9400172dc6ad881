"""Machine description, install verification, result safety and the runner's choices."""

import json

import pytest

from tfgpubench import runner
from tfgpubench.stacks import install_stack, machine
from tfgpubench.stacks import results as ledger
from tfgpubench.stacks.table import load_table

from .conftest import ROOT

STACKS = load_table(ROOT / "stacks.toml")


# --- what asv records about the machine ------------------------------------------

def test_nvidia_smi_lines():
    assert machine.parse_nvidia_smi("NVIDIA H200, 143771 MiB\n") == "NVIDIA H200 (143771 MiB)"
    assert machine.parse_nvidia_smi("NVIDIA A100-SXM4-80GB, 81920 MiB\n" * 2) == (
        "2x NVIDIA A100-SXM4-80GB (81920 MiB)")
    assert machine.parse_nvidia_smi("") is None


def test_system_profiler_apple_silicon_and_amd():
    apple = {"SPDisplaysDataType": [{"sppci_model": "Apple M1 Pro", "sppci_cores": "16"}]}
    assert machine.parse_system_profiler(json.dumps(apple), 32 * 2**30) == (
        "Apple M1 Pro (16-core GPU, 32 GB unified memory)")
    intel_mac = {"SPDisplaysDataType": [
        {"sppci_model": "Intel UHD Graphics 630", "spdisplays_vram": "1536 MB"},
        {"sppci_model": "AMD Radeon Pro 5300M", "spdisplays_vram": "4 GB"}]}
    assert machine.parse_system_profiler(json.dumps(intel_mac)) == (
        "Intel UHD Graphics 630 (1536 MB) + AMD Radeon Pro 5300M (4 GB)")
    assert machine.parse_system_profiler("not json") is None


def test_machine_info_keeps_user_edits_and_refreshes_gpu_and_os():
    info = machine.machine_info(
        existing={"machine": "ci-m1", "cpu": "Apple M1 Pro (8P+2E)", "gpu": "old"},
        defaults={"machine": "host", "cpu": "Apple M1 Pro", "ram": "32GB"},
        gpu="Apple M1 Pro (16-core GPU, 32 GB unified memory)", os_name="macOS 14.5")
    assert info == {"machine": "ci-m1", "cpu": "Apple M1 Pro (8P+2E)", "ram": "32GB",
                    "gpu": "Apple M1 Pro (16-core GPU, 32 GB unified memory)",
                    "os": "macOS 14.5"}


def test_os_release():
    assert machine.parse_os_release('NAME="Debian"\nPRETTY_NAME="Debian GNU/Linux 12"\n') == (
        "Debian GNU/Linux 12")


# --- the installer's checks ---------------------------------------------------------

def test_verify_wants_exactly_the_pins():
    pins = ["tensorflow==2.18.1", "tensorflow-metal==1.2.0"]
    assert install_stack.verify(pins, {"tensorflow": "2.18.1", "tensorflow-metal": "1.2.0"}) is None
    assert install_stack.verify(pins, {"tensorflow": "2.18.0", "tensorflow-metal": "1.2.0"}) == (
        "tensorflow 2.18.0 instead of 2.18.1")
    assert install_stack.verify(["tensorflow-cpu==2.21.0"], {
        "tensorflow-cpu": "2.21.0", "tensorflow": "2.21.0"}) == "tensorflow 2.21.0 is installed too"
    assert install_stack.verify(["tensorflow-cpu==2.21.0"], {}) == (
        "tensorflow-cpu missing instead of 2.21.0")


def test_environment_tools_are_what_asv_installs_and_their_requirements():
    import re
    from importlib import metadata

    keep = install_stack.environment_tools()
    assert {"pip", "asv-runner", "build", "pympler"} <= keep
    # Whatever of them is installed here keeps its own requirements too.
    for name in keep:
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for requirement in requires:
            if "extra ==" not in requirement:
                dep = re.match(r"[A-Za-z0-9_.-]+", requirement).group(0)
                assert install_stack.canonical(dep) in keep, (name, dep)


def test_switching_stacks_removes_what_the_last_one_left():
    # What this session saw: tensorflow-cpu 2.13.1 installed over 2.21.0's
    # leftovers (jax, numpy 2) failed to import ("numpy has no attribute exceptions").
    keep = {"pip", "asv-runner", "build", "packaging"}
    installed = ["pip", "asv_runner", "build", "packaging", "jax", "numpy", "tensorflow-cpu"]
    stale = install_stack.left_by_other_stacks(
        ["tensorflow-cpu==2.13.1"], {"tensorflow-cpu": "2.21.0"}, installed, keep
    )
    assert stale == ["jax", "numpy", "tensorflow-cpu"]
    # The same stack again (asv re-measuring a commit): nothing is removed.
    assert install_stack.left_by_other_stacks(
        ["tensorflow-cpu==2.13.1"], {"tensorflow-cpu": "2.13.1"}, installed, keep
    ) == []


def test_variant_choice():
    assert install_stack.detect_variant({"TFGPUBENCH_VARIANT": "cpu"}, nvidia=True) == "cpu"
    assert install_stack.detect_variant({}, nvidia=True) == "cuda"
    assert install_stack.detect_variant({"TFGPUBENCH_VARIANT": "auto"}, nvidia=False) == "cpu"
    with pytest.raises(ValueError, match="expected auto, cpu or cuda"):
        install_stack.detect_variant({"TFGPUBENCH_VARIANT": "rocm"})


def test_installer_refuses_a_stack_for_another_platform(tmp_path, monkeypatch, capsys):
    mac = next(s for s in STACKS if s.os == "macos").as_data()
    path = tmp_path / "stack.json"
    path.write_text(json.dumps(mac))
    monkeypatch.setenv("ASV_ENV_DIR", str(tmp_path))
    monkeypatch.setenv("ASV_COMMIT", "abc")
    monkeypatch.setattr(install_stack.sys, "platform", "linux")
    assert install_stack.main([str(path)]) == 3
    assert capsys.readouterr().err.strip() == (
        "tfgpubench: stack tf2.9.2-metal0.5.0 not installed: a macos stack, this is linux")
    marker = json.loads((tmp_path / install_stack.MARKER_FILE).read_text())
    assert marker["ok"] is False and marker["commit"] == "abc" and "pins" not in marker


# --- results survive interrupted runs -------------------------------------------------

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
    with open(tmp_path / "m" / ledger.INSTALLED_LOG, "a") as f:
        f.write('{"label": "tf2.2')
    assert [r["label"] for r in ledger.read_installed(tmp_path)] == ["tf2.21.0"]


# --- the runner's choices -----------------------------------------------------------

def test_launch_method_per_platform():
    assert runner.launch_method_args([], "linux") == ["--launch-method", "forkserver"]
    assert runner.launch_method_args([], "darwin") == ["--launch-method", "spawn"]
    assert runner.launch_method_args(["--launch-method=spawn"], "linux") == []


def test_bench_patterns():
    assert runner._bench_patterns(["--quick", "-b", "Wait", "--bench=Seed"]) == ["Wait", "Seed"]


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
