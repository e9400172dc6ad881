"""Which cases may be measured here, and why not: the GPU self-check and the memory guard.

A gpu number is recorded only where every check that concerns it passed:

  gpu listed             TensorFlow lists a GPU; else soft placement runs '/GPU:0' on the CPU
  <dtype> <mode> on gpu  a '/GPU:0' multiply in that mode is placed on the GPU and its output
                         lives in GPU memory (int32's Mul kernel keeps it in host memory and
                         computes on the CPU; under XLA it may not): per dtype and mode
  xla compiles on <dev>  jit_compile=True really compiles there: the multiply runs, and a
                         canary op XLA has no kernel for (AsString) is rejected. macOS builds
                         may ignore jit_compile silently (tensorflow PR #59315)
  wait stays on gpu      the read that ends every block is placed on the GPU; a soft-placed
                         one would copy the whole tensor to the host first
  wait reads one element reading back a large tensor costs what reading a small one does
  wait waits             a block's time grows with its length and with the tensor's size
  memory                 how much memory this process can still get (the per-size guard)

Each check is a probe, which asks TensorFlow and returns plain facts, and a decision, a pure
function of those facts: the tests drive the decisions with the facts each GPU stack is
known to produce (tensorflow-metal by version, CUDA, none). Python 3.8 syntax: the oldest
stacks run it.

`tfgpubench run` runs the checks in each stack's environment before measuring it, records
them beside the results, and hands them to asv's benchmark processes through
TFGPUBENCH_GPU_CHECKS: a case a check rules out is then skipped without importing
TensorFlow. Without a record, a process runs the checks itself, once.
"""

import functools
import json
import os
import re
import sys
import time
from dataclasses import asdict, dataclass, field

from . import common
from .grid import DEVICES, DTYPES, MODES

# Where a process looks for the record: $TFGPUBENCH_GPU_CHECKS, else this file in
# its environment's prefix (asv's environment: the installer writes it there).
RECORD_ENV = "TFGPUBENCH_GPU_CHECKS"
RECORD_FILE = "tfgpubench-gpu-checks.json"
RECORD_FORMAT = 1
NO_GPU = "no GPU visible to TensorFlow: soft placement would run '/GPU:0' on the CPU"
# Distributions that provide `import tensorflow`; a record is used only by the same ones.
TENSORFLOW_DISTRIBUTIONS = ("tensorflow", "tensorflow-cpu", "tensorflow-macos", "tensorflow-intel",
                            "tensorflow-metal")
# Sizes the wait is checked at: the largest that fits, and one with 16x fewer bytes.
WAIT_CHECK_SIZES = (8192, 4096, 2048)
WAIT_SHORT, WAIT_LONG = 1, 8
GPU_ONLY_CHECKS = ["wait stays on gpu", "memory", "wait waits", "wait reads one element",
                   "xla compiles on gpu"] + [f"{d} {m} on gpu" for d in DTYPES for m in MODES]


@dataclass
class Check:
    """One check's outcome. passed: True, False, or None when it was not run.

    evidence says what was seen; for a failed check it is phrased as the
    reason the cases it gates are skipped. gates: the (device, dtype, mode)
    patterns it concerns, None matching anything.
    """

    name: str
    passed: object
    evidence: str
    gates: list = field(default_factory=list)

    def concerns(self, device, dtype, mode):
        return any(
            all(want is None or want == have for want, have in zip(gate, (device, dtype, mode)))
            for gate in self.gates
        )


def _first_line(error):
    text = str(error).strip()
    return text.splitlines()[0][:300] if text else ""


def describe_error(error):
    return f"{type(error).__name__}: {_first_line(error)}"


# --- decisions: pure functions of what TensorFlow showed ------------------------------


def decide_listed(gpus):
    """gpus: names of the GPUs TensorFlow lists, with details where it gives them."""
    if not gpus:
        return Check("gpu listed", False, NO_GPU, [("gpu", None, None)])
    return Check("gpu listed", True, "TensorFlow lists " + "; ".join(gpus), [("gpu", None, None)])


