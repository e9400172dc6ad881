"""What `doctor` finds: which TensorFlow and plugin this Python has, whether Apple
pairs them, which devices TensorFlow sees, and for each dtype where a '/GPU:0'
multiply runs; as plain data, and as text."""

import platform

from .pairing import pairing_verdict
from .stacks.install_stack import installed_versions

# What TensorFlow's kernel registry says a GPU Mul kernel does, by host_memory.
KERNEL_WORDS = {
    True: "host-memory kernel: inputs and output stay on the host, the CPU computes",
    False: "device-memory kernel: computes on the GPU",
    None: "no GPU kernel in this TensorFlow build",
}


def diagnose(common):
    """Everything the doctor reports, as plain data. `common` is the suite's module."""
    import tensorflow as tf

    distributions = installed_versions()
    metal = distributions.get("tensorflow-metal")
    pairing = pairing_verdict(tf.__version__, metal) if metal else None
    devices = [
        {"name": d.name, "type": d.device_type, **_details(tf, d)}
        for d in tf.config.list_physical_devices()
    ]
    placement = {}
    for dtype in common.DTYPES:
        reason = common.device_skip_reason("gpu", dtype)
        placement[dtype] = {
            "runs_on": "CPU" if reason else "GPU",
            "reason": reason,
            "gpu_kernel": KERNEL_WORDS[common.mul_kernel_host_memory(dtype)],
        }
    return {
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.release()} {platform.machine()}",
        "tensorflow": tf.__version__,
        "distributions": distributions,
        "pairing": {"ok": pairing[0], "message": pairing[1]} if pairing else None,
        "devices": devices,
        "gpu_multiply": placement,
    }


def _details(tf, device):
    try:
        details = tf.config.experimental.get_device_details(device)
    except (AttributeError, ValueError):
        return {}
    return {k: str(v) for k, v in details.items()}


def format_diagnosis(d):
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
    lines.append("tf.multiply under '/GPU:0':")
    for dtype, where in d["gpu_multiply"].items():
        why = f": {where['reason']}" if where["reason"] else ""
        lines.append(f"  {dtype:8} computes on the {where['runs_on']}{why}")
        lines.append(f"  {'':8} kernel registry: {where['gpu_kernel']}")
    return "\n".join(lines)
