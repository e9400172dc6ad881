"""What the comparator benchmarks share: skips with reasons, the placement proof, the grid,
and the import rules: importing the suite needs no comparator, a comparator case never
imports TensorFlow, and the forkserver may import the frameworks before forking.

Framework-specific behaviour (the wait, each mode's result) is in test_torch_multiply.py,
test_jax_multiply.py and test_numpy_multiply.py; the tests here need none of them
except where marked.
"""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import allocator, comparators, grid, jax_multiply, numpy_multiply, torch_multiply
from benchmarks.timing import InTurn

ROOT = Path(__file__).resolve().parents[2]
HAS_TORCH = importlib.util.find_spec("torch") is not None
HAS_JAX = importlib.util.find_spec("jax") is not None
COMPARATORS = {
    "torch_multiply": torch_multiply.TorchMultiply,
    "jax_multiply": jax_multiply.JaxMultiply,
    "numpy_multiply": numpy_multiply.NumpyMultiply,
}


def python(code, env=None):
    """Run `code` in a fresh interpreter at the checkout's root; its stdout lines."""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines(), done.stderr


# --- the grid -------------------------------------------------------------------------


@pytest.mark.parametrize("benchmark", COMPARATORS.values(), ids=COMPARATORS.keys())
def test_comparators_share_tensorflows_sizes_and_dtypes(benchmark):
    devices, sizes, dtypes, modes = benchmark.params
    assert benchmark.param_names == ["device", "size", "dtype", "mode"]
    assert sizes == grid.SIZES and dtypes == grid.DTYPES
    assert all(device in grid.DEVICE_KIND for device in devices)
    assert all(mode in grid.MODE_KIND for mode in modes)


def test_every_framework_has_an_eager_mode_to_set_against_tensorflows():
    for benchmark in COMPARATORS.values():
        assert "eager" in benchmark.params[3]
    assert grid.TORCH_DEVICES == ["cpu", "mps", "cuda"]
    assert grid.JAX_DEVICES == ["cpu", "gpu"]
    assert grid.JAX_MODES == ["eager", "jit", "fori_loop"]
    # The compiled loop is JAX's graph_loop, a per-op jit its function/xla.
    assert grid.MODE_KIND["fori_loop"] == grid.MODE_KIND["graph_loop"]
    assert grid.MODE_KIND["jit"] == grid.MODE_KIND["function"] == grid.MODE_KIND["xla"]


@pytest.mark.parametrize("benchmark", COMPARATORS.values(), ids=COMPARATORS.keys())
def test_knobs_and_docstrings_match_multiply(benchmark):
    from benchmarks import multiply

    assert (benchmark.rounds, benchmark.repeat) == (multiply.Multiply.rounds,
                                                   multiply.Multiply.repeat)
    assert benchmark.version and benchmark.__doc__ and benchmark.time_multiply.__doc__
    # The shared base has no time_ method: asv would discover it as a benchmark.
    assert not [name for name in dir(comparators.ComparatorMultiply)
                if name.startswith(("time_", "track_", "mem_", "peakmem_"))]


# --- skips with their reasons ----------------------------------------------------------


def test_a_missing_framework_is_named(monkeypatch):
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *args: None if name == "torch" else object())
    assert comparators.not_installed("torch", "PyTorch") == (
        "PyTorch is not installed in this environment")
    assert comparators.not_installed("numpy", "numpy") is None


@pytest.mark.parametrize("module,framework", [(torch_multiply, "PyTorch"), (jax_multiply, "JAX"),
                                              (numpy_multiply, "numpy")])
def test_each_comparator_is_skipped_without_its_framework(monkeypatch, module, framework):
    name = {"PyTorch": "torch", "JAX": "jax", "numpy": "numpy"}[framework]
    monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda wanted, *args: None if wanted == name else object())
    reason = module.skip_reason.__wrapped__("cpu", 2, "float32", "eager")
    assert reason == f"{framework} is not installed in this environment"


def test_a_size_that_does_not_fit_is_skipped_with_the_figure(monkeypatch):
    monkeypatch.setattr(comparators, "free_host_memory", lambda: 100 * 2**20)
    assert comparators.memory_reason("cpu", 4096, "float32") == (
        "4096x4096 float32 needs ~256 MiB, 100 MiB free")
    assert comparators.memory_reason("cpu", 32, "float32") is None


