"""What achieved bandwidth is compared with, and where each number comes from.

The CPU's reference is measured in the same run: STREAM's "scale" kernel (a
multiply by a scalar into a preallocated output) split across every core,
recorded by reference.StreamScale, and the same kernel written over its input
(reference.StreamScaleInPlace), which a loop writing each product over the one
before is compared with; results recorded before them have only the one-thread
NumpyScale, which is not a ceiling for TensorFlow's multi-threaded kernels and
is named so. A GPU's reference is its best measured copy when the suite records
one, else the memory bandwidth its maker publishes.
"""

import re
from dataclasses import dataclass

from ..names import CPU_IN_PLACE_REFERENCE, CPU_ONE_THREAD_REFERENCE, CPU_REFERENCE

# Peak memory bandwidth in GB/s as published by the makers (see
# shared/notes/facts.md). A name matches a machine.json value (asv keeps any
# extra key such as "gpu" beside "cpu", "arch"...) only as a whole chip name:
# "Apple M2" is not found in "Apple M2 Ultra", nor "NVIDIA H20" in "NVIDIA H200".
# Left out for want of a figure confirmed here: the base M3, and the M4 Max with
# the 14-core CPU (its 546 GB/s is the 16-core part's; Apple lists less for it).
GPU_SPEC_BANDWIDTH = [
    ("AMD Radeon Pro 5300M", 192.0, "AMD spec: 128-bit GDDR6 at 12 Gbps"),
    ("Apple M1", 68.0, "Apple M1 specifications"),
    ("Apple M1 Pro", 200.0, "Apple M1 Pro specifications"),
    ("Apple M1 Max", 400.0, "Apple M1 Max specifications"),
    ("Apple M1 Ultra", 800.0, "Apple's M1 Ultra announcement, 2022-03-08"),
    ("Apple M2", 100.0, "Apple M2 specifications"),
    ("Apple M2 Pro", 200.0, "Apple M2 Pro specifications"),
    ("Apple M2 Max", 400.0, "Apple M2 Max specifications"),
    ("Apple M2 Ultra", 800.0, "Apple's M2 Ultra announcement, WWDC 2023-06-05"),
    ("Apple M3 Pro", 150.0, "Apple M3 Pro specifications"),
    ("Apple M3 Max", 400.0, "Apple M3 Max specifications (300 GB/s for the 14-core CPU part)"),
    ("Apple M4", 120.0, "Apple's M4 Pro and M4 Max announcement, 2024-10-30"),
    ("Apple M4 Pro", 273.0, "Apple's M4 Pro and M4 Max announcement, 2024-10-30"),
    ("Apple M4 Max", 546.0, "Apple's M4 Max announcement, 2024-10-30: up to 546 GB/s, the "
                            "16-core CPU part"),
    ("NVIDIA H200", 4800.0, "NVIDIA H200 datasheet"),
]
# Words that make a longer chip name of the one before them ("Apple M2" + " Ultra").
CHIP_VARIANTS = ("Pro", "Max", "Ultra")


@dataclass(frozen=True)
class Reference:
    """A bandwidth to compare with, in bytes per second, and where it comes from.

    size: the tensor side it was measured at (None for a published figure);
    ceiling: whether nothing on that device should exceed it;
    by_size: ((size, bytes per second), ...) of every size the same run measured it at;
    in_place_by_size: the same for the kernel written over its input, where measured.
    """

    bytes_per_second: float
    source: str
    size: int = None
    ceiling: bool = True
    by_size: tuple = ()
    in_place_by_size: tuple = ()

    def at(self, size):
        """Bytes per second the reference itself read at `size`, or None."""
        return dict(self.by_size).get(size)

    def in_place_at(self, size):
        """Bytes per second the reference written over its input read at `size`, or None."""
        return dict(self.in_place_by_size).get(size)


def _by_size(measurements):
    return tuple(sorted((m.params.get("size"), m.value * 1e9) for m in measurements))


def cpu_reference(run):
    """STREAM-scale bandwidth on every core from the same run, at its largest size; else,
    in older results, numpy's one-thread figure, marked as no ceiling.

    The largest size is the one least flattered by caches; STREAM itself
    asks for arrays well beyond the last-level cache.
    """
    for name, ceiling in ((CPU_REFERENCE, True), (CPU_ONE_THREAD_REFERENCE, False)):
        measured = [m for m in run.benchmark(name) if m.measured]
        if measured:
            largest = max(measured, key=lambda m: m.params.get("size", 0))
            size = largest.params.get("size")
            what = "every core" if ceiling else "one thread, not a ceiling for TensorFlow"
            in_place = [m for m in run.benchmark(CPU_IN_PLACE_REFERENCE) if m.measured]
            return Reference(largest.value * 1e9,
                             f"STREAM scale at {size}x{size} float32 on {what}, same run",
                             size, ceiling, _by_size(measured), _by_size(in_place))
    return None


def gpu_reference(run, machine_info):
    """The GPU's best measured copy bandwidth in this run, else its published peak, else None.

    A measured copy is any track_ benchmark of the suite's `reference` module
    reporting GB/s for device 'gpu'.
    """
    copies = [
        m
        for name, measurements in run.measurements.items()
        if name.startswith("reference.")
        and name not in (CPU_REFERENCE, CPU_IN_PLACE_REFERENCE, CPU_ONE_THREAD_REFERENCE)
        for m in measurements
        if m.measured and m.unit == "GB/s" and m.params.get("device") == "gpu"
    ]
    if copies:
        best = max(copies, key=lambda m: m.value)
        return Reference(
            best.value * 1e9, f"best measured {best.benchmark} {best.params}, same run"
        )
    spec = gpu_spec(machine_info)
    if spec is None:
        return None
    name, gigabytes, source = spec
    return Reference(gigabytes * 1e9, f"{name} published peak ({source})")


def names_chip(text, name):
    """Whether `name` appears in `text` as a whole chip name: not inside a longer word
    or model number, and not followed by a variant (Pro, Max, Ultra)."""
    variants = "|".join(CHIP_VARIANTS)
    pattern = rf"(?<![\w-]){re.escape(name)}(?![\w-])(?!\s+(?:{variants})\b)"
    return re.search(pattern, text, flags=re.IGNORECASE) is not None


def gpu_spec(machine_info):
    """(name, GB/s, source) of the known GPU that machine.json names, or None."""
    text = " ".join(str(v) for v in (machine_info or {}).values())
    matches = [spec for spec in GPU_SPEC_BANDWIDTH if names_chip(text, spec[0])]
    return max(matches, key=lambda spec: len(spec[0])) if matches else None
