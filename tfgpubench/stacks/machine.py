"""What asv records about this machine: its GPU, OS version and CPU.

asv copies every key of the machine's entry in ~/.asv-machine.json into
results/<machine>/machine.json and into each result's parameters, and
`asv publish` offers every parameter as a selector beside the graphs. So an
extra `gpu` key, with the model and its memory, shows up on the published
site and separates machines of a fleet whose results are merged there.
"""

import ctypes
import json
import platform
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from .install_stack import normalize_machine, python_version
from .requirements import Facts

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


# --- what the stacks need: CUDA, cuDNN, macOS (see requirements.py) ---------------

def parse_driver_cuda(text):
    """'12.4' from nvidia-smi's header ('... CUDA Version: 12.4 ...'), or None."""
    match = re.search(r"CUDA Version:\s*(\d+\.\d+)", text or "")
    return match.group(1) if match else None


def decode_cuda_version(number):
    """cudaRuntimeGetVersion's 11080 -> '11.8', 12050 -> '12.5'."""
    return f"{number // 1000}.{number % 1000 // 10}"


def decode_cudnn_version(number):
    """cudnnGetVersion's 8600 -> '8.6.0' (major*1000 + minor*100 + patch up to 8.x),
    90300 -> '9.3.0' (major*10000 + minor*100 + patch from 9.0)."""
    if number >= 10000:
        return f"{number // 10000}.{number % 10000 // 100}.{number % 100}"
    return f"{number // 1000}.{number % 1000 // 100}.{number % 100}"


# The sonames TensorFlow dlopen()s, by major version: what the dynamic loader must find.
CUDART_SONAMES = {11: "libcudart.so.11.0", 12: "libcudart.so.12", 13: "libcudart.so.13"}
CUDNN_SONAMES = {8: "libcudnn.so.8", 9: "libcudnn.so.9"}


def _library_version(soname, function, decode):
    """The version the system library `soname` reports through `function`, or None
    when the dynamic loader does not find it."""
    try:
        library = ctypes.CDLL(soname)
        if function == "cudaRuntimeGetVersion":
            value = ctypes.c_int()
            if library.cudaRuntimeGetVersion(ctypes.byref(value)) != 0:
                return None
            return decode(value.value)
        getter = getattr(library, function)
        getter.restype = ctypes.c_size_t
        return decode(getter())
    except (OSError, AttributeError):
        return None


def _libraries(sonames, function, decode):
    """{major: version} of the libraries the loader finds among `sonames`."""
    found = {}
    for major, soname in sonames.items():
        version = _library_version(soname, function, decode)
        if version:
            found[major] = version
    return found


NVIDIA_WHEELS = ("nvidia-cuda-runtime-cu11", "nvidia-cudnn-cu11",
                 "nvidia-cuda-runtime-cu12", "nvidia-cudnn-cu12")


