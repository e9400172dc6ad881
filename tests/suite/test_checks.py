"""The GPU self-check's decisions, driven with what each GPU stack is known to show,
and the checks for real on this machine's TensorFlow.

No GPU runs here: the facts below are what TensorFlow reports on each platform
(sources in benchmarks/checks.py and shared notes): tensorflow-metal by version,
CUDA, and no GPU. A decision that goes wrong on one of them fails here.
"""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import checks, common, grid

ROOT = Path(__file__).resolve().parents[2]
GPU = "/job:localhost/replica:0/task:0/device:GPU:0"
CPU = "/job:localhost/replica:0/task:0/device:CPU:0"


# --- is there a GPU ---------------------------------------------------------------


def test_no_gpu_rules_out_every_gpu_case_with_the_soft_placement_reason():
    listed = checks.decide_listed([])
    assert listed.passed is False and listed.evidence == checks.NO_GPU
    for dtype in grid.DTYPES:
        for mode in grid.MODES:
            assert checks.verdict([listed], "gpu", dtype, mode) == checks.NO_GPU
            assert checks.verdict([listed], "cpu", dtype, mode) is None


def test_a_listed_gpu_is_named():
    listed = checks.decide_listed(["/physical_device:GPU:0 (METAL)"])
    assert listed.passed and "METAL" in listed.evidence


# --- where the multiply runs, per dtype and mode ------------------------------------


def test_int32_mul_keeps_host_memory_on_metal_and_cuda():
    # TensorFlow registers int32 Mul for DEVICE_GPU and DEVICE_DEFAULT (Metal) with
    # HostMemory: placed "on the GPU", computed on the CPU.
    facts = {"device": GPU, "backing_device": CPU, "kernel_host_memory": True}
    for mode in ("eager", "function", "graph_loop"):
        check = checks.decide_placement("int32", mode, facts)
        assert check.passed is False and "host memory" in check.evidence
        assert check.concerns("gpu", "int32", mode) and not check.concerns("gpu", "float32", mode)


def test_int32_under_xla_on_cuda_is_measured_when_its_result_lives_on_the_gpu():
    # XLA's GPU launch keeps only constants and resources in host memory.
    facts = {"device": GPU, "backing_device": GPU, "kernel_host_memory": None}
    assert checks.decide_placement("int32", "xla", facts).passed is True


def test_int32_under_xla_with_a_host_result_is_not():
    facts = {"device": GPU, "backing_device": CPU, "kernel_host_memory": None}
    check = checks.decide_placement("int32", "xla", facts)
    assert check.passed is False and "lives in host memory" in check.evidence


def test_a_soft_placed_multiply_is_not_a_gpu_measurement():
    facts = {"device": CPU, "backing_device": CPU, "kernel_host_memory": False}
    check = checks.decide_placement("float32", "eager", facts)
    assert check.passed is False and "soft placement ran" in check.evidence
    assert "CPU:0" in check.evidence


def test_a_float32_multiply_on_the_gpu_is_measured():
    facts = {"device": GPU, "backing_device": GPU, "kernel_host_memory": False}
    check = checks.decide_placement("float32", "function", facts)
    assert check.passed is True and GPU in check.evidence


def test_a_multiply_that_fails_on_the_gpu_gives_its_error():
    facts = {"error": "InternalError: Metal device lost"}
    check = checks.decide_placement("float32", "graph_loop", facts)
    assert check.passed is False and "Metal device lost" in check.evidence


# --- does XLA really compile ------------------------------------------------------------

METAL_TF_2_10 = ("UnimplementedError: Could not find compiler for platform METAL: NOT_FOUND: "
                 "could not find registered compiler for platform METAL -- check target linkage")
METAL_TF_2_11_TO_2_18 = ("NotFoundError: could not find registered platform with id: "
                         "0x7f8b2c6c1c40 -- check target linkage")
CUDA_CANARY = ("InvalidArgumentError: Detected unsupported operations when trying to compile "
               "graph __inference__as_string_length_17[_XlaMustCompile=true] on XLA_GPU_JIT: "
               "AsString (No registered 'AsString' OpKernel for XLA_GPU_JIT devices)")


@pytest.mark.parametrize("error", [METAL_TF_2_10, METAL_TF_2_11_TO_2_18],
                         ids=["metal-tf2.10", "metal-tf2.11-2.18"])
def test_xla_on_metal_is_skipped_with_the_error_not_failed(error):
    check = checks.decide_xla("gpu", {"multiply_error": error, "canary_error": None})
    assert check.passed is False and "XLA cannot compile for gpu" in check.evidence
    assert error.split(":")[0] in check.evidence
    assert checks.verdict([check], "gpu", "float32", "xla") == check.evidence
    assert checks.verdict([check], "gpu", "float32", "eager") is None