def test_an_nvidia_gpus_own_memory_guards_gpu_cases(monkeypatch):
    monkeypatch.setattr(comparators, "free_host_memory", lambda: 2**40)
    monkeypatch.setattr(comparators, "free_gpu_memory", lambda: 100 * 2**20)
    monkeypatch.setattr(comparators.sys, "platform", "linux")
    for device in ("cuda", "gpu"):
        assert "100 MiB free" in comparators.memory_reason(device, 4096, "float32")
    assert comparators.memory_reason("cpu", 4096, "float32") is None


@pytest.fixture(autouse=True)
def settings_applied(monkeypatch):
    """What setup asked of the allocator, in order with the block's build; this test
    process's own malloc is left as it is."""
    calls = []
    monkeypatch.setattr(comparators, "reuse_freed_memory", lambda: calls.append("malloc"))
    return calls


class FakeMultiply(comparators.ComparatorMultiply):
    """A comparator whose skip and block the test decides."""

    params = [["cpu", "gpu"], grid.SIZES, grid.DTYPES, ["eager"]]
    reason = None
    placed = None

    def __init__(self, calls=None):
        self.calls = [] if calls is None else calls

    def skip_reason(self, device, size, dtype, mode):
        self.calls.append("skip_reason")
        return self.reason

    def block_runner(self, device, size, dtype, mode):
        self.calls.append("block")
        self.warm_ups = 0

        def make_block(copy):
            def block():
                pass

            def warm_up():
                self.warm_ups += 1

            block.ops, block.copy, block.warm_up = 50, copy, warm_up
            return block

        blocks = InTurn(make_block(copy) for copy in range(3))
        blocks.placed = self.placed or device
        return blocks


def test_setup_skips_with_the_reason_before_building_anything():
    bench = FakeMultiply()
    bench.reason = "no gpu device for JAX: Unknown backend"
    with pytest.raises(NotImplementedError, match="Unknown backend"):
        bench.setup("gpu", 2, "float32", "eager")
    assert not hasattr(bench, "block")


def test_a_result_living_on_another_device_is_not_measured_under_this_one():
    bench = FakeMultiply()
    bench.placed = "cpu"
    with pytest.raises(NotImplementedError, match="the gpu multiply's result lives on cpu"):
        bench.setup("gpu", 2, "float32", "eager")


def test_setup_applies_the_engines_malloc_settings_before_anything_else(settings_applied):
    # Before the skip's checks too: JAX's device query starts its threads, and a thread
    # with a malloc arena of its own keeps it (allocator.py).
    FakeMultiply(settings_applied).setup("cpu", 2, "float32", "eager")
    assert settings_applied == ["malloc", "skip_reason", "block"]


def test_setup_hands_asv_a_per_op_clock():
    bench = FakeMultiply()
    bench.setup("cpu", 2, "float32", "eager")
    import time

    assert bench.timer() < time.perf_counter() / 49
    # asv times right after setup: the sample starts warm (grid.warm_up_parts).
    assert bench.warm_ups == 1


def test_each_sample_takes_the_next_copy_of_the_input_in_turn():
    # asv runs setup before every sample; the blocks are built once (cached) and each
    # setup hands the next copy's block to the sample, as TensorFlow's engine does.
    bench, blocks = FakeMultiply(), None

    def cached(device, size, dtype, mode, built=FakeMultiply.block_runner):
        nonlocal blocks
        blocks = blocks or built(bench, device, size, dtype, mode)
        return blocks

    bench.block_runner = cached
    taken = []
    for _ in range(4):
        bench.setup("cpu", 2, "float32", "eager")
        taken.append(bench.block.copy)
    assert taken == [0, 1, 2, 0]


