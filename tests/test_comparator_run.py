"""The comparator run for a machine without TensorFlow or pip's index: its commit, its asv
command, what it brings back, and (slow) the run itself with asv."""

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tfgpubench import comparator_run
from tfgpubench.names import (
    INSTALLED_VERSIONS_FILE,
    JAX_MULTIPLY,
    MULTIPLY,
    NUMPY_MULTIPLY,
    TORCH_MULTIPLY,
)
from tfgpubench.stacks import ledger, repo
from tfgpubench.stacks.table import load_table

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "report" / "fixtures" / "comparators" / "results"
H200 = {"torch": "2.11.0", "jax": "0.11.2", "jaxlib": "0.11.2", "numpy": "2.5.2"}
# What the H200 machine had installed, as its run of 2026-12-04 recorded it.
H200_SEEN = {**H200, "cupy-cuda13x": "14.2.0", "jax-cuda13-plugin": "0.11.2"}


def test_the_stack_is_named_by_its_versions():
    data = comparator_run.stack_data(H200)
    assert data["label"] == "own-comparators-jax0.11.2-jaxlib0.11.2-numpy2.5.2-torch2.11.0"
    assert data["pins"] == ["jax==0.11.2", "jaxlib==0.11.2", "numpy==2.5.2", "torch==2.11.0"]


def test_the_same_versions_give_the_same_commit_anywhere(tmp_path):
    data = comparator_run.stack_data(H200)
    first = comparator_run.make_stack_repo(tmp_path / "a", data)
    again = comparator_run.make_stack_repo(tmp_path / "b", data)
    other = comparator_run.make_stack_repo(tmp_path / "c",
                                           comparator_run.stack_data({**H200, "torch": "2.12.0"}))
    assert first == again != other
    tags = subprocess.run(["git", "-C", str(tmp_path / "a"), "tag", "--points-at", first],
                          capture_output=True, text=True, check=True).stdout.split()
    assert tags == [data["label"]]


def test_asv_runs_the_existing_python_with_the_forkserver():
    args = comparator_run.asv_run_args("/opt/python3", "abc123", "h200", "^numpy")
    assert args[:3] == ["run", "-E", "existing:/opt/python3"]
    assert args[args.index("--set-commit-hash") + 1] == "abc123"
    assert args[args.index("--machine") + 1] == "h200"
    assert args[args.index("--launch-method") + 1] == "forkserver"
    assert args[args.index("-b") + 1] == "^numpy"


def test_one_asv_run_per_comparator_so_a_cut_run_keeps_the_frameworks_done():
    groups = comparator_run.benchmark_groups(["--quick"])
    ids = [NUMPY_MULTIPLY, TORCH_MULTIPLY, JAX_MULTIPLY]
    assert [re.search(group, name) is not None for group in groups for name in ids] == [
        True, False, False, False, True, False, False, False, True]
    assert not any(re.search(group, MULTIPLY) for group in groups)
    # Benchmarks picked by hand: one run, as asked.
    assert comparator_run.benchmark_groups(["-b", "multiply"]) == [None]
    args = comparator_run.asv_run_args("/opt/python3", "abc123", "h200", None, ["-b", "x"])
    assert args.count("-b") == 1 and args[-2:] == ["-b", "x"]


def test_the_config_keeps_the_checkouts_settings_and_writes_only_under_work(tmp_path):
    config = comparator_run.asv_config(tmp_path, ROOT / "benchmarks", tmp_path / "repo")
    checkout = json.loads((ROOT / "asv.conf.json").read_text())
    assert config["project"] == checkout["project"] and config["install_command"] == []
    for key in ("results_dir", "html_dir", "env_dir", "repo"):
        assert Path(config[key]).is_relative_to(tmp_path)


def test_skip_reasons_are_counted_from_asvs_output():
    log = (
        "              For parameters: 'cuda', 256, 'float32', 'eager'\n"
        '              asv: skipped: NotImplementedError("no CUDA device visible to PyTorch '
        "(torch.cuda.is_available() is False; this build's CUDA: none, a CPU-only build)\")\n"
        "              asv: skipped: NotImplementedError('MPS (Apple\\'s Metal) exists only')\n"
        '              asv: skipped: NotImplementedError("no CUDA device visible to PyTorch '
        "(torch.cuda.is_available() is False; this build's CUDA: none, a CPU-only build)\")\n"
    )
    reasons = comparator_run.skip_reasons(log)
    assert reasons == {"no CUDA device visible to PyTorch (torch.cuda.is_available() is False; "
                       "this build's CUDA: none, a CPU-only build)": 2,
                       "MPS (Apple\\'s Metal) exists only": 1}