def decide_placement(dtype, mode, facts):
    """Whether a '/GPU:0' multiply of `dtype` in `mode` computes on the GPU.

    facts: {"error": text or None, "device": where the op was placed,
    "backing_device": where its output lives, "kernel_host_memory": True/False/
    None from the kernel registry (None: no GPU kernel; not asked for xla)}.
    """
    name = f"{dtype} {mode} on gpu"
    gates = [("gpu", dtype, mode)]
    if facts.get("error"):
        return Check(name, False, f"a '/GPU:0' {dtype} {mode} multiply failed: {facts['error']}",
                     gates)
    placed, lives = facts.get("device") or "", facts.get("backing_device") or ""
    if "GPU" not in placed.upper():
        return Check(name, False, f"soft placement ran the '/GPU:0' {dtype} {mode} multiply on "
                                  f"{placed or 'an unknown device'}", gates)
    if mode != "xla" and facts.get("kernel_host_memory"):
        return Check(name, False, f"the GPU Mul kernel for {dtype} keeps inputs and output in host "
                                  "memory and computes on the CPU (kernel registry)", gates)
    if "GPU" not in lives.upper():
        return Check(name, False, f"the {dtype} {mode} result lives in host memory ({lives}): "
                                  "it was computed on the CPU", gates)
    return Check(name, True, f"placed on {placed}, result in {lives}", gates)


def decide_xla(device, facts):
    """Whether jit_compile=True really compiles on `device`.

    facts: {"multiply_error": text or None, "canary_error": text or None}:
    what running the jit-compiled multiply, and a jit-compiled function with
    an op XLA cannot compile (AsString), raised.
    """
    name = f"xla compiles on {device}"
    gates = [(device, None, "xla")]
    if facts.get("multiply_error"):
        return Check(name, False, f"XLA cannot compile for {device}: {facts['multiply_error']}",
                     gates)
    canary = facts.get("canary_error")
    if not canary:
        return Check(name, False, f"jit_compile=True ran without compiling on {device}: an op XLA "
                                  "cannot compile (AsString) ran anyway, so xla numbers would be "
                                  "plain tf.function numbers", gates)
    rejected = re.search(r"on (XLA_\w+): (\w+)", canary)
    if rejected:
        return Check(name, True, f"the multiply compiled; {rejected.group(1)} rejected the canary "
                                 f"op {rejected.group(2)}", gates)
    if "XLA" in canary:
        return Check(name, True, f"the multiply compiled; the canary was rejected: {canary}", gates)
    return Check(name, False, f"could not tell whether XLA compiles on {device}: the canary "
                              f"failed otherwise: {canary}", gates)


def decide_wait_placement(facts):
    """facts: {op name: the device its one-element read was placed on}, in order of
    preference. Passes with the first op placed on the GPU."""
    gates = [("gpu", None, None)]
    for op, placed in facts.items():
        if "GPU" in (placed or "").upper():
            return Check("wait stays on gpu", True, f"{op} reads one element on {placed}", gates)
    seen = ", ".join(f"{op} on {placed}" for op, placed in facts.items())
    return Check("wait stays on gpu", False, "no one-element read stays on the GPU (" + seen +
                 "): the wait would copy the whole tensor to the host every block", gates)


def chosen_wait_op(check, facts):
    """The op decide_wait_placement passed with, or None."""
    if not check.passed:
        return None
    return next(op for op, placed in facts.items() if "GPU" in (placed or "").upper())


