"""What achieved bandwidth is compared with: the CPU's all-core ceiling, a GPU's published
peak found by its whole chip name, and what the report says when a figure reads above."""

import pytest

from tfgpubench.names import CPU_IN_PLACE_REFERENCE, CPU_ONE_THREAD_REFERENCE, CPU_REFERENCE
from tfgpubench.report.analysis import LinearFit
from tfgpubench.report.asvresults import Measurement, Run
from tfgpubench.report.build import above_reference_note, bytes_moved, fit_above_reference_note
from tfgpubench.report.references import (
    GPU_SPEC_BANDWIDTH,
    Reference,
    cpu_reference,
    gpu_spec,
)


def run_with(*measurements):
    run = Run(path="p", machine="m", commit_hash="c" * 40, env_name="e", date=0)
    for m in measurements:
        run.measurements.setdefault(m.benchmark, []).append(m)
    return run


def test_the_cpu_ceiling_is_stream_scale_on_every_core_at_its_largest_size():
    run = run_with(Measurement(CPU_REFERENCE, {"size": 4096}, 31.0),
                   Measurement(CPU_REFERENCE, {"size": 8192}, 29.0),
                   Measurement(CPU_ONE_THREAD_REFERENCE, {"size": 4096}, 20.0))
    reference = cpu_reference(run)
    assert reference.bytes_per_second == 29e9 and reference.size == 8192 and reference.ceiling
    # Every size it was measured at is kept: a case's note compares with its own size.
    assert reference.at(4096) == 31e9 and reference.at(8192) == 29e9 and reference.at(2) is None
    assert "every core" in reference.source
    assert reference.in_place_at(4096) is None  # results recorded before it: none


def test_the_cpu_reference_keeps_the_same_kernel_written_in_place_by_size():
    run = run_with(Measurement(CPU_REFERENCE, {"size": 4096}, 31.0),
                   Measurement(CPU_REFERENCE, {"size": 8192}, 29.0),
                   Measurement(CPU_IN_PLACE_REFERENCE, {"size": 4096}, 48.0),
                   Measurement(CPU_IN_PLACE_REFERENCE, {"size": 8192}, 45.0))
    reference = cpu_reference(run)
    # The ceiling stays the kernel into a new array: the in-place one only explains.
    assert reference.bytes_per_second == 29e9
    assert reference.in_place_at(4096) == 48e9 and reference.in_place_at(8192) == 45e9


def test_older_results_fall_back_to_one_thread_and_say_it_is_no_ceiling():
    reference = cpu_reference(run_with(Measurement(CPU_ONE_THREAD_REFERENCE, {"size": 4096}, 20.0)))
    assert reference.ceiling is False and "not a ceiling" in reference.source
    assert cpu_reference(run_with()) is None


@pytest.mark.parametrize("share,size,reference,words", [
    (0.9, 4096, Reference(30e9, "s", 8192, True), ""),
    (1.3, 4096, Reference(20e9, "s", 4096, False), "one thread"),
    (1.1, 4096, Reference(30e9, "s", 8192, True), "may stay in the caches"),
    (1.1, 8192, Reference(30e9, "s", 8192, True), "different load"),
    # The reference measured at the case's size too: that figure decides. 1.1 x 30 GB/s
    # is 33 GB/s: below a cached 40 GB/s at 4096x4096 (the caches, shown), above a 20
    # GB/s one (a data size the caches do not hold: not the caches).
    (1.1, 4096, Reference(30e9, "s", 8192, True, ((4096, 40e9), (8192, 30e9))),
     "the reference itself read 40 GB/s at that size (82% of it)"),
    (1.1, 4096, Reference(30e9, "s", 8192, True, ((4096, 20e9), (8192, 30e9))),
     "too (20 GB/s, 165%), so not the caches alone"),
])
def test_a_share_above_the_reference_says_why(share, size, reference, words):
    note = above_reference_note(share, size, reference, "eager")
    assert (note == "") if not words else (words in note)


# 1.5 x 30 GB/s is 45 GB/s at 4096x4096, where the reference into a new array read 32.
IN_PLACE = Reference(30e9, "s", 8192, True, ((4096, 32e9), (8192, 30e9)),
                     ((4096, 50e9), (8192, 48e9)))


@pytest.mark.parametrize("share,mode,reference,words", [
    # A mode that writes over its input, at or under the in-place kernel: that is why.
    (1.5, "graph_loop", IN_PLACE,
     "graph_loop writes each product over the one before, which spares the CPU the read of "
     "each line of a new array before writing it; STREAM scale written over its input read "
     "50 GB/s at 4096x4096 in the same run (90% of it)"),
    # Above the in-place kernel too: not that alone.
    (1.8, "graph_loop", IN_PLACE, "so not the caches alone"),
    # A mode that writes a new array each op gets no such reason from the same figures.
    (1.5, "eager", IN_PLACE, "so not the caches alone"),
    # Results without the in-place kernel: the old reasons.
    (1.5, "graph_loop", Reference(30e9, "s", 8192, True, ((4096, 32e9), (8192, 30e9))),
     "so not the caches alone"),
    # Where the caches explain it, they are named first.
    (1.05, "graph_loop", IN_PLACE, "stays in the caches"),
    # The case's size is the reference's own (no same-size figure apart from it).
    (1.5, "graph_loop", Reference(32e9, "s", 4096, True, ((4096, 32e9),), ((4096, 50e9),)),
     "written over its input read 50 GB/s at 4096x4096 in the same run (96% of it)"),
])
def test_a_loop_writing_in_place_is_compared_with_the_kernel_written_in_place(
        share, mode, reference, words):
    assert words in above_reference_note(share, 4096, reference, mode)



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


def fit_row(sizes, used):
    """A fit_rows row whose fit kept the sizes marked used (the coefficients do not matter)."""
    residuals = tuple((bytes_moved(s, "float32"), 0.0, u) for s, u in zip(sizes, used))
    return {"sizes": sizes, "fit": LinearFit(1e-5, 1e-11, 0.0, 0.0, sum(used), residuals)}


def test_a_fitted_bandwidth_above_the_reference_names_the_sizes_its_slope_comes_from():
    reference = Reference(30e9, "s", 8192, True)
    sizes = [2, 128, 1000, 2048, 4096]
    # Kept up to 1000x1000, the larger sizes left out: the slope is theirs, not 4096's.
    row = fit_row(sizes, [True, True, True, False, False])
    assert fit_above_reference_note(1.6, row, reference) == (
        "fit 1/b above: its slope comes from sizes up to 1000x1000 (7.63 MiB per op); the "
        "larger ones measured, up to 4096x4096 (128 MiB per op), were left out of the fit "
        "(their residuals above)")
    # At or under the reference: nothing to say.
    assert fit_above_reference_note(0.9, row, reference) == ""
    # A fit that kept the largest size measured: the sizes do not explain it, even though
    # the reference (8192x8192) moves more bytes than any of them.
    assert fit_above_reference_note(1.6, fit_row(sizes, [True, True, False, True, True]),
                                    reference) == ""
