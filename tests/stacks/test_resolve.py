"""pip resolves every stack's whole dependency set, from wheels only (as the
installer installs it), for each platform, architecture and Python its row
claims: a Mac user's first install is known to resolve before it is tried.
Needs PyPI, and only PyPI: this machine's own pip configuration is left out.

Each resolution is `pip install --dry-run --report` for another machine
(--platform, --python-version, --implementation cp, and that machine's environment
markers: tests/stacks/pip_for_target.py): macOS at the oldest version
the stack supports (requirements.py: tensorflow-metal 0.5 on needs 12.1, and
pip's macosx_12_0 tag stands for every 12.x; pip adds the older tags a 12.x Mac
also takes); Linux with glibc 2.17 to 2.31 (Ubuntu 20.04's, Debian 11's), the
manylinux tags pip does not add by itself. Linux rows resolve their cuda pins too,
and tensorflow[and-cuda]'s nvidia-* requirements must agree with requirements.py's
table of tested CUDA and cuDNN versions.

pip runs in its own virtual environment, with a pip new enough (RESOLVER_PIP) to
read each wheel's metadata with HTTP range requests (--use-feature=fast-deps) and
download no wheel in a dry run. Where the index serves no PEP 658 metadata files,
as this project's VM's route to PyPI does not, an older pip downloads every wheel:
6.3 GB for one CUDA resolution of the comparators, and 8 at a time filled a CI
machine's disk.

Each resolution costs pip ~10-15 s of CPU (it parses the index pages of ~40
projects), so this resolves the oldest and newest Python each row claims for
each architecture: 86 resolutions, 6 min 23 s with 8 at a time on a 2-core AMD
EPYC VM (2026-12-01), 0.04 GB of disk at the peak.
TFGPUBENCH_RESOLVE_ALL=1 resolves every Python a row claims (144).
"""

import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tfgpubench.pairing import METAL_MIN_MACOS, series
from tfgpubench.stacks.install_stack import parse_pin, split_pin
from tfgpubench.stacks.requirements import cuda_build
from tfgpubench.stacks.table import PLUGIN, load_table

from .conftest import ROOT

pytestmark = pytest.mark.slow

STACKS = load_table(ROOT / "stacks.toml")
LINUX_GLIBC = (2, 31)
PARALLEL = 8
PYPI = "https://pypi.org/simple"
# pip 25.0 still downloads whole wheels in a dry run with fast-deps; 26.3 does not
# (measured on this project's VM, 2026-12-01).
RESOLVER_PIP = "pip>=26.3"


# A comparator row's wheels are keyed OS-ARCH; numpy 2.4's macOS arm64 wheels need
# macOS 14 (Accelerate), PyTorch's and jaxlib's 11 or later.
COMPARATORS_MACOS = 14
LINUX_ARCHES = {"arm64": "aarch64", "x86_64": "x86_64"}


def platforms(stack, arch):
    """The platform tags a machine this stack claims to run on accepts."""
    if stack.is_comparators:
        os_name, arch = arch.split("-")
        if os_name == "macos":
            return [f"macosx_{COMPARATORS_MACOS}_0_{arch}"]
        arch = LINUX_ARCHES[arch]
    elif stack.os == "macos":
        metal = next(parse_pin(p)[1] for p in stack.pins if parse_pin(p)[0] == PLUGIN["macos"])
        major = METAL_MIN_MACOS[series(metal)][0]
        return [f"macosx_{major}_0_{arch}"]
    tags = [f"manylinux_2_{minor}_{arch}" for minor in range(LINUX_GLIBC[1], 16, -1)]
    return tags + [f"manylinux2014_{arch}"]


def ends(pythons, every_python):
    return list(pythons) if every_python else sorted({pythons[0], pythons[-1]},
                                                     key=lambda p: int(p.split(".")[1]))


def claimed(stack, every_python):
    """(arch, python, variant, pins) of each resolution the row's claims call for."""
    cases = []
    for arch, pythons in sorted(stack.wheels.items()):
        cases += [(arch, python, "cpu", list(stack.pins)) for python in ends(pythons, every_python)]
        # The CUDA pins install where nvidia-smi lists a GPU: never on a Mac.
        if stack.cuda and not arch.startswith("macos"):
            cuda_pythons = (stack.cuda_wheels or stack.wheels)[arch]
            cases += [(arch, python, "cuda", list(stack.cuda))
                      for python in ends(cuda_pythons, every_python)]
    return cases


def pypi_only_environment():
    """This environment without the machine's own pip configuration (local indexes,
    find-links, constraints), which no user has: PyPI decides. The certificate stays."""
    environment = {k: v for k, v in os.environ.items()
                   if not k.startswith("PIP_") or k in ("PIP_CERT", "PIP_DEFAULT_TIMEOUT")}
    environment["PIP_CONFIG_FILE"] = os.devnull
    return environment


PIP_FOR_TARGET = Path(__file__).resolve().parent / "pip_for_target.py"
MARKER_SYSTEMS = {"macos": ("darwin", "Darwin"), "linux": ("linux", "Linux")}


