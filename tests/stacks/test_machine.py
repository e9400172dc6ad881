"""What asv records about the machine: GPU, OS version, CPU."""

import json

import pytest

from tfgpubench.stacks import machine


def test_nvidia_smi_lines():
    assert machine.parse_nvidia_smi("NVIDIA H200, 143771 MiB\n") == "NVIDIA H200 (143771 MiB)"
    assert machine.parse_nvidia_smi("NVIDIA A100-SXM4-80GB, 81920 MiB\n" * 2) == (
        "2x NVIDIA A100-SXM4-80GB (81920 MiB)")
    assert machine.parse_nvidia_smi("") is None


def test_system_profiler_apple_silicon_and_amd():
    apple = {"SPDisplaysDataType": [{"sppci_model": "Apple M1 Pro", "sppci_cores": "16"}]}
    assert machine.parse_system_profiler(json.dumps(apple), 32 * 2**30) == (
        "Apple M1 Pro (16-core GPU, 32 GB unified memory)")
    intel_mac = {"SPDisplaysDataType": [
        {"sppci_model": "Intel UHD Graphics 630", "spdisplays_vram": "1536 MB"},
        {"sppci_model": "AMD Radeon Pro 5300M", "spdisplays_vram": "4 GB"}]}
    assert machine.parse_system_profiler(json.dumps(intel_mac)) == (
        "Intel UHD Graphics 630 (1536 MB) + AMD Radeon Pro 5300M (4 GB)")
    assert machine.parse_system_profiler("not json") is None


def test_machine_info_keeps_user_edits_and_refreshes_gpu_and_os():
    info = machine.machine_info(
        existing={"machine": "ci-m1", "cpu": "Apple M1 Pro (8P+2E)", "gpu": "old"},
        defaults={"machine": "host", "cpu": "Apple M1 Pro", "ram": "32GB"},
        gpu="Apple M1 Pro (16-core GPU, 32 GB unified memory)", os_name="macOS 14.5")
    assert info == {"machine": "ci-m1", "cpu": "Apple M1 Pro (8P+2E)", "ram": "32GB",
                    "gpu": "Apple M1 Pro (16-core GPU, 32 GB unified memory)",
                    "os": "macOS 14.5"}


def test_os_release():
    assert machine.parse_os_release('NAME="Debian"\nPRETTY_NAME="Debian GNU/Linux 12"\n') == (
        "Debian GNU/Linux 12")


# --- is it the same machine? --------------------------------------------------------

COMMITTED = {"arch": "x86_64", "cpu": "AMD EPYC", "gpu": "none", "machine": "vm",
             "num_cpu": "2", "os": "Debian GNU/Linux 12 (bookworm), Linux 6.18.44-fc-v857",
             "ram": "25276059648", "version": 1}
# This project's other VM, also named vm: same memory to 0.2%, another CPU, kernel build.
OTHER_VM = {"arch": "x86_64", "cpu": "Intel(R) Xeon(R) Processor", "gpu": "none",
            "machine": "vm", "num_cpu": "2", "ram": "25325268992",
            "os": "Debian GNU/Linux 12 (bookworm), Linux 6.18.44-fc-v657"}


def test_os_versions_compare_to_major_minor():
    assert machine.os_release("Debian GNU/Linux 12 (bookworm), Linux 6.18.44-fc-v857") == (
        "Debian GNU/Linux 12 (bookworm), Linux 6.18")
    assert machine.os_release("macOS 14.5.1 (Darwin 23.5.0)") == "macOS 14.5 (Darwin 23.5)"
    assert machine.os_release("macOS 14.5") != machine.os_release("macOS 15.0")


def test_differences_name_what_changed():
    assert machine.differences(COMMITTED, OTHER_VM) == [
        "cpu 'AMD EPYC' (this machine: 'Intel(R) Xeon(R) Processor')"]
    assert machine.differences(COMMITTED, dict(COMMITTED, ram="24100000000")) == []  # -4.7%
    assert machine.differences(COMMITTED, dict(COMMITTED, ram="23000000000")) == [
        "ram '25276059648' (this machine: '23000000000')"]
    assert machine.differences(COMMITTED, dict(COMMITTED, os="Debian GNU/Linux 13 (trixie), "
                                               "Linux 6.12.9")) != []


def test_the_host_name_does_not_take_another_machines_results():
    conflict = machine.name_conflict("vm", COMMITTED, OTHER_VM, chosen=False)
    assert conflict == (
        "results/vm/ holds another machine's results (cpu 'AMD EPYC' (this machine: "
        "'Intel(R) Xeon(R) Processor')); vm is only this machine's host name: pass --machine "
        "NAME to keep this machine's results apart (--machine vm to measure again over them)")
    # Named on purpose, the same hardware, or no results yet: no conflict.
    assert machine.name_conflict("vm", COMMITTED, OTHER_VM, chosen=True) is None
    assert machine.name_conflict("vm", COMMITTED, dict(COMMITTED, os="Debian 13"),
                                 chosen=False) is None
    assert machine.name_conflict("vm", None, OTHER_VM, chosen=False) is None


@pytest.mark.parametrize("name,ok", [
    ("vm", True), ("ci-m1.local", True), ("runner_7", True),
    ("", False), (".", False), ("..", False), ("../x", False), ("a/b", False),
    ("-x", False), ("benchmarks.json", False), ("x" * 65, False), ("name with space", False),
])
def test_machine_names_that_can_name_a_results_directory(name, ok):
    assert (machine.check_machine_name(name) is None) is ok
