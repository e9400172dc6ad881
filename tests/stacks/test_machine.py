"""What asv records about the machine: GPU, OS version, CPU."""

import json

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