def test_a_comparators_blocks_run_on_copies_of_the_input_of_their_own(monkeypatch):
    np = numpy_multiply.load_numpy()
    seen, real = [], np.multiply

    def recording(x, factor):
        seen.append(id(x))
        return real(x, factor)

    monkeypatch.setattr(np, "multiply", recording)
    numpy_multiply.block_runner.cache_clear()
    try:
        blocks = numpy_multiply.block_runner("cpu", 512, "float32", "eager")
    finally:
        monkeypatch.undo()
        numpy_multiply.block_runner.cache_clear()
    copies = grid.input_copies(512, "float32")
    assert copies > 1 and len(blocks.blocks) == copies
    assert len({block.ops for block in blocks.blocks}) == 1
    # Copy 0 asked for as block_runner and every other caller ask (the cache keys on the
    # arguments as written).
    inputs = [numpy_multiply.input_array("cpu", 512, "float32")] + [
        numpy_multiply.input_array("cpu", 512, "float32", copy) for copy in range(1, copies)]
    assert len({id(x) for x in inputs}) == copies and set(seen) == {id(x) for x in inputs}
    # Each copy's memory is its own.
    assert not any(np.shares_memory(inputs[0], x) for x in inputs[1:])


def _built_turns(monkeypatch, draws):
    """The first copy each of len(draws) builds of a 4-copy comparator block takes, with
    os.urandom returning each draw in turn."""
    draws = iter(draws)
    monkeypatch.setattr(comparators.os, "urandom", lambda n: next(draws).to_bytes(n, "little"))
    runs = [lambda ops: lambda: None] * 4
    return [comparators.multiply_block(runs, lambda r: None, lambda r: "cpu", 2).turn
            for _ in range(3)]


def test_each_round_of_a_comparator_starts_at_a_copy_of_its_own_drawing(monkeypatch):
    # A round is a forked process that builds its blocks anew: starting every round at
    # copy 0, 5-10 samples a round would never reach copies 5-7 of 8.
    assert _built_turns(monkeypatch, [5, 11, 4]) == [1, 3, 0]


# With JAX imported by an earlier test, JAX warns at every fork; the child here runs
# only Python and os.urandom, no JAX.
@pytest.mark.filterwarnings(r"ignore:os\.fork\(\) was called:RuntimeWarning")
def test_a_forked_round_draws_its_first_copy_afresh():
    # `random` would hand every fork its parent's state, so every round the same copy;
    # os.urandom does not. 16 forks all drawing one of 8 copies alike: chance 8 ** -15.
    reads = []
    for _ in range(16):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            runs = [lambda ops: lambda: None] * 8
            turn = comparators.multiply_block(runs, lambda r: None, lambda r: "cpu", 2).turn
            os.write(write, bytes([turn]))
            os._exit(0)
        os.close(write)
        os.waitpid(pid, 0)
        reads.append(os.read(read, 1)[0])
        os.close(read)
    assert len(set(reads)) > 1 and all(0 <= turn < 8 for turn in reads)


def test_the_memory_guard_counts_the_copies_of_the_input(monkeypatch):
    size, dtype = 1000, "float32"
    one = size * size * 4
    copies = grid.input_copies(size, dtype)
    # Room for the input, two results and the allocator's copy, but not the other copies.
    monkeypatch.setattr(comparators, "free_host_memory", lambda: 4 * one)
    assert comparators.memory_reason("cpu", size, dtype) is not None
    monkeypatch.setattr(comparators, "free_host_memory", lambda: (3 + copies) * one)
    assert comparators.memory_reason("cpu", size, dtype) is None


# --- imports ---------------------------------------------------------------------------


def test_a_comparator_case_runs_where_tensorflow_cannot_be_imported():
    # sys.modules[name] = None makes `import name` fail: any TensorFlow import would.
    code = (
        "import sys; sys.modules['tensorflow'] = None\n"
        "from benchmarks import numpy_multiply, torch_multiply, jax_multiply, comparators\n"
        "bench = numpy_multiply.NumpyMultiply()\n"
        "bench.setup('cpu', 32, 'float32', 'eager'); bench.time_multiply('cpu', 32, 'float32', "
        "'eager')\n"
        "print(bench.block.ops > 0)\n"
        "print(sorted(m for m in ('tensorflow', 'torch', 'jax') if sys.modules.get(m)))\n"
    )
    lines, _ = python(code)
    assert lines == ["True", "[]"]


