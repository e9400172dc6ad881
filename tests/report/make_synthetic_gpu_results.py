"""Write tests/report/fixtures/synthetic_gpu/: asv result files of a GPU machine MADE UP
from a stated model. SYNTHETIC: not a measurement of any GPU. They exist so that the
report's GPU branches (speedup tables, crossovers, GPU reference shares, speedup plots,
GPU verdicts) are tested on a machine without a GPU. Never copy them to results/ or
quote their numbers anywhere as measured.

The model, per op, for every case of the suite's current grid:

    t = FIXED[device][mode] + bytes_moved(size, dtype) / BANDWIDTH[device]

times lognormal noise (sigma NOISE) on each of SAMPLES samples, seeded. On the CPU,
graph_loop's bytes move at CPU_IN_PLACE_BANDWIDTH instead: its chain writes each product
over the one before, as TensorFlow's does (tests/suite/test_timing.py), which a CPU does
faster than into a new array. The all-core STREAM kernel reads STREAM_SCALE into a new
array and STREAM_SCALE_IN_PLACE written over its input. The GPU side
behaves as the GPU self-check says a CUDA machine does: int32 is computed on the
CPU by TensorFlow's host-memory kernel (skipped) except under XLA; everything else
passes. The newer of the two stacks has a GPU eager fixed cost GPU_EAGER_SPEEDUP
times lower: a release-to-release change for the report to find.

Machine "synthetic-gpu-model", environment "synthetic-model", and the stacks of
tests/report/stackrepo.py (tf-2.16.2, tf-2.21.0). Regenerate with

    python tests/report/make_synthetic_gpu_results.py

which discovers the suite's benchmarks with asv_runner (their code, params and
versions go into benchmarks.json) and writes the result files with asv's own
Results class, so they are read exactly as real ones.
"""

import datetime
import json
import math
import random
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT = HERE / "fixtures" / "synthetic_gpu"
MACHINE = "synthetic-gpu-model"
ENV_NAME = "synthetic-model"
# The GPU is named so that the published-peak reference applies (report/references.py),
# and so that nobody can take it for a real machine.
GPU_NAME = "Apple M1 Pro (SYNTHETIC model, not a measurement)"

SAMPLES = 20
NOISE = 0.03
SEED = 20261130
FIXED = {  # seconds per op, the fixed part
    "cpu": {"eager": 15e-6, "function": 200e-6, "xla": 150e-6, "graph_loop": 4e-6},
    "gpu": {"eager": 45e-6, "function": 260e-6, "xla": 190e-6, "graph_loop": 12e-6},
}
BANDWIDTH = {"cpu": 30e9, "gpu": 180e9}  # bytes per second
CPU_IN_PLACE_BANDWIDTH = 45e9  # the CPU's graph_loop: above STREAM_SCALE, under in place
GPU_EAGER_SPEEDUP = 1.25  # the newer stack's GPU eager fixed cost is this much lower
WAIT = {"cpu": 8e-6, "gpu": 35e-6}
NUMPY_SCALE = 20e9  # one thread
STREAM_SCALE = 35e9  # every core: the CPU's ceiling
STREAM_SCALE_IN_PLACE = 55e9  # every core, written over the input
SEED_REPORTED_SPEEDUP = 1.0


def model_seconds(device, size, dtype, mode, newer, grid):
    fixed = FIXED[device][mode]
    if newer and device == "gpu" and mode == "eager":
        fixed /= GPU_EAGER_SPEEDUP
    bandwidth = BANDWIDTH[device]
    if device == "cpu" and mode == "graph_loop":
        bandwidth = CPU_IN_PLACE_BANDWIDTH
    return fixed + grid.bytes_moved(size, dtype) / bandwidth


def measured_on_gpu(dtype, mode):
    # int32 Mul keeps host memory on GPUs; XLA computes it on the device (CUDA).
    return dtype != "int32" or mode == "xla"


def noisy(rng, value, count=SAMPLES):
    return [value * math.exp(rng.gauss(0.0, NOISE)) for _ in range(count)]


def discover(benchmark_dir):
    """The suite's benchmarks as asv's benchmarks.json holds them."""
    from asv_runner.discovery import list_benchmarks

    with tempfile.TemporaryFile("w+") as listing:
        list_benchmarks(str(benchmark_dir), listing)
        listing.seek(0)
        return {b["name"]: b for b in json.load(listing)}