def test_jit_compile_silently_ignored_is_caught_by_the_canary():
    # macOS builds may set compile_with_xla = false (tensorflow PR #59315): the
    # multiply runs, and so does the canary no XLA backend can compile.
    check = checks.decide_xla("gpu", {"multiply_error": None, "canary_error": None})
    assert check.passed is False and "ran without compiling" in check.evidence
    assert checks.verdict([check], "gpu", "int32", "xla") == check.evidence


def test_real_xla_rejects_the_canary():
    check = checks.decide_xla("gpu", {"multiply_error": None, "canary_error": CUDA_CANARY})
    assert check.passed is True and "XLA_GPU_JIT rejected the canary op AsString" in check.evidence


def test_a_canary_failing_for_another_reason_proves_nothing():
    check = checks.decide_xla("cpu", {"multiply_error": None,
                                      "canary_error": "ResourceExhaustedError: OOM"})
    assert check.passed is False and "could not tell" in check.evidence


# --- the wait -------------------------------------------------------------------------


def test_the_first_read_placed_on_the_gpu_is_chosen():
    # No float Slice for DEVICE_DEFAULT in TensorFlow itself: if the plugin lacks one,
    # Slice is soft-placed on the CPU (copying the tensor); StridedSlice may not be.
    facts = {"Slice": CPU, "StridedSlice": GPU}
    check = checks.decide_wait_placement(facts)
    assert check.passed is True and checks.chosen_wait_op(check, facts) == "StridedSlice"


def test_no_read_on_the_gpu_rules_out_every_gpu_case():
    facts = {"Slice": CPU, "StridedSlice": "NotFoundError: no kernel"}
    check = checks.decide_wait_placement(facts)
    assert check.passed is False and "copy the whole tensor" in check.evidence
    assert checks.chosen_wait_op(check, facts) is None
    assert checks.verdict([check], "gpu", "float32", "eager") == check.evidence


def wait_facts(small=1e-3, big_short=2.2e-3, big_long=16e-3, issued=0.3e-3,
               read_small=20e-6, read_big=22e-6):
    return {"sizes": (2048, 8192), "short": 1, "long": 8,
            "waited": {"small": small, "big_short": big_short, "big_long": big_long},
            "issued_big_long": issued, "read": {"small": read_small, "big": read_big}}


def test_an_asynchronous_gpu_whose_wait_covers_the_work_passes():
    waits, reads_one = checks.decide_wait(wait_facts())
    assert waits.passed and reads_one.passed
    assert "asynchronously" in waits.evidence


def test_a_wait_that_returns_before_the_work_is_done_fails():
    # Timing only what issuing costs: flat in the block's length and the tensor's size.
    waits, _ = checks.decide_wait(wait_facts(small=0.35e-3, big_short=0.1e-3, big_long=0.4e-3,
                                             issued=0.3e-3))
    assert waits.passed is False and "does not cover the device's work" in waits.evidence
    assert checks.verdict([waits], "gpu", "float32", "graph_loop") == waits.evidence


def test_a_synchronous_device_passes_nothing_is_left_to_wait_for():
    waits, _ = checks.decide_wait(wait_facts(issued=15e-3))
    assert waits.passed and "synchronously" in waits.evidence


def test_a_soft_placed_read_that_copies_the_tensor_fails():
    # Copying 256 MiB back per wait instead of 4 bytes.
    _, reads_one = checks.decide_wait(wait_facts(read_big=30e-3))
    assert reads_one.passed is False and "copies more than one element" in reads_one.evidence


# --- memory ---------------------------------------------------------------------------

VM_STAT = """Mach Virtual Memory Statistics: (page size of 16384 bytes)
Pages free:                               10000.
Pages active:                            400000.
Pages inactive:                           20000.
Pages speculative:                         3000.
Pages throttled:                              0.
Pages wired down:                        150000.
Pages purgeable:                           7000.
"""


def test_macos_memory_is_what_the_kernel_can_give_not_half_of_ram():
    assert common.parse_vm_stat(VM_STAT) == (10000 + 20000 + 3000 + 7000) * 16384
    assert common.parse_vm_stat("") is None


