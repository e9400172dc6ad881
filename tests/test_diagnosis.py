"""The doctor's diagnosis on this machine's real TensorFlow, and its command."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

tf = pytest.importorskip("tensorflow")

from tfgpubench.diagnosis import (  # noqa: E402
    diagnose,
    format_diagnosis,
    format_placement,
    huge_pages,
    stack_of,
    stack_requirements,
)
from tfgpubench.stacks.requirements import Facts  # noqa: E402
from tfgpubench.stacks.table import load_table  # noqa: E402
from tfgpubench.suite import suite_module  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HAS_GPU = bool(tf.config.list_physical_devices("GPU"))


@pytest.fixture(scope="module")
def diagnosis():
    checks = suite_module("checks", ROOT / "benchmarks")
    return diagnose(checks, checks.run_checks())


def test_reports_the_running_tensorflow(diagnosis):
    assert diagnosis["tensorflow"] == tf.__version__
    assert any(v == tf.__version__ for v in diagnosis["distributions"].values())


def test_int32_multiply_never_computes_on_the_gpu_outside_xla(diagnosis):
    int32 = diagnosis["gpu_multiply"]["int32"]
    for mode in ("eager", "function", "graph_loop"):
        assert int32["modes"][mode]
    assert int32["gpu_kernel"].startswith("host-memory kernel")


@pytest.mark.skipif(HAS_GPU, reason="this machine has a GPU")
def test_without_a_gpu_every_dtype_runs_on_the_cpu_because_of_soft_placement(diagnosis):
    text = format_diagnosis(diagnosis, diagnosis["gpu_checks"])
    assert "no GPU: every '/GPU:0' op silently runs on the CPU" in text
    assert "FAIL  gpu listed: no GPU visible to TensorFlow" in text
    assert "PASS  xla compiles on cpu" in text


def test_placement_lines_split_by_mode_only_where_the_modes_differ():
    same = {"modes": {"eager": "no GPU", "xla": "no GPU"}, "gpu_kernel": "k"}
    assert format_placement("int32", same)[0] == "  int32    every mode: not measured: no GPU"
    differ = {"modes": {"eager": "host memory", "xla": None}, "gpu_kernel": "k"}
    lines = format_placement("int32", differ)
    assert "eager      not measured: host memory" in lines[1]
    assert "xla        measured on the GPU" in lines[2]


def test_cli_prints_json_from_the_checkout():
    out = subprocess.run(
        [sys.executable, "-m", "tfgpubench", "doctor", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    parsed = json.loads(out.stdout)
    assert set(parsed["gpu_multiply"]) == {"int32", "float32"}
    assert parsed["gpu_checks"]["checks"][0]["name"] == "gpu listed"
    # The row of stacks.toml for this TensorFlow, with what it needs here.
    assert parsed["stack"]["label"] == stack_of(
        load_table(ROOT / "stacks.toml"), sys.platform, parsed["distributions"]).label
    assert all(need["ok"] for need in parsed["stack"]["needs"])


STACKS = load_table(ROOT / "stacks.toml")
CUDA_LINUX = Facts(system="linux", machine="x86_64", python="3.11", driver_cuda="12.4")


def test_the_stack_of_an_installation_is_its_row_else_the_row_of_its_tensorflow():
    assert stack_of(STACKS, "linux", {"tensorflow-cpu": "2.21.0"}).label == "tf2.21.0"
    # The CUDA build, with a local label: the same release, the same row.
    assert stack_of(STACKS, "linux", {"tensorflow": "2.21.0+nv25.02"}).label == "tf2.21.0"
    # On a Mac the plugin beside TensorFlow decides between the rows of one release.
    for metal in ("1.0.0", "1.0.1"):
        row = stack_of(STACKS, "darwin", {"tensorflow": "2.13.1", "tensorflow-metal": metal})
        assert row.label == f"tf2.13.1-metal{metal}"
    assert stack_of(STACKS, "darwin", {"tensorflow-macos": "2.12.0"}).label.startswith("tf2.12.0")
    assert stack_of(STACKS, "linux", {"tensorflow-cpu": "2.11.0"}) is None  # no row for it
    assert stack_of(STACKS, "linux", {"numpy": "2.4.6"}) is None


def test_a_cuda_stack_names_the_driver_cuda_and_cudnn_it_needs_and_what_is_missing():
    stack = stack_of(STACKS, "linux", {"tensorflow": "2.21.0"})
    needs = stack_requirements(stack, "cuda", CUDA_LINUX, "2.21.0")
    by_what = {need["what"]: need for need in needs["needs"]}
    # The driver supports CUDA 12.4; TensorFlow 2.21 was built with 12.5: same major, enough.
    assert by_what["NVIDIA driver"]["ok"]
    assert "12.5" in by_what["CUDA runtime"]["needed"] and "9.3" in by_what["cuDNN"]["needed"]
    assert needs["lines"][0] == "tf2.21.0 (CUDA): runs here"
    # 2.13 needs a system CUDA 11.8 and cuDNN 8.6, which this machine does not have.
    old_stack = stack_of(STACKS, "linux", {"tensorflow": "2.13.1"})
    old = stack_requirements(old_stack, "cuda", CUDA_LINUX, "2.13.1")
    missing = {need["what"] for need in old["needs"] if not need["ok"]}
    assert {"CUDA runtime", "cuDNN"} <= missing
    assert old["lines"][0].startswith("tf2.13.1 (CUDA): not here (")


def test_a_tensorflow_no_row_pins_says_so():
    needs = stack_requirements(None, "cpu", CUDA_LINUX, "2.11.0")
    assert needs["label"] is None and "no row of stacks.toml pins TensorFlow 2.11.0" in \
        needs["lines"][0]


def test_cli_check_prints_each_check_with_its_evidence():
    out = subprocess.run(
        [sys.executable, "-m", "tfgpubench", "doctor", "--check"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert "GPU self-check:" in out.stdout
    assert "xla compiles on cpu" in out.stdout and "checking that XLA" in out.stderr


def test_cli_outside_a_checkout_says_where_it_looked(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "tfgpubench", "doctor"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert out.returncode != 0
    assert "asv.conf.json: no asv configuration here" in out.stderr


def test_huge_pages_reads_the_bracketed_mode_and_is_none_without_the_setting(tmp_path):
    setting = tmp_path / "enabled"
    setting.write_text("always [madvise] never\n")
    assert huge_pages(setting) == "madvise"
    setting.write_text("[always] madvise never\n")
    assert huge_pages(setting) == "always"
    assert huge_pages(tmp_path / "missing") is None


def test_the_huge_page_mode_is_printed_with_what_it_costs_a_large_op(diagnosis):
    for mode, words in (("madvise", "page-faults every 4 KiB"), ("never", "off"),
                        ("always", "2 MiB pages")):
        text = format_diagnosis({**diagnosis, "huge_pages": mode})
        assert f"transparent huge pages: {mode} (" in text and words in text
    assert "huge pages" not in format_diagnosis({**diagnosis, "huge_pages": None})