def decide_wait(facts):
    """Whether the wait covers the device's work and reads back one element.

    facts: {"sizes": (small, big), "waited": {"small": s, "big_short": s,
    "big_long": s}, "issued_big_long": s, "read": {"small": s, "big": s},
    "short": ops, "long": ops}: seconds of a block waited for, of issuing the
    long block without the wait, and of the wait alone on a computed tensor.
    Returns (waits, reads_one).
    """
    gates = [("gpu", None, None)]
    small, big = facts["sizes"]
    waited, read = facts["waited"], facts["read"]
    longer = facts["long"] / facts["short"]
    by_length = waited["big_long"] / waited["big_short"]
    by_size = waited["big_long"] / waited["small"]
    bytes_ratio = (big / small) ** 2
    issue_share = facts["issued_big_long"] / waited["big_long"]
    evidence = (
        f"{facts['long']} ops of {big}x{big} take {by_length:.1f}x as long as {facts['short']} "
        f"(ideal {longer:.0f}x) and {by_size:.1f}x as long as at {small}x{small} "
        f"({bytes_ratio:.0f}x the bytes); issuing them without the wait takes "
        f"{issue_share:.0%} of the waited time"
        + (" (the device ran them asynchronously)" if issue_share < 0.5 else
           " (the device ran them synchronously: nothing is left to wait for)")
    )
    waits_ok = by_length >= longer / 2 and by_size >= bytes_ratio / 4
    if not waits_ok:
        evidence = "the wait does not cover the device's work: " + evidence
    waits = Check("wait waits", waits_ok, evidence, gates)
    read_ratio = read["big"] / read["small"]
    read_ok = read_ratio <= 3 or read["big"] - read["small"] < 50e-6
    read_evidence = (
        f"reading back a computed {big}x{big} tensor takes {read['big'] * 1e6:.0f} us, a "
        f"{small}x{small} one {read['small'] * 1e6:.0f} us"
    )
    if not read_ok:
        read_evidence = "the wait copies more than one element: " + read_evidence
    return waits, Check("wait reads one element", read_ok, read_evidence, gates)


def decide_memory(available, method):
    """Memory this process can still get on the GPU, for the per-size guard (gates nothing:
    the guard skips the sizes that do not fit, with the figure)."""
    if available is None:
        return Check("memory", False, f"unknown ({method}): sizes are not guarded before "
                                      "allocation and may fail instead of being skipped", [])
    return Check("memory", True, f"{available / 2**30:.1f} GiB available to this process "
                                 f"({method})", [])


def verdict(checks, device, dtype, mode):
    """Why (device, dtype, mode) must not be measured, from the first failed check that
    concerns it, or None."""
    for check in checks:
        if check.passed is False and check.concerns(device, dtype, mode):
            return check.evidence
    return None


# --- probes: ask TensorFlow -----------------------------------------------------------


def _device_details(tf, device):
    try:
        details = tf.config.experimental.get_device_details(device)
    except (AttributeError, ValueError):
        details = {}
    name = details.get("device_name")
    return f"{device.name} ({name})" if name else device.name


def probe_gpus():
    tf = common.load_tensorflow()
    return [_device_details(tf, d) for d in tf.config.list_physical_devices("GPU")]


def mul_kernel_host_memory(dtype, device_type="GPU"):
    """Whether the Mul kernel TensorFlow picks for `dtype` on `device_type` keeps its
    output in host memory, from TensorFlow's kernel registry.

    A device's own kernel wins; PluggableDevices (Metal) fall back to the
    DEVICE_DEFAULT kernel, which for int32 is a HostMemory CPU kernel.
    Returns None when neither is registered (the op cannot run there).
    """
    tf = common.load_tensorflow()
    from tensorflow.python.framework import kernels

    wanted = tf.as_dtype(dtype).as_datatype_enum
    by_device = {}
    for kernel in kernels.get_registered_kernels_for_op("Mul").kernel:
        allowed = [
            t for c in kernel.constraint if c.name == "T" for t in c.allowed_values.list.type
        ]
        if wanted in allowed:
            by_device[kernel.device_type] = "z" in kernel.host_memory_arg
    for candidate in (device_type, "DEFAULT"):
        if candidate in by_device:
            return by_device[candidate]
    return None


def probe_placement(dtype, mode):
    tf = common.load_tensorflow()
    facts = {"kernel_host_memory": None if mode == "xla" else mul_kernel_host_memory(dtype)}
    try:
        x = common.input_tensor("gpu", 2, dtype)
        make_run, _ = common.make_multiply_run(mode)
        with tf.device(common.TF_DEVICE["gpu"]):
            y = make_run(x, 1)()
    except Exception as error:  # noqa: BLE001  (any failure is the finding)
        facts["error"] = describe_error(error)
        return facts
    facts["device"] = y.device
    facts["backing_device"] = getattr(y, "backing_device", y.device)
    return facts