def test_tensorflow_allocates_gpu_memory_on_demand_so_the_guard_sees_the_truth():
    # By default TensorFlow maps nearly all GPU memory at its first GPU op and
    # nvidia-smi reports only its leftover; the suite sets allow-growth first.
    code = "import benchmarks, os; print(os.environ.get('TF_FORCE_GPU_ALLOW_GROWTH'))"
    env = {k: v for k, v in os.environ.items() if k != "TF_FORCE_GPU_ALLOW_GROWTH"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "true"


def test_nvidia_smi_asks_about_tensorflows_gpu():
    assert common.visible_nvidia_index({}) == "0"
    assert common.visible_nvidia_index({"CUDA_VISIBLE_DEVICES": "3,1"}) == "3"


def test_the_guard_skips_sizes_that_do_not_fit_with_the_figure():
    reason = common.memory_skip_reason(4096, "float32", 100 * 2**20)
    assert reason == "4096x4096 float32 needs ~256 MiB, 100 MiB free"
    assert common.memory_skip_reason(4096, "float32", None) is None
    check = checks.decide_memory(None, "no nvidia-smi and not a Mac")
    assert check.passed is False and "not guarded" in check.evidence and check.gates == []


# --- the record -------------------------------------------------------------------------


def test_a_record_says_for_every_case_why_not(tmp_path):
    outcome = [checks.decide_listed(["GPU:0"]),
               checks.decide_placement("int32", "eager", {"device": GPU, "backing_device": CPU,
                                                          "kernel_host_memory": True}),
               checks.decide_xla("gpu", {"multiply_error": METAL_TF_2_11_TO_2_18})]
    record = checks.as_record(outcome, "Slice")
    assert record["verdicts"]["gpu"]["int32"]["eager"].startswith("the GPU Mul kernel")
    assert record["verdicts"]["gpu"]["float32"]["xla"].startswith("XLA cannot compile")
    assert record["verdicts"]["gpu"]["float32"]["eager"] is None
    path = tmp_path / "record.json"
    checks.save_record(record, path)
    assert checks.recorded({checks.RECORD_ENV: str(path)}) == json.loads(path.read_text())
    assert checks.checks_of(record)[2].concerns("gpu", "int32", "xla")


def test_a_record_for_another_tensorflow_is_ignored(tmp_path):
    record = checks.as_record([checks.decide_listed([])], None)
    record["distributions"] = {"tensorflow": "1.0.0"}
    path = tmp_path / "record.json"
    checks.save_record(record, path)
    assert checks.recorded({checks.RECORD_ENV: str(path)}) is None


def test_a_case_the_record_rules_out_is_skipped_without_importing_tensorflow(tmp_path):
    pytest.importorskip("tensorflow")
    path = tmp_path / "record.json"
    checks.save_record(checks.as_record([checks.decide_listed([])], None), path)
    code = ("import sys; from benchmarks import checks; "
            "print(checks.skip_reason('gpu', 4096, 'float32', 'eager')); "
            "print('tensorflow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, checks.RECORD_ENV: str(path)}, check=True)
    assert out.stdout.splitlines() == [checks.NO_GPU, "False"]


# --- for real, on this machine's TensorFlow ---------------------------------------------

HAS_TF = importlib.util.find_spec("tensorflow") is not None
HAS_GPU = HAS_TF and bool(common.load_tensorflow().config.list_physical_devices("GPU"))
needs_tf = pytest.mark.skipif(not HAS_TF, reason="TensorFlow is not installed")


@pytest.fixture(scope="module")
def here():
    return checks.run_checks()


@needs_tf
def test_int32_mul_kernel_keeps_its_output_in_host_memory():
    # The registry TensorFlow itself consults: GPU builds register int32 Mul with
    # HostMemory; CPU-only builds still carry the DEVICE_DEFAULT kernel
    # PluggableDevices (Metal) fall back to, which is HostMemory too.
    assert checks.mul_kernel_host_memory("int32") is True
    assert checks.mul_kernel_host_memory("float32") in ((False,) if HAS_GPU else (False, None))


@needs_tf
def test_xla_really_compiles_on_this_cpu(here):
    (xla,) = [c for c in here["checks"] if c["name"] == "xla compiles on cpu"]
    assert xla["passed"] is True and "rejected the canary op AsString" in xla["evidence"]


@needs_tf
@pytest.mark.skipif(HAS_GPU, reason="this machine has a GPU")
def test_without_a_gpu_every_gpu_check_is_listed_as_not_run(here):
    names = [c["name"] for c in here["checks"]]
    assert set(checks.GPU_ONLY_CHECKS) <= set(names)
    assert all(c["passed"] is None for c in here["checks"] if c["name"] in checks.GPU_ONLY_CHECKS)
    assert {r for by_mode in here["verdicts"]["gpu"].values() for r in by_mode.values()} == {
        checks.NO_GPU}


@needs_tf
@pytest.mark.skipif(HAS_GPU, reason="this machine has a GPU")
@pytest.mark.parametrize("dtype", grid.DTYPES)
def test_gpu_cases_are_skipped_with_the_reason_before_anything_is_timed(dtype):
    from benchmarks import multiply, wait

    bench = multiply.Multiply()
    with pytest.raises(NotImplementedError, match="no GPU visible"):
        bench.setup("gpu", 2, dtype, "eager")
    assert not hasattr(bench, "block")
    with pytest.raises(NotImplementedError, match="no GPU visible"):
        multiply.Speedup().setup(2, dtype, "eager")
    with pytest.raises(NotImplementedError, match="no GPU visible"):
        wait.Wait().setup("gpu", dtype)


@pytest.mark.skipif(not HAS_GPU, reason="needs a GPU")
def test_gpu_float32_multiply_output_lives_on_the_gpu(here):
    assert here["verdicts"]["gpu"]["float32"]["eager"] is None
