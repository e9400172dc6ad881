"""The doctor's diagnosis on this machine's real TensorFlow, and its command."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

tf = pytest.importorskip("tensorflow")

from tfgpubench.diagnosis import diagnose, format_diagnosis, format_placement  # noqa: E402
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