def test_a_device_started_before_the_fork_is_reported():
    log = ("<string>:5: RuntimeWarning: os.fork() was called. os.fork() is incompatible with "
           "multithreaded code, and JAX is multithreaded\n" * 2)
    assert comparator_run.fork_hazards(log) == {"os.fork() was called": 2}
    assert comparator_run.fork_hazards("all well") == {}


def test_the_summary_counts_measured_cases_per_device():
    path = next((FIXTURE / "vm-xeon").glob("*_.venv_bin_python.json"))
    data = json.loads(path.read_text())
    entry = dict(zip(data["result_columns"],
                     data["results"]["torch_multiply.TorchMultiply.time_multiply"]))
    per_device = len(entry["result"]) // 3
    # asv stores a skipped case as NaN (null in older files).
    measured = [sum(v is not None and not math.isnan(v)
                    for v in entry["result"][i * per_device:(i + 1) * per_device])
                for i in range(3)]
    lines = comparator_run.summary(path)
    for device, count in zip(("cpu", "mps", "cuda"), measured):
        assert (f"torch_multiply.TorchMultiply.time_multiply {device}: {count} of {per_device} "
                "cases measured") in lines


def test_without_wheels_the_run_says_how_to_get_them(tmp_path):
    with pytest.raises(SystemExit, match="--download-wheels"):
        comparator_run.install_wheels(tmp_path, tmp_path / "site")


@pytest.mark.slow
def test_a_run_brings_back_asvs_files_with_the_gpu_in_machine_info(tmp_path):
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "tfgpubench.comparator_run", "--machine", "testbox", "--out",
         str(out), "--work", str(tmp_path / "work"), "--", "--quick", "-b", "numpy_multiply"],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    machine = json.loads((out / "results" / "testbox" / "machine.json").read_text())
    assert machine["machine"] == "testbox" and machine["gpu"]
    (result,) = (out / "results" / "testbox").glob("*-existing-*.json")
    saved = json.loads(result.read_text())
    entry = dict(zip(saved["result_columns"],
                     saved["results"]["numpy_multiply.NumpyMultiply.time_multiply"]))
    assert all(value > 0 for value in entry["result"])
    assert (out / "results" / "benchmarks.json").is_file()
    record = json.loads((out / "results" / "testbox" / INSTALLED_VERSIONS_FILE).read_text())
    assert record["env_name"] == saved["env_name"] and "numpy" in record["installed"]
    assert json.loads((out / "stack.json").read_text())["label"] == record["label"]
    assert "numpy_multiply.NumpyMultiply.time_multiply cpu: 16 of 16 cases measured" in \
        done.stdout
    assert (out / "asv-run.log").read_text().strip()


# --- versions that a row of stacks.toml pins land on that row ---------------------------

ROW_VERSIONS = {"torch": "2.13.0+cpu", "jax": "0.10.2", "jaxlib": "0.10.2", "numpy": "2.4.6"}


def test_installed_versions_a_row_pins_land_on_its_commit(tmp_path):
    stacks = load_table(ROOT / "stacks.toml")
    row = comparator_run.matching_row(stacks, ROW_VERSIONS)
    assert row.label == "torch2.13.0-jax0.10.2-numpy2.4.6"
    # JAX's CUDA plugin and cupy beside it are recorded, not part of the match.
    with_gpu = {**ROW_VERSIONS, "jax-cuda12-plugin": "0.10.2", "cupy-cuda12x": "13.6.0"}
    assert comparator_run.matching_row(stacks, with_gpu) == row
    data, commit, own = comparator_run.choose_stack(tmp_path / "repo", with_gpu,
                                                    results=tmp_path / "results")
    assert data == row.as_data() and own is None
    assert commit == repo.expected_hashes(stacks)[row.label]
    assert repo.branches(tmp_path / "repo")[comparator_run.BRANCH] == commit


