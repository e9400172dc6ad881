"""What `doctor` finds: which TensorFlow and plugin this Python has, whether Apple
pairs them, which devices TensorFlow sees, the GPU self-check, and for each dtype
and mode whether a '/GPU:0' multiply is measured here; as plain data, and as text."""

import platform
import re
from dataclasses import asdict
from pathlib import Path

from . import format as fmt
from .pairing import pairing_verdict
from .stacks.install_stack import installed_versions, split_pin
from .stacks.requirements import SECTION_OF_PLATFORM, describe_stack, stack_needs
from .suite import grid

# The names TensorFlow is installed under: Apple's, the CUDA build's, the CPU build's.
TENSORFLOW_DISTRIBUTIONS = ("tensorflow-macos", "tensorflow", "tensorflow-cpu")

# What TensorFlow's kernel registry says a GPU Mul kernel does, by host_memory.
KERNEL_WORDS = {
    True: "host-memory kernel: inputs and output stay on the host, the CPU computes",
    False: "device-memory kernel: computes on the GPU",
    None: "no GPU kernel in this TensorFlow build",
}

# Linux's transparent huge pages decide what a large CPU op pays for its result.
# TensorFlow maps each large result afresh and does not ask for huge pages, so under
# 'madvise' or 'never' every 4 KiB of it page-faults when first written, every op: a
# 4096x4096 float32 eager multiply took 16,385 minor faults and 37-41 ms per op on a
# 2-core AMD EPYC VM, and 544 faults and 13-27 ms with 'always' (2026-12-01, README).
HUGE_PAGES_SETTING = Path("/sys/kernel/mm/transparent_hugepage/enabled")
HUGE_PAGE_WORDS = {
    "always": "large CPU results get 2 MiB pages",
    "madvise": "TensorFlow does not ask for them: a large CPU result page-faults every "
               "4 KiB each op (4096x4096 float32 eager: 1.4-3x slower than under 'always' on a "
               "2-core VM)",
    "never": "off: a large CPU result page-faults every 4 KiB each op",
}


def huge_pages(setting=HUGE_PAGES_SETTING):
    """Linux's transparent-huge-page mode ('always', 'madvise' or 'never'), or None
    where the system has no such setting (macOS, a kernel without it)."""
    try:
        match = re.search(r"\[(\w+)\]", Path(setting).read_text())
    except OSError:
        return None
    return match.group(1) if match else None


def diagnose(checks, record):
    """Everything the doctor reports, as plain data.

    checks: the suite's checks module (benchmarks/checks.py); record: what its
    run_checks() returned in this Python.
    """
    tf = checks.common.load_tensorflow()
    distributions = installed_versions()
    metal = distributions.get("tensorflow-metal")
    pairing = pairing_verdict(tf.__version__, metal) if metal else None
    devices = [
        {"name": d.name, "type": d.device_type, **_details(tf, d)}
        for d in tf.config.list_physical_devices()
    ]
    outcomes = checks.checks_of(record)
    gpu_multiply = {
        dtype: {
            "modes": {mode: checks.verdict(outcomes, "gpu", dtype, mode) for mode in grid.MODES},
            "gpu_kernel": KERNEL_WORDS[checks.mul_kernel_host_memory(dtype)],
        }
        for dtype in grid.DTYPES
    }
    return {
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.release()} {platform.machine()}",
        "tensorflow": tf.__version__,
        "distributions": distributions,
        "pairing": {"ok": pairing[0], "message": pairing[1]} if pairing else None,
        "devices": devices,
        "gpu_multiply": gpu_multiply,
        "gpu_checks": record,
        "huge_pages": huge_pages(),
    }


def _details(tf, device):
    try:
        details = tf.config.experimental.get_device_details(device)
    except (AttributeError, ValueError):
        return {}
    return {k: str(v) for k, v in details.items()}


