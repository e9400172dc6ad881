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


# Each probe at its own speed, as on the suite's VM (2x2 ~10 us, 2048x2048 ~600 us): a
# probe read against the other's figures would show as a full speed moved by x60.
SMALL, LARGE = [10e-6] * 500, [600e-6] * 500
SMALL_SWITCHING = [10e-6] * 650 + [15e-6] * 350
# As the suite's VM read at one moment: the small probe steady, the large one slow in a
# quarter of its loops.
LARGE_SLOW_AT_TIMES = [600e-6] * 750 + [800e-6] * 250


def run(monkeypatch, *speeds, again=None):
    """figures, output, the cases asked: run_part with the probes' loops from `speeds`,
    then, where `again` has more, the probes at the end with those."""
    worker = ProbeWorker(list(speeds) + list(again or []))
    monkeypatch.setattr(stability, "ReferenceWorker", worker)
    args, figures, steady = SimpleNamespace(factor=1.1), {}, []
    steady.append(stability.run_part(args, figures))
    if again:
        steady.append(stability.run_part(args, figures, again=True))
    return figures, steady, worker.asked


def test_each_probe_times_its_own_case_and_is_recorded_under_its_name(monkeypatch, capsys):
    figures, steady, asked = run(monkeypatch, SMALL, LARGE)
    assert steady == [True]
    assert asked == [(2, "int32", "eager"), (2048, "float32", "eager")]
    probes = figures["stability"]["probes"]
    assert probes["small"]["fast"] == pytest.approx(10e-6)
    assert probes["large"]["fast"] == pytest.approx(600e-6)
    assert figures["stability"]["steady"] is True
    assert "not steady" not in capsys.readouterr().out


def test_steady_for_small_ops_is_not_steady_for_large_ones(monkeypatch, capsys):
    figures, steady, _ = run(monkeypatch, SMALL, LARGE_SLOW_AT_TIMES)
    assert steady == [False] and figures["stability"]["steady"] is False
    assert figures["stability"]["probes"]["small"]["steady"]
    assert figures["stability"]["probes"]["large"]["p90_over_fast"] == pytest.approx(800 / 600)
    out = capsys.readouterr().out
    assert "steady for small ops, not for large ones" in out
    assert "not steady to the targets" not in out


def test_a_machine_unsteady_for_small_ops_is_said_to_be_so_once(monkeypatch, capsys):
    _, steady, _ = run(monkeypatch, SMALL_SWITCHING, LARGE_SLOW_AT_TIMES)
    out = capsys.readouterr().out
    assert steady == [False] and "the machine itself is not steady to the targets" in out
    assert "steady for small ops, not for large ones" not in out


def test_the_probes_at_the_end_are_read_against_the_first(monkeypatch, capsys):
    figures, steady, asked = run(monkeypatch, SMALL, LARGE, again=[SMALL_SWITCHING, LARGE])
    assert steady == [True, False] and len(asked) == 4
    out = capsys.readouterr().out
    assert "stability, again after the other parts" in out
    assert "across the run, small: steady at the start PASS, at the end FAIL" in out
    assert "across the run, large: steady at the start PASS, at the end PASS" in out
    run_ = figures["stability_across_the_run"]
    assert run_["steady"] is False and run_["probes"]["large"]["steady"] is True
    # Each probe against its own start, not the other's.
    assert run_["probes"]["large"]["fast_moved"] == pytest.approx(1.0)
    assert figures["stability"]["steady"] and not figures["stability_after"]["steady"]


def test_the_large_probe_alone_failing_at_the_end_fails_the_run(monkeypatch, capsys):
    figures, steady, _ = run(monkeypatch, SMALL, LARGE, again=[SMALL, LARGE_SLOW_AT_TIMES])
    assert steady == [True, False]
    assert figures["stability_across_the_run"]["probes"]["small"]["steady"] is True
    assert "across the run, large: steady at the start PASS, at the end FAIL" in (
        capsys.readouterr().out)


def test_the_worker_times_loops_back_to_back_for_the_time_asked():
    pytest.importorskip("tensorflow")
    with ReferenceWorker() as worker:
        loops = worker.loops(2, "int32", "eager", 0.5)
        # ~10 ms loops for 0.5 s (less the calibration, more on a slow machine).
        assert 10 <= len(loops) <= 60 and all(1e-8 < t < 1e-3 for t in loops)
        with pytest.raises(RuntimeError, match="could not time"):
            worker.loops(2, "int32", "no-such-mode", 0.1)