def target_markers(platform_tag, python):
    """The environment markers of the machine `platform_tag` and Python `python` name."""
    system = "macos" if platform_tag.startswith("macosx") else "linux"
    machine = platform_tag.split("_", 3)[-1] if system == "macos" else (
        "aarch64" if platform_tag.endswith("aarch64") else "x86_64")
    sys_platform, platform_system = MARKER_SYSTEMS[system]
    return {"sys_platform": sys_platform, "platform_system": platform_system,
            "platform_machine": machine, "os_name": "posix",
            "python_version": python, "python_full_version": f"{python}.0",
            "implementation_name": "cpython", "platform_python_implementation": "CPython"}


def test_markers_are_the_targets():
    mac = target_markers("macosx_14_0_arm64", "3.12")
    assert (mac["sys_platform"], mac["platform_system"], mac["platform_machine"],
            mac["python_version"]) == ("darwin", "Darwin", "arm64", "3.12")
    assert target_markers("manylinux_2_31_aarch64", "3.11")["platform_machine"] == "aarch64"
    assert target_markers("manylinux2014_x86_64", "3.11")["platform_system"] == "Linux"


@pytest.fixture(scope="module")
def resolver_python(tmp_path_factory):
    """The Python of a virtual environment with RESOLVER_PIP, from PyPI."""
    where = tmp_path_factory.mktemp("resolver")
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    python = str(where / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--index-url", PYPI,
                    RESOLVER_PIP], check=True, env=pypi_only_environment(), timeout=300)
    return python


def resolve(resolver, platform_tags, python, pins):
    """pip's report of what it would install, or the last line of its error. Markers are
    evaluated for the target machine (pip_for_target.py), as pip would evaluate them there.
    `resolver` is the Python whose pip resolves."""
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        markers = json.dumps(target_markers(platform_tags[0], python))
        cmd = [resolver, str(PIP_FOR_TARGET), markers, "install", "--dry-run", "--quiet",
               "--index-url", PYPI, "--target", str(Path(scratch) / "target"),
               "--report", str(report),
               "--only-binary=:all:", "--implementation", "cp", "--python-version", python,
               "--ignore-installed", "--no-warn-script-location",
               "--use-feature=fast-deps"]
        for tag in platform_tags:
            cmd += ["--platform", tag]
        out = subprocess.run([*cmd, *pins], capture_output=True, text=True, timeout=900,
                             env=pypi_only_environment())
        if out.returncode != 0:
            errors = [line for line in out.stderr.splitlines() if line.startswith("ERROR")]
            return None, (errors or out.stderr.strip().splitlines() or ["no output"])[-1]
        return json.loads(report.read_text()), None


def lower_bound(requires, package):
    """'9.3.0.75' from tensorflow's 'nvidia-cudnn-cu12>=9.3.0.75; extra == "and-cuda"'."""
    for requirement in requires:
        name, _, rest = requirement.partition(";")
        match = re.match(rf"{package}\b[^;]*?(?:>=|==)\s*([\d.]+)", name.strip())
        if match and "and-cuda" in rest:
            return match.group(1)
    return None


def problems_of(stack, arch, python, variant, pins, report):
    """What is wrong with one resolution's report, in one line each."""
    where = f"{stack.label} {stack.os} {arch} Python {python} {variant}"
    installed = {item["metadata"]["name"].lower().replace("_", "-"): item
                 for item in report["install"]}
    problems = []
    for pin in pins:
        name, _, version = split_pin(pin)
        found = installed.get(name, {}).get("metadata", {}).get("version")
        if found != version:
            problems.append(f"{where}: {name} resolves to {found}, not {version}")
    if variant == "cuda" and split_pin(pins[0])[1]:
        tensorflow = installed["tensorflow"]["metadata"]
        cudnn, cuda = cuda_build(tensorflow["version"])
        requires = tensorflow.get("requires_dist", [])
        cu = f"cu{cuda.split('.')[0]}"
        declared = (lower_bound(requires, f"nvidia-cudnn-{cu}"),
                    lower_bound(requires, f"nvidia-cuda-runtime-{cu}"))
        if [".".join((v or "").split(".")[:2]) for v in declared] != [cudnn, cuda]:
            problems.append(f"{where}: tensorflow[and-cuda] declares cuDNN {declared[0]} and "
                            f"CUDA {declared[1]}; requirements.py says {cudnn} and {cuda}")
    return problems


def test_every_stack_resolves_where_its_row_claims(resolver_python):
    every_python = os.environ.get("TFGPUBENCH_RESOLVE_ALL") == "1"
    jobs = [(stack, arch, python, variant, pins)
            for stack in STACKS for arch, python, variant, pins in claimed(stack, every_python)]

    def run(job):
        stack, arch, python, variant, pins = job
        report, error = resolve(resolver_python, platforms(stack, arch), python, pins)
        if error:
            return [f"{stack.label} {stack.os} {arch} Python {python} {variant}: {error}"]
        return problems_of(stack, arch, python, variant, pins, report)

    with ThreadPoolExecutor(PARALLEL) as pool:
        problems = [line for lines in pool.map(run, jobs) for line in lines]
    print(f"{len(jobs)} resolutions")
    assert not problems, "\n".join(problems)
