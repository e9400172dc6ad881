"""Stability: the machine's own steadiness, from loops timed by the reference worker."""

from types import SimpleNamespace

import pytest

from tfgpubench.selfcheck import stability
from tfgpubench.selfcheck.reference import ReferenceWorker


def test_a_machine_of_its_own_is_steady():
    loops = [10e-6 * (1 + 0.002 * (i % 10)) for i in range(500)]
    got = stability.summarize(loops)
    assert got["steady"] and got["slow_share"] == 0
    assert got["median_over_fast"] == pytest.approx(1.0, abs=0.02)


def test_a_vm_switching_between_two_speeds_is_not():
    # As this suite's VM measured: 12.5 us at full speed, ~19 us for 35% of the loops.
    loops = [12.5e-6] * 650 + [19e-6] * 350
    got = stability.summarize(loops)
    assert not got["steady"] and got["slow_share"] == pytest.approx(0.35)
    assert got["fast"] == pytest.approx(12.5e-6) and got["p90_over_fast"] == pytest.approx(1.52)
    # Its median is still at full speed: only the tail breaks the A/A target.
    assert got["median_over_fast"] == pytest.approx(1.0)


def test_a_slow_majority_moves_the_median():
    loops = [10e-6] * 40 + [11e-6] * 60
    got = stability.summarize(loops)
    assert got["median_over_fast"] == pytest.approx(1.1) and not got["steady"]


def test_steady_throughout_needs_both_probes_steady_at_one_speed():
    start = stability.summarize([10e-6] * 500)
    assert stability.across_the_run(start, stability.summarize([10.2e-6] * 500)) == {
        "fast_moved": pytest.approx(1.02), "steady": True}
    # Steady at each end, but at another full speed: the parts between saw neither.
    moved = stability.across_the_run(start, stability.summarize([13e-6] * 500))
    assert moved["fast_moved"] == pytest.approx(1.3) and not moved["steady"]
    # One speed at both ends, but the end switches between two speeds.
    switching = stability.summarize([10e-6] * 650 + [15e-6] * 350)
    assert not stability.across_the_run(start, switching)["steady"]
    assert not stability.across_the_run(switching, start)["steady"]


def test_the_probe_at_the_end_is_read_against_the_first(monkeypatch, capsys):
    speeds = iter([[10e-6] * 500, [10e-6] * 650 + [15e-6] * 350])

    class Worker:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def loops(self, size, dtype, mode, seconds):
            return next(speeds)

    monkeypatch.setattr(stability, "ReferenceWorker", Worker)
    args, figures = SimpleNamespace(factor=1.1), {}
    assert stability.run_part(args, figures) is True
    assert stability.run_part(args, figures, again=True) is False
    out = capsys.readouterr().out
    assert "stability, again after the other parts" in out
    assert "steady at the start PASS, at the end FAIL" in out
    assert figures["stability"]["steady"] and not figures["stability_after"]["steady"]
    assert figures["stability_across_the_run"]["steady"] is False


def test_the_worker_times_loops_back_to_back_for_the_time_asked():
    pytest.importorskip("tensorflow")
    with ReferenceWorker() as worker:
        loops = worker.loops(2, "int32", "eager", 0.5)
        # ~10 ms loops for 0.5 s (less the calibration, more on a slow machine).
        assert 10 <= len(loops) <= 60 and all(1e-8 < t < 1e-3 for t in loops)
        with pytest.raises(RuntimeError, match="could not time"):
            worker.loops(2, "int32", "no-such-mode", 0.1)
