"""What each stack needs from the machine, and whether this machine has it.

Pure: every function here takes plain facts about a machine (`Facts`);
finding them out (nvidia-smi, the dynamic loader, installed wheels, the macOS
version) is `machine.detect_facts`, at the edge. `stacks check` prints
`describe_stack` for every stack; `doctor` can print it for one.

What a stack needs:
- an OS, an architecture and a Python its wheels exist for (the row's `wheels`);
- on a Mac, the macOS Apple's pairing table gives for its tensorflow-metal;
- a comparator stack (PyTorch, JAX, numpy): an OS and architecture pair and a
  Python its wheels exist for; its CUDA needs are its wheels' own (not checked here);
- with the CUDA build, an NVIDIA driver for the CUDA version TensorFlow was
  built with, and that CUDA runtime and cuDNN: installed with the stack by
  `tensorflow[and-cuda]` from TensorFlow 2.14, found on the system for 2.12
  and 2.13.
"""

from dataclasses import dataclass, field

from ..pairing import METAL_MIN_MACOS, series
from .install_stack import split_pin
from .table import CUDA_EXTRA, PLUGIN

# TensorFlow's tested GPU build configurations on Linux (tensorflow.org/install/source,
# "GPU" table): release series -> (cuDNN, CUDA). 2.21 is the row quoted from that page
# as updated 2026-03-12 (Python 3.10-3.13, cuDNN 9.3, CUDA 12.5); the slow test
# tests/stacks/test_resolve.py checks every and-cuda row against the nvidia-*
# lower bounds tensorflow[and-cuda] declares on PyPI.
CUDA_BUILDS = {
    (2, 12): ("8.6", "11.8"),
    (2, 13): ("8.6", "11.8"),
    (2, 14): ("8.7", "11.8"),
    (2, 15): ("8.9", "12.2"),
    (2, 16): ("8.9", "12.3"),
    (2, 17): ("8.9", "12.3"),
    (2, 18): ("9.3", "12.5"),
    (2, 19): ("9.3", "12.5"),
    (2, 20): ("9.3", "12.5"),
    (2, 21): ("9.3", "12.5"),
}
OS_NAMES = {"macos": "macOS", "linux": "Linux"}
SECTION_OF_PLATFORM = {"darwin": "macos", "linux": "linux"}


@dataclass(frozen=True)
class Facts:
    """What a machine has, as plain values (None: not there, or not found)."""

    system: str  # sys.platform: 'darwin', 'linux'
    machine: str  # 'arm64', 'x86_64'
    python: str  # 'X.Y'
    macos: str = None  # '14.5'
    driver_cuda: str = None  # the newest CUDA the NVIDIA driver supports (nvidia-smi)
    # {major: 'X.Y[.Z]'} of the CUDA runtimes and cuDNNs the dynamic loader finds, by
    # the soname TensorFlow loads (libcudart.so.11.0, libcudnn.so.8, ...)
    cudart: dict = field(default_factory=dict)
    cudnn: dict = field(default_factory=dict)
    nvidia_wheels: dict = field(default_factory=dict)  # nvidia-* wheels in this Python


@dataclass(frozen=True)
class Need:
    """One thing a stack needs: what, which, what this machine has, and whether it will do."""

    what: str
    needed: str
    found: str
    ok: bool


def version_tuple(text):
    """(12, 5) of '12.5', (9, 3, 0) of '9.3.0'; () of None or text that is not a version."""
    try:
        return tuple(int(part) for part in str(text).split("."))
    except ValueError:
        return ()


def cuda_build(tensorflow_version):
    """(cuDNN, CUDA) TensorFlow `tensorflow_version` was built and tested with, or None."""
    return CUDA_BUILDS.get(series(tensorflow_version))


def _pythons(wheels, arch):
    pythons = wheels.get(arch) or sorted({p for ps in wheels.values() for p in ps},
                                         key=version_tuple)
    return list(pythons)


def _span(pythons):
    return pythons[0] if len(pythons) == 1 else f"{pythons[0]}-{pythons[-1]}"


def comparator_needs(stack, facts, wheels=None):
    """Platform (OS-architecture) and Python: what a comparator row's wheels exist for."""
    here = f"{SECTION_OF_PLATFORM.get(facts.system, facts.system)}-{facts.machine}"
    pythons = _pythons(wheels or stack.wheels, here)
    return [
        Need("platform", " or ".join(sorted(stack.wheels)), here, here in stack.wheels),
        Need("Python", _span(pythons), facts.python, facts.python in pythons),
    ]