def values_for(name, benchmark, newer, rng, grid):
    """(result, samples, number) per parameter combination, in asv's order."""
    import ast
    import itertools

    combos = list(itertools.product(*[[ast.literal_eval(v) for v in values]
                                       for values in benchmark["params"]])) or [()]
    names = benchmark["param_names"]
    result, samples, number = [], [], []
    for combo in combos:
        p = dict(zip(names, combo))
        value, timed = None, False
        if name == "multiply.Multiply.time_multiply":
            if p["device"] == "cpu" or measured_on_gpu(p["dtype"], p["mode"]):
                value, timed = model_seconds(p["device"], p["size"], p["dtype"], p["mode"],
                                             newer, grid), True
        elif name == "wait.Wait.time_wait":
            if p["device"] == "cpu" or p["dtype"] == "float32":
                value, timed = WAIT[p["device"]], True
        elif name == "multiply.Speedup.track_gpu_speedup":
            if measured_on_gpu(p["dtype"], p["mode"]):
                cpu = model_seconds("cpu", p["size"], p["dtype"], p["mode"], newer, grid)
                gpu = model_seconds("gpu", p["size"], p["dtype"], p["mode"], newer, grid)
                value = noisy(rng, cpu / gpu, 1)[0]
        elif name == "multiply.Bandwidth.track_effective_bandwidth":
            seconds = model_seconds(p["device"], p["size"], "float32", p["mode"], newer, grid)
            value = noisy(rng, grid.bytes_moved(p["size"], "float32") / seconds / 1e9, 1)[0]
        elif name == "reference.NumpyScale.track_numpy_scale_bandwidth":
            value = noisy(rng, NUMPY_SCALE / 1e9, 1)[0]
        elif name == "reference.StreamScale.track_scale_bandwidth":
            value = noisy(rng, STREAM_SCALE / 1e9, 1)[0]
        elif name == "reference.StreamScaleInPlace.track_scale_bandwidth":
            value = noisy(rng, STREAM_SCALE_IN_PLACE / 1e9, 1)[0]
        elif name == "seed.SeedScript.track_reported_speedup":
            value = noisy(rng, SEED_REPORTED_SPEEDUP, 1)[0]
        elif name == "seed.SeedScript.track_gpu_calls_on_a_gpu":
            value = 0.0
        else:
            value = None  # a benchmark the model does not cover: recorded as skipped
        if timed:
            result.append(True)
            samples.append(noisy(rng, value))
            number.append(1)
        else:
            result.append(math.nan if value is None else value)
            samples.append(None)
            number.append(None)
    return result, samples, number


def gpu_checks_record(checks):
    """What the GPU self-check records on the model's machine: its own decisions, fed
    the facts a CUDA machine shows (SYNTHETIC facts)."""
    gpu = "/job:localhost/replica:0/task:0/device:GPU:0"
    cpu = "/job:localhost/replica:0/task:0/device:CPU:0"
    outcome = [checks.decide_listed([f"/physical_device:GPU:0 ({GPU_NAME})"]),
               checks.decide_wait_placement({"Slice": gpu}),
               checks.decide_memory(16 * 2**30, "SYNTHETIC model")]
    outcome += checks.decide_wait({
        "sizes": (2048, 8192), "short": 1, "long": 8,
        "waited": {"small": 1.6e-3, "big_short": 3.2e-3, "big_long": 24e-3},
        "issued_big_long": 0.4e-3, "read": {"small": 30e-6, "big": 31e-6}})
    for device in ("cpu", "gpu"):
        canary = ("InvalidArgumentError: Detected unsupported operations when trying to compile "
                  f"graph on XLA_{device.upper()}_JIT: AsString")
        outcome.append(checks.decide_xla(device, {"multiply_error": None, "canary_error": canary}))
    for dtype in ("int32", "float32"):
        for mode in ("eager", "function", "xla", "graph_loop"):
            on_gpu = measured_on_gpu(dtype, mode)
            outcome.append(checks.decide_placement(dtype, mode, {
                "device": gpu, "backing_device": gpu if on_gpu else cpu,
                "kernel_host_memory": None if mode == "xla" else not on_gpu}))
    record = checks.as_record(outcome, "Slice")
    record["distributions"] = {"tensorflow": "SYNTHETIC"}
    return record


def main():
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(HERE))
    from asv.results import Results
    from asv.runner import BenchmarkResult
    from stackrepo import make_stack_repo

    from benchmarks import checks, grid

    rng = random.Random(SEED)
    benchmarks = discover(ROOT / "benchmarks")
    if OUT.exists():
        shutil.rmtree(OUT)
    machine_dir = OUT / MACHINE
    machine_dir.mkdir(parents=True)
    (OUT / "benchmarks.json").write_text(json.dumps({**benchmarks, "version": 2}, indent=1))
    (machine_dir / "machine.json").write_text(json.dumps({
        "machine": MACHINE, "arch": "arm64", "cpu": "SYNTHETIC model, not a measurement",
        "gpu": GPU_NAME, "num_cpu": "8", "os": "SYNTHETIC", "ram": "34359738368",
        "version": 1}, indent=4))
    with tempfile.TemporaryDirectory() as scratch:
        hashes = make_stack_repo(Path(scratch) / "repo")
    ledger = []
    for number, (tag, commit) in enumerate(hashes.items()):
        newer = number > 0
        when = datetime.datetime(2026, 1, 1 + number, tzinfo=datetime.timezone.utc)
        results = Results({"machine": MACHINE, "python": "3.11"}, {}, commit,
                          int(when.timestamp() * 1000), "3.11", ENV_NAME, {})
        for name, benchmark in sorted(benchmarks.items()):
            result, samples, counts = values_for(name, benchmark, newer, rng, grid)
            results.add_result(benchmark, BenchmarkResult(
                result=result, samples=samples, number=counts, errcode=0,
                stderr="SYNTHETIC model, not a measurement", profile=None),
                started_at=when, duration=0.0, record_samples=True)
        results.save(str(OUT))
        ledger.append({"label": tag, "commit": commit, "env_name": ENV_NAME,
                       "installed": {"tensorflow": "SYNTHETIC"}, "synthetic": True,
                       "gpu_checks": gpu_checks_record(checks)})
    (machine_dir / "installed-versions.jsonl").write_text(
        "".join(json.dumps(entry, sort_keys=True) + "\n" for entry in ledger))
    print(f"wrote {OUT}: SYNTHETIC results of {len(benchmarks)} benchmarks x {len(hashes)} stacks")


if __name__ == "__main__":
    main()