@pytest.mark.skipif(not allocator.glibc_malloc(), reason="glibc's malloc")
@pytest.mark.parametrize("module,cls,mode", [
    ("numpy_multiply", "NumpyMultiply", "eager"),
    pytest.param("jax_multiply", "JaxMultiply", "jit",
                 marks=pytest.mark.skipif(not HAS_JAX, reason="needs JAX")),
])
def test_a_comparators_large_results_land_on_reused_memory(module, cls, mode):
    # A 4096x4096 float32 result is 64 MiB, above any mmap threshold glibc accepts:
    # without the settings each one is a fresh mapping (544 faults per op with numpy's
    # huge pages under THP madvise, 16,385 without them). JAX's too where its threads
    # started before the settings (its skip checks once started them: 16,385 faults per
    # op in every sample, the README's EPYC VM, 2026-12-02). With the settings a few
    # samples of 8 still found their result on fresh pages there (the heap growing, or
    # given back): at least 3 of 8 must not.
    code = (
        "import resource\n"
        f"from benchmarks.{module} import {cls}\n"
        f"bench = {cls}()\n"
        "faults = []\n"
        "for sample in range(8):\n"
        f"    bench.setup('cpu', 4096, 'float32', {mode!r})\n"
        "    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
        f"    bench.time_multiply('cpu', 4096, 'float32', {mode!r})\n"
        "    after = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
        "    faults.append((after - before) / bench.block.ops)\n"
        "print(sorted(faults)[2])\n"
    )
    (faults,), _ = python(code)
    assert float(faults) < 16


def test_importing_the_suite_imports_no_framework():
    # What asv's discovery does in every process: import every module but the preload.
    modules = sorted(p.stem for p in (ROOT / "benchmarks").glob("*.py")
                     if p.stem not in ("__init__", "forkserver_preload"))
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module('benchmarks.' + name)\n"
        "print(sorted(m for m in ('tensorflow', 'torch', 'jax') if m in sys.modules))\n"
    )
    lines, _ = python(code)
    assert lines == ["[]"]


def test_tensorflows_cases_import_no_comparator():
    # TensorFlow itself imports JAX where it is installed (tf.lite's util.py, TF 2.21):
    # the engine's TensorFlow work (benchmarks/engine.py) may load no more frameworks
    # than `import tensorflow` alone does.
    pytest.importorskip("tensorflow")
    frameworks = "print(sorted(m for m in ('tensorflow', 'torch', 'jax') if m in sys.modules))\n"
    bare, _ = python("import sys, tensorflow\n" + frameworks)
    code = (
        "import sys\n"
        "from benchmarks import engine, timing\n"
        "work = engine.Work(timing.QuietGate())\n"
        "case = ('multiply:multiply_block', 'cpu', 2, 'float32', 'eager')\n"
        "work.prepare(*case)\n"
        "work.run(None, *case)\n" + frameworks
    )
    lines, _ = python(code)
    assert lines == bare and "torch" not in lines[0]


@pytest.mark.skipif(not (HAS_TORCH and HAS_JAX), reason="needs PyTorch and JAX installed")
def test_the_forkserver_may_import_torch_and_jax_before_forking():
    # Importing starts no device: PyTorch's CUDA and JAX's backends (whose threads make
    # JAX warn at a fork) start at first use, in the forked case. A warning at the
    # fork below would mean the preload made every benchmark process unsafe.
    code = (
        "import os, sys, warnings\n"
        "sys.modules['tensorflow'] = None  # its import costs seconds and is not at issue\n"
        "warnings.simplefilter('always')\n"
        "import benchmarks.forkserver_preload\n"
        "from benchmarks import jax_multiply\n"
        "import torch\n"
        "print('torch' in sys.modules, 'jax' in sys.modules)\n"
        "print(torch.cuda.is_initialized(), jax_multiply.backends_started())\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    from benchmarks import jax_multiply, torch_multiply\n"
        "    for module in (jax_multiply, torch_multiply):\n"
        "        module.block_runner('cpu', 32, 'float32', 'eager').current()\n"
        "    os._exit(0)\n"
        "print(os.waitpid(pid, 0)[1])\n"
    )
    lines, stderr = python(code)
    assert lines == ["True True", "False False", "0"]
    assert "os.fork() was called" not in stderr


def test_jax_reserves_gpu_memory_on_demand_so_the_guard_sees_the_truth():
    env = {k: v for k, v in os.environ.items() if k != "XLA_PYTHON_CLIENT_PREALLOCATE"}
    done = subprocess.run(
        [sys.executable, "-c", "import benchmarks, os; "
                               "print(os.environ['XLA_PYTHON_CLIENT_PREALLOCATE'])"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "false"