def detect_facts(python=None, system=sys.platform):
    """This machine's requirements.Facts; `python` ('X.Y') stands in for this Python's."""
    wheels = {}
    for name in NVIDIA_WHEELS:
        try:
            wheels[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    driver = None
    if system != "darwin":
        driver = parse_driver_cuda(_run(["nvidia-smi"]))
    return Facts(
        system=system, machine=normalize_machine(platform.machine()),
        python=python or python_version(),
        macos=(platform.mac_ver()[0] or None) if system == "darwin" else None,
        driver_cuda=driver,
        cudart={} if system == "darwin" else _libraries(
            CUDART_SONAMES, "cudaRuntimeGetVersion", decode_cuda_version),
        cudnn={} if system == "darwin" else _libraries(
            CUDNN_SONAMES, "cudnnGetVersion", decode_cudnn_version),
        nvidia_wheels=wheels,
    )


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


# --- is it the same machine? ------------------------------------------------------

# What makes results comparable: the hardware asv records, and the OS.
HARDWARE_KEYS = ("arch", "cpu", "num_cpu", "ram", "gpu")
OS_KEY = "os"
# Memory as asv records it is the kernel's total usable memory, which moves by
# tens to hundreds of MB with the kernel version, firmware reservations and a
# VM's configuration (this project's VMs: 25276059648 and 25325268992 bytes,
# 0.2% apart, same 24 GiB). Memory sizes machines are built with differ by
# 12.5% at the least (16/18, 32/36 GB); 5% tells them apart.
RAM_TOLERANCE = 0.05
# The name of results/<name>/: a directory name on every OS, never a file of results/.
MACHINE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def os_release(description):
    """An OS description with every version cut to major.minor: 'Debian GNU/Linux 12
    (bookworm), Linux 6.18' or 'macOS 14.5 (Darwin 23.5)'. A kernel patch or build
    suffix is not a new configuration; macOS 14.5 -> 15.0 (new Metal) is."""
    return re.sub(r"\b(\d+\.\d+)(?:\.\d+)*[-+~.\w]*", r"\1", str(description or ""))


def _ram_differs(recorded, here):
    try:
        recorded, here = float(recorded), float(here)
    except (TypeError, ValueError):
        return recorded != here
    return abs(recorded - here) > RAM_TOLERANCE * max(recorded, here)


def differences(recorded, here, keys=HARDWARE_KEYS + (OS_KEY,)):
    """["cpu 'AMD EPYC' (this machine: 'Intel Xeon')", ...] where the machine `recorded`
    (asv's machine entry or a result's params) is not this one, `here`."""
    found = []
    for key in keys:
        before, now = recorded.get(key), here.get(key)
        if key == "ram":
            differ = _ram_differs(before, now)
        elif key == OS_KEY:
            differ = os_release(before) != os_release(now)
        else:
            differ = str(before) != str(now)
        if differ:
            found.append(f"{key} {before!r} (this machine: {now!r})")
    return found


def check_machine_name(name):
    """None when `name` can name results/<name>/, else why not."""
    if not MACHINE_NAME.match(name or "") or name.endswith(".json"):
        return (f"machine name {name!r} must start with a letter or digit and use only "
                "letters, digits and . _ - (at most 64, not ending in .json)")
    return None


def name_conflict(name, recorded, here, chosen):
    """None when results/<name>/ may take this machine's results, else a one-line error.

    recorded: results/<name>/machine.json (None if there is none); chosen:
    whether the user passed the name. A name asv made up (the host name) that
    already holds another machine's results, such as results committed from a
    machine also called `vm`, is refused: taking them for this machine's would
    skip its stacks and publish another machine's numbers as its own.
    """
    if not recorded or chosen:
        return None
    changed = differences(recorded, here, HARDWARE_KEYS)
    if not changed:
        return None
    return (f"results/{name}/ holds another machine's results ({'; '.join(changed)}); "
            f"{name} is only this machine's host name: pass --machine NAME to keep this "
            f"machine's results apart (--machine {name} to measure again over them)")


def machine_info(existing=None, defaults=None, gpu=None, os_name=None):
    """The machine entry to save: asv's defaults, the user's own edits, then what is
    detected now (GPU and OS version: they change with hardware and upgrades)."""
    info = dict(defaults or {})
    info.update(existing or {})
    info["gpu"] = gpu if gpu is not None else detect_gpu()
    info["os"] = os_name or os_description()
    return info


def describe_machine(name=None):
    """(name, entry) of this machine as asv will record it, saving nothing.

    name: the user's --machine, or None for asv's default, the host name.
    """
    from asv.machine import Machine, MachineCollection

    defaults = Machine.get_defaults()
    name = name or defaults["machine"]
    try:
        existing = MachineCollection.load(name)
    except Exception:  # asv raises UserError when the file or the entry is missing
        existing = {}
    info = machine_info(existing, defaults)
    info["machine"] = name
    return name, info


def register_machine(name, info):
    """Save this machine's entry where asv reads it (~/.asv-machine.json)."""
    from asv.machine import MachineCollection

    MachineCollection.save(name, info)