def _as_string_length(x):
    # AsString has no XLA kernel on any device: a really compiled function must fail.
    return common.tf.strings.length(common.tf.strings.as_string(x))


def probe_xla(device):
    tf = common.load_tensorflow()
    facts = {"multiply_error": None, "canary_error": None}
    x = common.input_tensor(device, 2, "float32")
    attempts = (("multiply_error", common._multiply), ("canary_error", _as_string_length))
    for key, function in attempts:
        try:
            with tf.device(common.TF_DEVICE[device]):
                tf.function(function, jit_compile=True)(x)
        except Exception as error:  # noqa: BLE001  (which error it is, is the finding)
            facts[key] = describe_error(error)
            if key == "multiply_error":
                break
    return facts


def probe_wait_placement():
    tf = common.load_tensorflow()
    x = common.input_tensor("gpu", 2, "float32")
    placed = {}
    for op in common.WAIT_OPS:
        try:
            with tf.device(common.TF_DEVICE["gpu"]):
                placed[op] = common.first_element(x, op).device
        except Exception as error:  # noqa: BLE001
            placed[op] = describe_error(error)
    return placed


def _median_seconds(call, repeats=5):
    call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def probe_wait(op, available):
    """Time blocks on the GPU with and without the wait, at two sizes (see decide_wait)."""
    tf = common.load_tensorflow()
    big = next((s for s in WAIT_CHECK_SIZES
                if common.memory_skip_reason(s, "float32", available) is None), None)
    if big is None:
        return None
    small = big // 4
    scope = common.TF_DEVICE["gpu"]

    def block(size, ops, wait=True):
        make_run, _ = common.make_multiply_run("eager")
        run = make_run(common.input_tensor("gpu", size, "float32"), ops)

        def call():
            with tf.device(scope):
                result = run()
                if wait:
                    common.wait_for(result, op)
            return result
        return call

    issue_only = block(big, WAIT_LONG, wait=False)

    def issued():
        # Time the issuing alone, then wait outside the clock for the next round.
        start = time.perf_counter()
        result = issue_only()
        elapsed = time.perf_counter() - start
        with tf.device(scope):
            common.wait_for(result, op)
        return elapsed

    issued()
    computed = {size: block(size, 1)() for size in (small, big)}

    def read(size):
        def call():
            with tf.device(scope):
                common.wait_for(computed[size], op)
        return call

    return {
        "sizes": (small, big), "short": WAIT_SHORT, "long": WAIT_LONG,
        "waited": {"small": _median_seconds(block(small, WAIT_LONG)),
                   "big_short": _median_seconds(block(big, WAIT_SHORT)),
                   "big_long": _median_seconds(block(big, WAIT_LONG))},
        "issued_big_long": sorted(issued() for _ in range(5))[2],
        "read": {"small": _median_seconds(read(small)), "big": _median_seconds(read(big))},
    }


def available_gpu_memory():
    """(bytes or None, how it was found) this process can still allocate on the GPU."""
    if sys.platform == "darwin":
        return common.free_host_memory(), "unified memory: free + inactive + purgeable (vm_stat)"
    free = common.free_gpu_memory()
    if free is not None:
        return free, (f"nvidia-smi memory.free of GPU {common.visible_nvidia_index()}; "
                      "TensorFlow allocates on demand (TF_FORCE_GPU_ALLOW_GROWTH)")
    return None, "no nvidia-smi and not a Mac"


# --- running them ---------------------------------------------------------------------


def installed_tensorflow():
    """{distribution: version} of the TensorFlow family here, without importing it."""
    from importlib import metadata

    found = {}
    for name in TENSORFLOW_DISTRIBUTIONS:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return found