def format_placement(dtype, where):
    """Lines saying where a '/GPU:0' multiply of `dtype` runs, per mode where they differ."""
    reasons = where["modes"]
    distinct = set(reasons.values())
    if len(distinct) == 1:
        (reason,) = distinct
        verdict = f"not measured: {reason}" if reason else "measured on the GPU"
        lines = [f"  {dtype:8} every mode: {verdict}"]
    else:
        lines = [f"  {dtype:8} by mode:"]
        for mode, reason in reasons.items():
            lines.append(f"  {'':8}   {mode:10} " + (f"not measured: {reason}" if reason
                                                     else "measured on the GPU"))
    lines.append(f"  {'':8} kernel registry: {where['gpu_kernel']}")
    return lines


def stack_of(stacks, system, installed):
    """The row of stacks.toml for this OS that this Python's installation is, or None.

    installed: {distribution: version}. A row all of whose pins are installed wins
    (on a Mac, the tensorflow-metal beside TensorFlow decides between rows); else the
    newest row with the installed TensorFlow release. A local label ('2.21.0+nv') is
    the same release."""
    section = SECTION_OF_PLATFORM.get(system)
    releases = {name: version.split("+")[0] for name, version in installed.items()}
    rows = [stack for stack in reversed(stacks) if stack.os == section]
    for stack in rows:
        if all(releases.get(name) == version
               for name, _, version in map(split_pin, stack.pins)):
            return stack
    tensorflow = next((releases[name] for name in TENSORFLOW_DISTRIBUTIONS if name in releases),
                      None)
    return next((stack for stack in rows if stack.tensorflow_version() == tensorflow), None)


def stack_requirements(stack, variant, facts, tensorflow_version):
    """What this TensorFlow's stack needs from the machine (OS, Python, macOS, NVIDIA
    driver, CUDA, cuDNN) and whether it is found, as plain data and as lines."""
    if stack is None:
        return {"label": None, "variant": variant, "needs": [],
                "lines": [f"no row of stacks.toml pins TensorFlow {tensorflow_version} "
                          f"for this OS: nothing to check it against"]}
    return {"label": stack.label, "variant": variant,
            "needs": [asdict(need) for need in stack_needs(stack, variant, facts)],
            "lines": describe_stack(stack, variant, facts)}


def format_diagnosis(d, checks_record=None):
    lines = [
        f"Python {d['python']} on {d['platform']}",
        f"TensorFlow {d['tensorflow']}  ("
        + ", ".join(f"{k} {v}" for k, v in d["distributions"].items())
        + ")",
    ]
    if d["pairing"] is None:
        lines.append("tensorflow-metal: not installed")
    else:
        mark = "ok" if d["pairing"]["ok"] else "MISMATCH"
        lines.append(f"pairing: {mark}: {d['pairing']['message']}")
    lines.append("devices:")
    for device in d["devices"]:
        extra = ", ".join(f"{k}={v}" for k, v in device.items() if k not in ("name", "type"))
        lines.append(f"  {device['name']} ({device['type']}{', ' + extra if extra else ''})")
    if not any(device["type"] == "GPU" for device in d["devices"]):
        lines.append("  no GPU: every '/GPU:0' op silently runs on the CPU (soft placement)")
    mode = d.get("huge_pages")
    if mode:
        lines.append(f"transparent huge pages: {mode}"
                     + (f" ({HUGE_PAGE_WORDS[mode]})" if mode in HUGE_PAGE_WORDS else ""))
    if checks_record:
        lines.append("GPU self-check:")
        lines += ["  " + fmt.check_line(check) for check in checks_record["checks"]]
    lines.append("tf.multiply under '/GPU:0':")
    for dtype, where in d["gpu_multiply"].items():
        lines += format_placement(dtype, where)
    if d.get("stack"):
        lines.append("this TensorFlow's stack in stacks.toml, and what it needs here:")
        lines += ["  " + line for line in d["stack"]["lines"]]
    return "\n".join(lines)
