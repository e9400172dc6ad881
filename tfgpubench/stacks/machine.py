"""What asv records about this machine: its GPU, OS version and CPU.

asv copies every key of the machine's entry in ~/.asv-machine.json into
results/<machine>/machine.json and into each result's parameters, and
`asv publish` offers every parameter as a selector beside the graphs. So an
extra `gpu` key, with the model and its memory, shows up on the published
site and separates machines of a fleet whose results are merged there.
"""

import json
import platform
import subprocess
import sys
from pathlib import Path

NO_GPU = "none"


def _run(cmd, timeout=30):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


def parse_nvidia_smi(text):
    """'NVIDIA H200, 143771 MiB' per line -> 'NVIDIA H200 (143771 MiB)', counted when several."""
    gpus = []
    for line in (text or "").strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if parts and parts[0]:
            gpus.append(f"{parts[0]} ({parts[1]})" if len(parts) > 1 and parts[1] else parts[0])
    return _count(gpus)


def parse_system_profiler(text, unified_bytes=None):
    """`system_profiler SPDisplaysDataType -json` -> e.g. 'Apple M1 Pro (16-core GPU, 32 GB
    unified memory)' or 'AMD Radeon Pro 5300M (4 GB)'; several GPUs joined with ' + '."""
    try:
        displays = json.loads(text or "{}").get("SPDisplaysDataType", [])
    except json.JSONDecodeError:
        return None
    gpus = []
    for gpu in displays:
        model = gpu.get("sppci_model") or gpu.get("_name")
        if not model:
            continue
        details = []
        if gpu.get("sppci_cores"):
            details.append(f"{gpu['sppci_cores']}-core GPU")
        vram = gpu.get("spdisplays_vram") or gpu.get("spdisplays_vram_shared")
        if vram:
            details.append(vram)
        elif model.startswith("Apple") and unified_bytes:
            details.append(f"{unified_bytes / 2**30:.0f} GB unified memory")
        gpus.append(f"{model} ({', '.join(details)})" if details else model)
    return " + ".join(gpus) if gpus else None


def _count(gpus):
    if not gpus:
        return None
    if len(set(gpus)) == 1 and len(gpus) > 1:
        return f"{len(gpus)}x {gpus[0]}"
    return " + ".join(gpus)


def detect_gpu(system=sys.platform):
    """The GPU(s) of this machine in one line, or 'none'."""
    if system == "darwin":
        memsize = _run(["sysctl", "-n", "hw.memsize"])
        unified = int(memsize) if memsize and memsize.strip().isdigit() else None
        found = parse_system_profiler(_run(["system_profiler", "SPDisplaysDataType", "-json"],
                                           timeout=60), unified)
    else:
        found = parse_nvidia_smi(_run(["nvidia-smi", "--query-gpu=name,memory.total",
                                       "--format=csv,noheader"]))
    return found or NO_GPU


def parse_os_release(text):
    for line in (text or "").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip().strip('"')
    return None


def os_description(system=sys.platform):
    """'macOS 14.5 (Darwin 23.5.0)' or 'Debian GNU/Linux 12 (bookworm), Linux 6.1.0-28-amd64'."""
    kernel = f"{platform.system()} {platform.release()}"
    if system == "darwin":
        version = platform.mac_ver()[0]
        return f"macOS {version} ({kernel})" if version else kernel
    try:
        pretty = parse_os_release(Path("/etc/os-release").read_text())
    except OSError:
        pretty = None
    return f"{pretty}, {kernel}" if pretty else kernel


def machine_info(existing=None, defaults=None, gpu=None, os_name=None):
    """The machine entry to save: asv's defaults, the user's own edits, then what is
    detected now (GPU and OS version: they change with hardware and upgrades)."""
    info = dict(defaults or {})
    info.update(existing or {})
    info["gpu"] = gpu if gpu is not None else detect_gpu()
    info["os"] = os_name or os_description()
    return info


def register_machine(name=None):
    """Save this machine's entry where asv reads it (~/.asv-machine.json); its name."""
    from asv.machine import Machine, MachineCollection

    defaults = Machine.get_defaults()
    name = name or defaults["machine"]
    try:
        existing = MachineCollection.load(name)
    except Exception:  # asv raises UserError when the file or the entry is missing
        existing = {}
    info = machine_info(existing, defaults)
    info["machine"] = name
    MachineCollection.save(name, info)
    return name, info