def run_checks(progress=None):
    """Every check for this machine's TensorFlow, as a record (plain data, see as_record)."""
    say = progress or (lambda message: None)
    checks = []
    say("asking TensorFlow for its GPUs")
    listed = decide_listed(probe_gpus())
    checks.append(listed)
    if not listed.passed:
        checks += [Check(name, None, "not run: no GPU") for name in GPU_ONLY_CHECKS]
    wait_op = None
    if listed.passed:
        say("checking the read-back that ends every block")
        placements = probe_wait_placement()
        stays = decide_wait_placement(placements)
        checks.append(stays)
        wait_op = chosen_wait_op(stays, placements)
        available, method = available_gpu_memory()
        checks.append(decide_memory(available, method))
        if wait_op:
            facts = probe_wait(wait_op, available)
            if facts is None:
                checks.append(Check("wait waits", False, "no size for the check fits in memory",
                                    [("gpu", None, None)]))
            else:
                checks.extend(decide_wait(facts))
    for device in ("cpu", "gpu") if listed.passed else ("cpu",):
        say(f"checking that XLA really compiles on {device}")
        checks.append(decide_xla(device, probe_xla(device)))
    if listed.passed:
        for dtype in DTYPES:
            for mode in MODES:
                say(f"placing a {dtype} {mode} multiply on the GPU")
                checks.append(decide_placement(dtype, mode, probe_placement(dtype, mode)))
    return as_record(checks, wait_op)


def as_record(checks, wait_op):
    """Plain data: the checks, the wait op chosen, and for every case of the grid why a
    failed check rules it out (None: measured), which the report quotes."""
    return {
        "format": RECORD_FORMAT,
        "distributions": installed_tensorflow(),
        "wait_op": wait_op,
        "checks": [asdict(check) for check in checks],
        "verdicts": {
            device: {dtype: {mode: verdict(checks, device, dtype, mode) for mode in MODES}
                     for dtype in DTYPES}
            for device in DEVICES
        },
    }


def checks_of(record):
    return [Check(c["name"], c["passed"], c["evidence"], [tuple(g) for g in c["gates"]])
            for c in record["checks"]]


def record_path(environ=os.environ):
    return environ.get(RECORD_ENV) or os.path.join(sys.prefix, RECORD_FILE)


def save_record(record, path):
    with open(path, "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)


def recorded(environ=os.environ):
    """The record this environment holds, if it is for this TensorFlow, else None."""
    path = record_path(environ)
    try:
        with open(path) as f:
            record = json.load(f)
    except (OSError, ValueError):
        return None
    same_tensorflow = record.get("distributions") == installed_tensorflow()
    return record if record.get("format") == RECORD_FORMAT and same_tensorflow else None


@functools.lru_cache(maxsize=None)
def record_here():
    """The checks that decide this process's cases: the handed-over record, else run here."""
    return recorded() or run_checks()


def check_reason(device, dtype, mode):
    """Why a failed check rules out (device, dtype, mode), or None."""
    if device == "cpu" and mode != "xla":
        return None  # nothing to check: TensorFlow's CPU is always there
    return verdict(checks_of(record_here()), device, dtype, mode)


def wait_op(device):
    """The read-back op the checks chose for `device`."""
    if device == "cpu":
        return common.WAIT_OPS[0]
    return record_here()["wait_op"] or common.WAIT_OPS[0]


@functools.lru_cache(maxsize=None)
def skip_reason(device, size, dtype, mode):
    """Why this case is not measured here, or None. Decided before anything is
    allocated, so a size that cannot fit is skipped, not killed.

    Cached: asv re-runs setup before every sample, and nvidia-smi is a subprocess.
    """
    reason = common.tensorflow_missing() or check_reason(device, dtype, mode)
    if reason:
        return reason
    inputs = common.input_copies(size, dtype)  # the block's copies of its input
    reason = common.memory_skip_reason(size, dtype, common.free_host_memory(), inputs=inputs)
    if reason is None and device == "gpu" and sys.platform != "darwin":
        reason = common.memory_skip_reason(size, dtype, common.free_gpu_memory(),
                                           inputs=inputs)
    return reason
