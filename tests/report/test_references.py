"""What achieved bandwidth is compared with, and what the report says when it reads above."""

import pytest

from tfgpubench.names import CPU_ONE_THREAD_REFERENCE, CPU_REFERENCE
from tfgpubench.report.asvresults import Measurement, Run
from tfgpubench.report.build import above_reference_note
from tfgpubench.report.references import Reference, cpu_reference, gpu_spec


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
    assert "every core" in reference.source


def test_older_results_fall_back_to_one_thread_and_say_it_is_no_ceiling():
    reference = cpu_reference(run_with(Measurement(CPU_ONE_THREAD_REFERENCE, {"size": 4096}, 20.0)))
    assert reference.ceiling is False and "not a ceiling" in reference.source
    assert cpu_reference(run_with()) is None


@pytest.mark.parametrize("share,size,reference,words", [
    (0.9, 4096, Reference(30e9, "s", 8192, True), ""),
    (1.3, 4096, Reference(20e9, "s", 4096, False), "one thread"),
    (1.1, 4096, Reference(30e9, "s", 8192, True), "stays in the caches"),
    (1.1, 8192, Reference(30e9, "s", 8192, True), "different load"),
])
def test_a_share_above_the_reference_says_why(share, size, reference, words):
    note = above_reference_note(share, size, reference)
    assert (note == "") if not words else (words in note)


def test_gpu_peak_lookup_prefers_the_longest_matching_name():
    assert gpu_spec({"gpu": "Apple M1 Pro (16-core GPU)"})[1] == 200.0
    assert gpu_spec({"gpu": "Apple M1 (8-core GPU)"})[1] == 68.0
    assert gpu_spec({"gpu": "none"}) is None