def test_other_versions_get_a_side_commit_that_publish_rebuilds(tmp_path):
    data, commit, own = comparator_run.choose_stack(tmp_path / "repo", H200_SEEN,
                                                    results=tmp_path / "results")
    assert data["label"] == comparator_run.stack_data(H200_SEEN)["label"] == own["label"]
    assert data["pins"] == comparator_run.stack_data(H200_SEEN)["pins"]
    # Drawn after the newest comparators row, tagged, on no branch (as run --existing's).
    stacks = load_table(ROOT / "stacks.toml")
    newest = [s for s in stacks if s.is_comparators][-1]
    assert own["parent"] == newest.label
    assert repo.tags(tmp_path / "repo")[own["label"]] == commit
    assert commit not in repo.branches(tmp_path / "repo").values()

    # What the run records is what run, gate and publish build their repository from:
    # the brought-back result files' commit is in it, so asv publish places them.
    results = tmp_path / "results"
    (results / "h200").mkdir(parents=True)
    (results / "h200" / f"{commit[:8]}-existing-py.json").write_text(
        json.dumps({"commit_hash": commit, "env_name": "existing-py"}))
    comparator_run.record_installed(results, "h200", commit, data, H200_SEEN, own)
    assert ledger.own_stacks(results) == [own]
    rebuilt = repo.build(stacks, tmp_path / "published", ledger.own_stacks(results))
    assert rebuilt[own["label"]] == commit
    assert rebuilt[newest.label] == repo.expected_hashes(stacks)[newest.label]


def test_a_side_stack_recorded_before_keeps_its_commit_after_a_row_is_appended(tmp_path):
    table = tmp_path / "stacks.toml"
    table.write_text((ROOT / "stacks.toml").read_text())
    results = tmp_path / "results"
    (results / "h200").mkdir(parents=True)
    data, commit, own = comparator_run.choose_stack(tmp_path / "r1", H200_SEEN, table=table,
                                                    results=results)
    (results / "h200" / f"{commit[:8]}-existing-py.json").write_text(
        json.dumps({"commit_hash": commit, "env_name": "existing-py"}))
    comparator_run.record_installed(results, "h200", commit, data, H200_SEEN, own)
    # A newer comparators row appended to the table: the same versions, run again,
    # land on the commit their earlier results are under, which publish still builds.
    table.write_text(table.read_text() + '\n[[comparators]]\nlabel = "torch2.14.0-jax0.11.0-'
                     'numpy2.5.0"\ndate = 2026-11-01\npins = ["torch==2.14.0", "jax==0.11.0", '
                     '"jaxlib==0.11.0", "numpy==2.5.0"]\nwheels = { linux-x86_64 = ["3.12"] }\n')
    assert [s for s in load_table(table) if s.is_comparators][-1].label != own["parent"]
    _, again, reused = comparator_run.choose_stack(tmp_path / "r2", H200_SEEN, table=table,
                                                   results=results)
    assert reused == own and again == commit
    assert repo.build(load_table(table), tmp_path / "published",
                      ledger.own_stacks(results))[own["label"]] == commit


def test_versions_too_long_to_name_get_a_short_label_the_ledger_reads_back(tmp_path):
    versions = {**H200_SEEN, "torch": "2.11.0.dev20261130+cu130", "jax-cuda12-plugin": "0.11.2",
                "cupy-cuda12x": "14.2.0", "nvidia-cudnn-cu13": "9.14.0.64"}
    data, commit, own = comparator_run.choose_stack(tmp_path / "repo", versions,
                                                    results=tmp_path / "results")
    assert ledger.valid_own(own) and len(own["label"]) < 40
    assert data["pins"] == [f"{n}=={v}" for n, v in sorted(versions.items())]
    assert comparator_run.stack_data(versions)["label"] == own["label"]  # the same anywhere
    assert comparator_run.stack_data(H200_SEEN)["label"].endswith("torch2.11.0")


def test_an_unreadable_table_still_gives_the_run_a_commit(tmp_path):
    missing = tmp_path / "none.toml"
    data, commit, own = comparator_run.choose_stack(tmp_path / "r2", ROW_VERSIONS, table=missing,
                                                    results=tmp_path / "results")
    assert data["label"].startswith(comparator_run.LABEL_PREFIX) and own is None
    assert repo.tags(tmp_path / "r2")[data["label"]] == commit
