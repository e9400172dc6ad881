"""A GPU's published peak is found by its whole chip name, never a shorter one's."""

import pytest

from tfgpubench.report.references import GPU_SPEC_BANDWIDTH, gpu_spec


def peak(gpu, **other):
    spec = gpu_spec({"gpu": gpu, **other})
    return spec and (spec[0], spec[1])


@pytest.mark.parametrize("gpu,expected", [
    ("Apple M2 Ultra (76-core GPU, 192 GB unified memory)", ("Apple M2 Ultra", 800.0)),
    ("Apple M1 Ultra (64-core GPU, 128 GB unified memory)", ("Apple M1 Ultra", 800.0)),
    ("Apple M2 (10-core GPU, 24 GB unified memory)", ("Apple M2", 100.0)),
    ("Apple M1 Pro (16-core GPU, 32 GB unified memory)", ("Apple M1 Pro", 200.0)),
    ("Apple M4 (10-core GPU, 16 GB unified memory)", ("Apple M4", 120.0)),
    ("Apple M4 Pro (20-core GPU, 48 GB unified memory)", ("Apple M4 Pro", 273.0)),
    ("Apple M4 Max (40-core GPU, 128 GB unified memory)", ("Apple M4 Max", 546.0)),
    ("NVIDIA H200 (143771 MiB)", ("NVIDIA H200", 4800.0)),
    ("2x NVIDIA H200 (143771 MiB)", ("NVIDIA H200", 4800.0)),
    ("Intel UHD Graphics 630 (1536 MB) + AMD Radeon Pro 5300M (4 GB)",
     ("AMD Radeon Pro 5300M", 192.0)),
    # Chips without a figure confirmed here get none, not a smaller chip's.
    ("Apple M3 (10-core GPU, 16 GB unified memory)", None),
    ("Apple M10 (99-core GPU)", None),
    ("NVIDIA H20 (97871 MiB)", None),
    ("NVIDIA H2000 (1 MiB)", None),
    ("none", None),
])
def test_whole_chip_names_only(gpu, expected):
    assert peak(gpu) == expected


def test_the_cpu_key_names_the_chip_too():
    assert peak("none", cpu="Apple M2 Ultra") == ("Apple M2 Ultra", 800.0)


def test_every_entry_is_found_by_its_own_name():
    for name, gigabytes, _ in GPU_SPEC_BANDWIDTH:
        assert peak(f"{name} (details)") == (name, gigabytes)
