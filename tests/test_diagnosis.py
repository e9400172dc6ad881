"""The doctor's diagnosis on this machine's real TensorFlow."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

tf = pytest.importorskip("tensorflow")

from tfgpubench.diagnosis import diagnose, format_diagnosis  # noqa: E402
from tfgpubench.suite import load_suite_common  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HAS_GPU = bool(tf.config.list_physical_devices("GPU"))


@pytest.fixture(scope="module")
def diagnosis():
    return diagnose(load_suite_common(ROOT / "benchmarks"))


def test_reports_the_running_tensorflow(diagnosis):
    assert diagnosis["tensorflow"] == tf.__version__
    assert any(v == tf.__version__ for v in diagnosis["distributions"].values())


def test_int32_multiply_never_computes_on_the_gpu(diagnosis):
    int32 = diagnosis["gpu_multiply"]["int32"]
    assert int32["runs_on"] == "CPU"
    assert int32["reason"]
    assert int32["gpu_kernel"].startswith("host-memory kernel")


@pytest.mark.skipif(HAS_GPU, reason="this machine has a GPU")
def test_without_a_gpu_every_dtype_runs_on_the_cpu_because_of_soft_placement(diagnosis):
    assert {d["runs_on"] for d in diagnosis["gpu_multiply"].values()} == {"CPU"}
    text = format_diagnosis(diagnosis)
    assert "no GPU: every '/GPU:0' op silently runs on the CPU" in text


def test_cli_prints_json_from_the_checkout():
    out = subprocess.run(
        [sys.executable, "-m", "tfgpubench", "doctor", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    parsed = json.loads(out.stdout)
    assert set(parsed["gpu_multiply"]) == {"int32", "float32"}


def test_cli_outside_a_checkout_says_where_it_looked(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "tfgpubench", "doctor"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode != 0
    assert "asv.conf.json: no asv configuration here" in out.stderr
