"""`python -m tfgpubench gate`: what it asks asv continuous to measure, and the inputs it
refuses before anything runs. (The gate itself, with asv and real stacks: the fleet's
end-to-end test, tests/test_fleet.py.)"""

import json
import re

import pytest

from tests.stacks.conftest import make_workspace, tfgpubench
from tfgpubench.commands.gate import gate_asv_args
from tfgpubench.names import COMPARATOR_BENCHMARKS, TIME_BENCHMARKS
from tfgpubench.runner import split_bench_args
from tfgpubench.stacks.table import load_table

from .test_publish import ROOT

STACKS = {s.label: s for s in load_table(ROOT / "stacks.toml")}
COMPARATORS = next(s for s in STACKS.values() if s.is_comparators)


def test_time_benchmarks_only_unless_told_otherwise():
    (pattern,), rest = split_bench_args(gate_asv_args(STACKS["tf2.21.0"], ["--quick"]))
    assert rest == ["--quick"]
    names = ["multiply.Multiply.time_multiply", "wait.Wait.time_wait",
             "numpy_multiply.NumpyMultiply.time_multiply", "multiply.Speedup.track_gpu_speedup",
             "torch_multiply.TorchMultiply.time_multiply", "jax_multiply.JaxMultiply.time_multiply"]
    # A TensorFlow stack installs neither PyTorch nor JAX: their cases are not asked for.
    assert [n for n in names if re.search(pattern, n)] == names[:3]
    assert split_bench_args(gate_asv_args(STACKS["tf2.21.0"], ["-b", "Wait.time_wait"]))[0] == [
        "Wait.time_wait"]
    assert split_bench_args(gate_asv_args(COMPARATORS, []))[0] == list(COMPARATOR_BENCHMARKS)


def test_the_time_pattern_selects_every_time_benchmark_and_no_track():
    # The suite's benchmarks as asv discovered them (the checked-in results/).
    names = [n for n, v in json.loads((ROOT / "results" / "benchmarks.json").read_text())
             .items() if isinstance(v, dict)]
    selected = {n for n in names if re.search(TIME_BENCHMARKS, n)}
    assert selected == {n for n in names if n.rsplit(".", 1)[1].startswith("time_")}
    assert selected


@pytest.mark.parametrize("args,message", [
    (["--previous", "tf2.20.0", "--new", "tf9.9.9"], "--new tf9.9.9: no stack of stacks.toml"),
    (["--previous", "tf2.20.0", "--new", "tf2.18.1-metal1.2.0"],
     "tf2.20.0 is a linux stack, tf2.18.1-metal1.2.0 a macos one"),
    (["--previous", "tf2.20.0", "--new", "tf2.21.0", "--factor", "0.9"],
     "--factor 0.9: must be more than 1"),
    (["--previous", "tf2.20.0", "--new", "tf2.21.0", "--machine", "../x"], "--machine"),
])
def test_a_bad_input_is_one_line_exit_2_and_runs_nothing(tmp_path, args, message):
    path = make_workspace(tmp_path / "suite")
    out = tfgpubench(path, "gate", *args, "--json", "gate.json", timeout=120)
    assert out.returncode == 2, out.stdout + out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert message in line and line.endswith("nothing was run")
    assert not (path / ".asv").exists() and not (path / "results").exists()
    assert not (path / "gate.json").exists()
