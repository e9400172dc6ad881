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


class ProbeWorker:
    """The reference worker as the stability part uses it: each probe's loops, in turn,
    from `speeds` (one list of loops per call)."""

    def __init__(self, speeds):
        self.speeds, self.asked = iter(speeds), []

    def __call__(self):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def loops(self, size, dtype, mode, seconds):
        self.asked.append((size, dtype, mode))
        return next(self.speeds)


STEADY, SWITCHING = [10e-6] * 500, [10e-6] * 650 + [15e-6] * 350


def test_the_probe_at_the_end_is_read_against_the_first(monkeypatch, capsys):
    worker = ProbeWorker([STEADY, STEADY, SWITCHING, STEADY])
    monkeypatch.setattr(stability, "ReferenceWorker", worker)
    args, figures = SimpleNamespace(factor=1.1), {}
    assert stability.run_part(args, figures) is True
    assert stability.run_part(args, figures, again=True) is False
    out = capsys.readouterr().out
    assert "stability, again after the other parts" in out
    assert "across the run, one core: steady at the start PASS, at the end FAIL" in out
    assert "across the run, every core: steady at the start PASS, at the end PASS" in out
    assert figures["stability"]["steady"] and not figures["stability_after"]["steady"]
    run = figures["stability_across_the_run"]
    assert run["steady"] is False and run["every_core"]["steady"] is True
    # Each probe times its own case, the seed's and a large one, in that order.
    assert worker.asked == [(2, "int32", "eager"), (2048, "float32", "eager")] * 2


def test_steady_on_one_core_is_not_steady_across_them(monkeypatch, capsys):
    # As the suite's VM read at one moment: the 2x2 loop steady, the op split over both
    # cores slow in a quarter of its loops.
    split = [600e-6] * 750 + [800e-6] * 250
    monkeypatch.setattr(stability, "ReferenceWorker", ProbeWorker([STEADY, split]))
    figures = {}
    assert stability.run_part(SimpleNamespace(factor=1.1), figures) is False
    assert figures["stability"]["one_core"]["steady"]
    assert figures["stability"]["every_core"]["p90_over_fast"] == pytest.approx(800 / 600)
    out = capsys.readouterr().out
    assert "steady on one core, not across them" in out
    assert "not steady to the targets" not in out


def test_the_worker_times_loops_back_to_back_for_the_time_asked():
    pytest.importorskip("tensorflow")
    with ReferenceWorker() as worker:
        loops = worker.loops(2, "int32", "eager", 0.5)
        # ~10 ms loops for 0.5 s (less the calibration, more on a slow machine).
        assert 10 <= len(loops) <= 60 and all(1e-8 < t < 1e-3 for t in loops)
        with pytest.raises(RuntimeError, match="could not time"):
            worker.loops(2, "int32", "no-such-mode", 0.1)
