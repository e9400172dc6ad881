"""What each stack needs from the machine, judged from simulated facts: no CUDA
libraries, the wrong cuDNN, a macOS too old, the wrong Python; and the detection's
parsers on the text the tools print."""

import pytest

from tfgpubench.stacks import machine
from tfgpubench.stacks.requirements import (
    CUDA_BUILDS,
    Facts,
    cuda_build,
    describe_stack,
    stack_needs,
)
from tfgpubench.stacks.table import load_table

from .conftest import ROOT

STACKS = {s.label: s for s in load_table(ROOT / "stacks.toml")}
LINUX = Facts(system="linux", machine="x86_64", python="3.11")
# A CUDA 12.4 driver with nothing else: what a fresh cloud GPU machine has.
GPU_BOX = Facts(system="linux", machine="x86_64", python="3.11", driver_cuda="12.4")
MAC = Facts(system="darwin", machine="arm64", python="3.11", macos="14.5")


def failing(stack, variant, facts):
    return {n.what: n for n in stack_needs(STACKS[stack], variant, facts) if not n.ok}


def test_every_linux_row_has_its_cuda_build():
    for stack in STACKS.values():
        if stack.os == "linux":
            assert cuda_build(stack.tensorflow_version()) is not None, stack.label
    assert cuda_build("2.13.1") == ("8.6", "11.8") and cuda_build("2.18.1") == ("9.3", "12.5")
    assert cuda_build("2.99.0") is None
    assert list(CUDA_BUILDS) == sorted(CUDA_BUILDS)


def test_the_cpu_build_needs_only_a_python_and_platform():
    assert failing("tf2.21.0", "cpu", LINUX) == {}
    assert describe_stack(STACKS["tf2.21.0"], "cpu", LINUX)[0] == "tf2.21.0 (CPU): runs here"


def test_wrong_python():
    missing = failing("tf2.21.0", "cpu", Facts("linux", "x86_64", "3.9"))
    assert list(missing) == ["Python"]
    assert (missing["Python"].needed, missing["Python"].found) == ("3.10-3.13", "3.9")


def test_pip_cuda_stacks_need_only_a_driver_for_their_major_version():
    # tensorflow[and-cuda] brings CUDA 12.5 and cuDNN 9.3; a 12.4 driver runs them
    # (CUDA minor-version compatibility). No system CUDA library is needed.
    assert failing("tf2.18.1", "cuda", GPU_BOX) == {}
    needs = {n.what: n for n in stack_needs(STACKS["tf2.18.1"], "cuda", GPU_BOX)}
    assert needs["cuDNN"].needed == "9.3" and "tensorflow[and-cuda]" in needs["cuDNN"].found
    # A CUDA 11 driver does not run a CUDA 12 build; 2.14 (CUDA 11.8, by pip) it does.
    old_driver = Facts("linux", "x86_64", "3.10", driver_cuda="11.4")
    assert list(failing("tf2.18.1", "cuda", old_driver)) == ["NVIDIA driver"]
    assert failing("tf2.14.1", "cuda", old_driver) == {}


def test_the_cuda_build_needs_its_own_pythons():
    # tensorflow[and-cuda] 2.14 has no Python 3.11 wheels (tensorrt); its CPU build does.
    assert failing("tf2.14.1", "cpu", GPU_BOX) == {}
    missing = failing("tf2.14.1", "cuda", GPU_BOX)
    assert list(missing) == ["Python"] and missing["Python"].needed == "3.9-3.10"


def test_no_driver_no_gpu():
    missing = failing("tf2.21.0", "cuda", LINUX)
    assert list(missing) == ["NVIDIA driver"]
    assert missing["NVIDIA driver"].found == "none (nvidia-smi lists no GPU)"


def test_system_cuda_stacks_without_cuda_libraries():
    missing = failing("tf2.13.1", "cuda", GPU_BOX)
    assert list(missing) == ["CUDA runtime", "cuDNN"]
    assert missing["CUDA runtime"].needed == "11.8 (system-installed, 11.x)"
    assert missing["cuDNN"].found == "no 8.x found by the dynamic loader"


