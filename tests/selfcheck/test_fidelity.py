"""The fidelity part for real, on one small case, through asv_runner in this process."""

import math
from pathlib import Path

import pytest

from tfgpubench.selfcheck import fidelity

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_tensorflow_method_times_the_calls_after_one_warm_up():
    calls = []
    mean = fidelity.tensorflow_method(lambda: calls.append(1), iterations=1000)
    assert len(calls) == 1001 and mean >= 0


def test_suite_and_bare_loop_side_by_side_on_2x2_float32():
    pytest.importorskip("tensorflow")
    (case,) = fidelity.run_fidelity(
        str(BENCHMARKS), sizes=[2], dtypes=["float32"], interleave=1, progress=lambda _: None
    )
    assert (case["size"], case["dtype"]) == (2, "float32")
    # One round of asv_runner's defaults for a benchmark with setup: number 1, 1-5 samples.
    assert 1 <= case["asv_samples"] <= 10
    # A 2x2 eager multiply takes microseconds here; the ratio is finite and plausible
    # (the target itself is the self-check's verdict, not a test: this machine is shared).
    assert 1e-7 < case["bare"] < 1e-3 and 1e-7 < case["asv"] < 1e-3
    assert not math.isnan(case["ratio"]) and 0.3 < case["ratio"] < 3