def platform_needs(stack, facts, wheels=None):
    """OS, architecture and Python: what the row's wheels (or `wheels`) exist for."""
    if stack.is_comparators:
        return comparator_needs(stack, facts, wheels)
    here = SECTION_OF_PLATFORM.get(facts.system, facts.system)
    pythons = _pythons(wheels or stack.wheels, facts.machine)
    return [
        Need("OS", OS_NAMES[stack.os], OS_NAMES.get(here, here), here == stack.os),
        Need("architecture", " or ".join(sorted(stack.wheels)), facts.machine,
             facts.machine in stack.wheels),
        Need("Python", _span(pythons), facts.python, facts.python in pythons),
    ]


def macos_need(stack, facts):
    """The macOS Apple's pairing table gives for the row's tensorflow-metal."""
    metal = next(split_pin(p)[2] for p in stack.pins if split_pin(p)[0] == PLUGIN["macos"])
    least = METAL_MIN_MACOS[series(metal)]
    shown = ".".join(map(str, least))
    found = facts.macos or "not macOS"
    return Need("macOS", f"{shown} or later (tensorflow-metal {metal})", found,
                version_tuple(facts.macos)[:2] >= least if facts.macos else False)


def cuda_needs(stack, facts):
    """Driver, CUDA runtime and cuDNN for the row's CUDA build."""
    name, extra, version = split_pin(stack.cuda[0])
    build = cuda_build(version)
    if build is None:
        return [Need("CUDA and cuDNN", f"unknown for TensorFlow {version} (not in this "
                     "tool's table of tensorflow.org's tested configurations)", "-", False)]
    cudnn, cuda = build
    needs = [_driver_need(cuda, facts)]
    if extra == CUDA_EXTRA:
        comes = f"installed with the stack ({name}[{CUDA_EXTRA}])"
        needs += [Need("CUDA runtime", cuda, comes, True), Need("cuDNN", cudnn, comes, True)]
    else:
        needs += [_system_library("CUDA runtime", cuda, facts.cudart, "cuda-runtime", facts),
                  _system_library("cuDNN", cudnn, facts.cudnn, "cudnn", facts)]
    return needs


def _driver_need(cuda, facts):
    major = version_tuple(cuda)[0]
    needed = f"an NVIDIA driver for CUDA {major}.x (TensorFlow was built with {cuda})"
    if not facts.driver_cuda:
        return Need("NVIDIA driver", needed, "none (nvidia-smi lists no GPU)", False)
    # CUDA's minor-version compatibility: a driver for CUDA 12.0 runs 12.x programs.
    found = version_tuple(facts.driver_cuda)
    return Need("NVIDIA driver", needed, f"one for CUDA {facts.driver_cuda}",
                found[:1] == (major,) or found[:1] > (major,))


def _system_library(what, needed, found, wheel_part, facts):
    """A library TensorFlow 2.12/2.13 loads from the system by its soname: the same
    major version as it was built with, that minor or later."""
    want = version_tuple(needed)
    have = found.get(want[0])
    ok = bool(have) and version_tuple(have)[:2] >= want[:2]
    if have:
        shown = have
    else:
        others = ", ".join(found[major] for major in sorted(found))
        shown = f"no {want[0]}.x found by the dynamic loader" + (
            f" (only {others})" if others else "")
    wheels = [f"{n} {v}" for n, v in sorted(facts.nvidia_wheels.items()) if wheel_part in n]
    if not have and wheels:
        # pip's nvidia wheels are not on the loader's path: they do not count here.
        shown += f"; this Python has the wheel {', '.join(wheels)}, which it does not search"
    return Need(what, f"{needed} (system-installed, {want[0]}.x)", shown, ok)


def stack_needs(stack, variant, facts):
    """Every Need of `stack` with `variant` ('cpu' or 'cuda') on the machine of `facts`."""
    cuda = variant == "cuda" and bool(stack.cuda)
    needs = platform_needs(stack, facts, stack.cuda_wheels if cuda else None)
    if stack.os == "macos":
        needs.append(macos_need(stack, facts))
    elif cuda and not stack.is_comparators:
        needs.extend(cuda_needs(stack, facts))
    return needs


def describe_stack(stack, variant, facts):
    """Lines for a person: the stack and whether it can run here, then each need."""
    needs = stack_needs(stack, variant, facts)
    if stack.os == "macos":
        build = "Metal"
    elif stack.is_comparators:
        build = "comparators, CUDA" if variant == "cuda" and stack.cuda else "comparators"
    else:
        build = "CUDA" if variant == "cuda" and stack.cuda else "CPU"
    missing = [n.what for n in needs if not n.ok]
    verdict = f"not here ({', '.join(missing)})" if missing else "runs here"
    lines = [f"{stack.label} ({build}): {verdict}"]
    for need in needs:
        mark = "ok" if need.ok else "NO"
        lines.append(f"  {mark}  {need.what}: needs {need.needed}; this machine: {need.found}")
    return lines