def test_system_cuda_stacks_with_the_wrong_cudnn():
    facts = Facts("linux", "x86_64", "3.11", driver_cuda="12.4", cudart={11: "11.8"},
                  cudnn={8: "8.2.1", 9: "9.3.0"})
    missing = failing("tf2.12.1", "cuda", facts)
    assert list(missing) == ["cuDNN"]
    assert missing["cuDNN"].found == "8.2.1"
    # cuDNN 9 is another library to TensorFlow 2.13 (libcudnn.so.8): it does not count.
    only_9 = Facts("linux", "x86_64", "3.11", driver_cuda="12.4", cudart={11: "11.8"},
                   cudnn={9: "9.3.0"})
    assert failing("tf2.13.1", "cuda", only_9)["cuDNN"].found == (
        "no 8.x found by the dynamic loader (only 9.3.0)")
    right = Facts("linux", "x86_64", "3.11", driver_cuda="12.4", cudart={11: "11.8"},
                  cudnn={8: "8.9.7"})
    assert failing("tf2.13.1", "cuda", right) == {}


def test_pip_wheels_do_not_stand_in_for_system_libraries():
    facts = Facts("linux", "x86_64", "3.11", driver_cuda="12.4",
                  nvidia_wheels={"nvidia-cudnn-cu11": "8.6.0.163"})
    assert failing("tf2.13.1", "cuda", facts)["cuDNN"].found == (
        "no 8.x found by the dynamic loader; this Python has the wheel nvidia-cudnn-cu11 "
        "8.6.0.163, which it does not search")


@pytest.mark.parametrize("label,macos,ok", [
    ("tf2.18.1-metal1.2.0", "14.5", True),
    ("tf2.18.1-metal1.2.0", "12.1", True),
    ("tf2.18.1-metal1.2.0", "12.0.1", False),  # tensorflow-metal 0.5 on: macOS 12.1+
    ("tf2.18.1-metal1.2.0", "11.7", False),
    ("tf2.9.2-metal0.5.0", "12.0", False),
])
def test_macos_too_old(label, macos, ok):
    facts = Facts("darwin", "arm64", "3.10", macos=macos)
    assert ("macOS" not in failing(label, "cpu", facts)) is ok


def test_a_mac_stack_on_an_intel_mac_and_on_linux():
    intel = Facts("darwin", "x86_64", "3.11", macos="13.6")
    assert list(failing("tf2.18.1-metal1.2.0", "cpu", intel)) == ["architecture"]
    assert failing("tf2.13.1-metal1.0.0", "cpu", intel) == {}
    assert list(failing("tf2.18.1-metal1.2.0", "cpu", LINUX)) == ["OS", "architecture", "macOS"]
    lines = describe_stack(STACKS["tf2.18.1-metal1.2.0"], "cpu", MAC)
    assert lines[0] == "tf2.18.1-metal1.2.0 (Metal): runs here"
    assert lines[-1] == ("  ok  macOS: needs 12.1 or later (tensorflow-metal 1.2.0); "
                         "this machine: 14.5")


# --- detection: the parsers behind machine.detect_facts ---------------------------------

NVIDIA_SMI = """\
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
"""


def test_driver_cuda_from_nvidia_smi():
    assert machine.parse_driver_cuda(NVIDIA_SMI) == "12.4"
    assert machine.parse_driver_cuda("") is None
    assert machine.parse_driver_cuda(None) is None


def test_library_versions_as_cuda_and_cudnn_report_them():
    assert machine.decode_cuda_version(11080) == "11.8"
    assert machine.decode_cuda_version(12050) == "12.5"
    assert machine.decode_cudnn_version(8600) == "8.6.0"
    assert machine.decode_cudnn_version(8907) == "8.9.7"
    assert machine.decode_cudnn_version(90300) == "9.3.0"


def test_detect_facts_on_this_machine_has_plain_values():
    facts = machine.detect_facts(python="3.11")
    assert facts.python == "3.11" and facts.machine in ("x86_64", "arm64")
    assert all(isinstance(major, int) for major in {**facts.cudart, **facts.cudnn})
