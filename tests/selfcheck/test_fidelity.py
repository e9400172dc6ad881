"""Fidelity: the suite's value of each case against the bare-loop reference."""

import io
import sys

import pytest

from tfgpubench.selfcheck import fidelity, reference, reference_worker
from tfgpubench.selfcheck.reference import ReferenceWorker, measure_passes
from tfgpubench.selfcheck.stats import median as stats_median
from tfgpubench.suite import grid

EAGER = "multiply.Multiply.time_multiply('cpu', 2, 'int32', 'eager')"


def case_id(case):
    return f"multiply.Multiply.time_multiply('cpu', {case[0]}, '{case[1]}', '{case[2]}')"


def _pass(loops, faults=0.0):
    """A reference pass of `loops` ({case: per-op seconds of each loop}), each loop
    taking `faults` page faults per op."""
    return {case: {"loops": times, "faults": [faults] * len(times)}
            for case, times in loops.items()}


def test_each_case_is_compared_with_the_reference_loops_of_every_pass_pooled():
    # Samples as a shared VM records them: mostly fast, a round at the slow level.
    samples = [10.0e-6] * 9 + [10.2e-6] * 6 + [15e-6] * 5
    suite = {EAGER: {"value": 10.4e-6, "samples": samples},
             "multiply.Multiply.time_multiply('cpu', 2, 'int32', 'xla')":
                 {"value": float("nan"), "samples": None}}
    eager, xla = (2, "int32", "eager"), (2, "int32", "xla")
    # Three passes, the machine slower in the middle one; a case one pass could not time
    # (1000 eager) and a skipped case (xla, NaN in asv) are left out.
    passes = [_pass({eager: [10.0e-6] * 5 + [10.4e-6] * 5, xla: [1e-4],
                     (1000, "int32", "eager"): [1]}),
              _pass({eager: [10.4e-6] * 10, xla: [1e-4]}),
              _pass({eager: [10.0e-6] * 4 + [10.4e-6] * 6, xla: [1e-4]})]
    (row,) = fidelity.compare(suite, passes)
    assert row["bare"] == pytest.approx(10.4e-6) and row["ratio"] == pytest.approx(1.0)
    assert row["between_processes"] == pytest.approx(10.4 / 10.2) and row["ok"]
    # The fast ratio: the samples' 10th percentile over the pooled loops' one.
    assert row["suite_fast"] == pytest.approx(10e-6) and row["bare_fast"] == pytest.approx(10e-6)
    assert row["fast_ratio"] == pytest.approx(1.0) and row["fast_ok"]
    slower = {**suite, EAGER: {"value": 11e-6, "samples": [s * 1.1 for s in samples]}}
    (row,) = fidelity.compare(slower, passes)
    assert not row["ok"] and not row["fast_ok"]


def test_the_page_faults_of_each_side_are_compared_as_medians_per_op():
    big, small = (2048, "int32", "xla"), (2, "int32", "xla")
    suite = {case_id(big): {"value": 9e-3, "samples": [9e-3] * 4},
             case_id(small): {"value": 1e-5, "samples": [1e-5] * 4}}
    # Each reference process's first loop grows its heap: 4,096 fresh pages per op.
    passes = [{big: {"loops": [3e-3] * 4, "faults": [4096.0, 0.0, 0.0, 1.0]},
               small: {"loops": [1e-5], "faults": [0.0]}},
              {big: {"loops": [3e-3] * 4, "faults": [4096.0, 1.0, 1.0, 1.0]},
               small: {"loops": [1e-5], "faults": [0.0]}}]
    # A new engine's first blocks (asv's warm-up calls) grow its heap too: the typical
    # block, the one that makes asv's median, took none.
    grows_first = {big: [4096.0, 4096.0, 0.0, 0.0, 0.0, 0.0, 0.0]}
    big_row, small_row = sorted(fidelity.compare(suite, passes, grows_first),
                                key=lambda r: -r["size"])
    assert big_row["suite_faults"] == 0.0 and big_row["bare_faults"] == 1.0
    # No count from the engine (an older engine, or none ran the case): none shown.
    assert small_row["suite_faults"] is None and small_row["bare_faults"] == 0.0
    assert fidelity.fault_mismatches([big_row, small_row]) == []
    # Most of the engine's blocks on fresh pages: that is the recorded time's, and shown.
    (big_row, _) = sorted(fidelity.compare(suite, passes, {big: [4096.0] * 5 + [0.0] * 2}),
                          key=lambda r: -r["size"])
    assert big_row["suite_faults"] == 4096.0
    assert fidelity.fault_mismatches([big_row]) == [big_row]


def test_the_reference_is_compared_with_itself_half_against_half():
    # Passes alternate between the two halves; the machine is 8% slower whenever the
    # second half runs, so the reference cannot judge a 5% target on this case.
    loud, quiet = (2, "int32", "eager"), (2, "int32", "graph_loop")
    suite = {case_id(loud): {"value": 11.1e-6, "samples": None},
             case_id(quiet): {"value": 10.9e-6, "samples": None}}
    passes = [_pass({loud: [10e-6] * 5, quiet: [10e-6] * 5}),
              _pass({loud: [10.8e-6] * 5, quiet: [10e-6] * 5})] * 3
    loud_row, quiet_row = sorted(fidelity.compare(suite, passes), key=lambda r: r["mode"])
    assert loud_row["reference_itself"] == pytest.approx(1.08)
    assert not loud_row["reference_itself_ok"] and not loud_row["ok"]
    assert quiet_row["reference_itself"] == pytest.approx(1.0) and quiet_row["reference_itself_ok"]
    floor = fidelity.noise_floor([loud_row, quiet_row])
    # One case of two agrees with itself; of the two misses, the loud case's (by 6.7% of
    # the pooled 10.4 us) lies within its reference's 8% disagreement, the quiet's (9%
    # over a reference that agrees with itself) does not.
    assert "1/2 within target, 1.000-1.080" in floor
    assert "1 of the suite's 2 misses" in floor and "a quiet machine is needed" in floor
    # A single pass has no halves: the floor is not measured, not invented.
    (row,) = fidelity.compare(suite | {case_id(quiet): {"value": None}}, passes[:1])
    assert row["reference_itself"] is None and not row["reference_itself_ok"]
    assert "not measured" in fidelity.noise_floor([row])


def test_each_reference_pass_is_a_process_of_its_own(monkeypatch, capsys):
    # As each asv round is an engine of its own: a mid-size op's time is partly a draw of
    # the process, and the suite's value pools one draw a round. Each pass is two
    # processes, one for each half of the reference.
    case = (2, "int32", "eager")
    started, rounds = [], fidelity.suite_module("multiply").Multiply.rounds

    class Worker:
        def __init__(self):
            started.append(self)
            self.open = True
            self.draw = 1.0 + 0.1 * len(started)  # this process's speed

        def loops_and_faults(self, *asked):
            assert self.open and asked[:3] in fidelity.cases(fidelity.QUICK_SIZES)
            return [self.draw * 1e-5] * 3, [0.0] * 3

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.open = False

    class Scratch:
        launch_method = "forkserver"

        def run_interleaved(self, commits, rounds, bench, between, progress):
            for number in range(1, rounds + 1):
                assert len(started) == 2 * number and not started[-1].open
                between(number)

        def page_faults(self, commit):
            return {}

        def result_file(self, commit):
            return {}

    monkeypatch.setattr(fidelity, "ReferenceWorker", Worker)
    monkeypatch.setattr(fidelity.stats, "unroll_results",
                        lambda results: {case_id(case): {"value": 1.3e-5, "samples": None}})
    args, figures = type("Args", (), {"quick": True})(), {}
    fidelity.run_part(args, Scratch(), "c0ffee", figures)
    assert len(started) == 2 * (rounds + 1) and not any(w.open for w in started)
    (row,) = figures["fidelity"]["cases"]
    # The reference pools every process's loops: its median is between the two middle ones.
    assert row["bare"] == pytest.approx(1e-5 * (1.0 + 0.1 * (2 * rounds + 3) / 2))
    assert row["between_processes"] == pytest.approx(started[-1].draw / started[0].draw)
    # The half asked first alternates from one slot to the next: processes 1, 4, 5, 8, 9
    # (draws 1.1, 1.4, 1.5, 1.8, 1.9) are the first half, 2, 3, 6, 7, 10 the second.
    first = stats_median([1.1, 1.4, 1.5, 1.8, 1.9][: rounds + 1])
    second = stats_median([1.2, 1.3, 1.6, 1.7, 2.0][: rounds + 1])
    assert row["reference_itself"] == pytest.approx(max(first, second) / min(first, second))
    out = capsys.readouterr()
    assert "each half of the reference in a process of its own" in out.err
    assert "the reference against itself" in out.out


def test_page_fault_counts_differ_by_more_than_a_tenth_and_one_per_op():
    def row(suite, bare):
        return {"suite_faults": suite, "bare_faults": bare}

    same = [row(16385.0, 16385.0), row(16385.0, 15000.0), row(0.0, 0.9), row(None, 3.0)]
    assert fidelity.fault_mismatches(same) == []
    differ = [row(16385.0, 14000.0), row(2.0, 0.0), row(0.0, 45.0)]
    assert fidelity.fault_mismatches(differ) == differ


def test_without_recorded_samples_there_is_no_fast_ratio():
    suite = {EAGER: {"value": 10e-6, "samples": None}}
    (row,) = fidelity.compare(suite, [_pass({(2, "int32", "eager"): [10e-6, 9e-6, 11e-6]})])
    assert row["ok"] and row["fast_ratio"] is None and not row["fast_ok"]
    assert fidelity.compare(suite, []) == []


def test_the_grid_of_cases_is_every_size_dtype_and_mode():
    assert len(fidelity.cases([2, 1000])) == 16


def test_the_reference_times_each_mode_with_plain_tensorflow():
    pytest.importorskip("tensorflow")
    with ReferenceWorker() as worker:
        assert worker.ready["ready"]
        for mode in ("eager", "function", "xla", "graph_loop"):
            answer = worker.ask(2, "float32", mode)
            assert answer is not None and 1e-8 < answer["fast"] <= answer["median"] < 1e-2, mode
        assert worker.ask(2, "float32", "no-such-mode") is None


def test_the_bare_loop_runs_under_the_engines_malloc_settings_and_the_extra_environment():
    engine = reference.suite_module("engine")
    got = reference.worker_environ({"TF_NUM_INTRAOP_THREADS": "1"}, environ={"HOME": "/h"})
    assert got == dict(engine.ALLOCATOR_ENV, HOME="/h", TF_NUM_INTRAOP_THREADS="1")
    assert got == dict(engine.engine_environ({"HOME": "/h"}), TF_NUM_INTRAOP_THREADS="1")


def test_a_reference_pass_leaves_out_what_the_bare_loop_cannot_run():
    pytest.importorskip("tensorflow")
    with ReferenceWorker() as worker:
        got = fidelity.reference_pass(worker, [(2, "int32", "eager"), (2, "int32", "no-such")],
                                      seconds=0.05)
    (case,) = got
    loops, faults = got[case]["loops"], got[case]["faults"]
    assert case == (2, "int32", "eager") and len(loops) >= 2 and len(faults) == len(loops)
    # A 2x2 op touches no new memory: hardly a fault per op (a loop is thousands of ops).
    assert all(0 <= f < 1 for f in faults), faults


def test_two_environments_are_asked_in_turn():
    pytest.importorskip("tensorflow")
    envs = {"default": {}, "slowed": {"TF_NUM_INTRAOP_THREADS": "1"}}
    out = measure_passes([(2, "int32", "eager")], envs, passes=2)
    assert set(out[(2, "int32", "eager")]) == {"default", "slowed"}
    assert [set(p) for p in out[(2, "int32", "eager")]["slowed"]] == [{"median", "fast"}] * 2


def test_each_pass_of_the_truth_asks_new_workers_in_turn(monkeypatch):
    # Sensitivity's truth: one new process per environment each pass, asked in turn, the
    # order reversed every pass; each pass's figures kept.
    asked, started = [], []

    class Worker:
        def __init__(self, extra_env):
            self.name = "slowed" if extra_env else "default"
            self.open = True
            started.append(self)

        def ask(self, size, dtype, mode):
            assert self.open
            asked.append((len(started), self.name, size))
            if size == 512 and len(started) > 2:  # a case the second pass could not time
                return None
            base = {"default": 1.0, "slowed": 2.0}[self.name] * size
            return {"median": base * len(started), "fast": base}

        def close(self):
            self.open = False

    monkeypatch.setattr(reference, "ReferenceWorker", Worker)
    envs = {"default": {}, "slowed": {"TF_NUM_INTRAOP_THREADS": "1"}}
    out = measure_passes([(2, "int32", "eager"), (512, "int32", "eager")], envs, passes=2)
    assert len(started) == 4 and not any(w.open for w in started)
    assert asked == [(2, "default", 2), (2, "slowed", 2), (2, "default", 512), (2, "slowed", 512),
                     (4, "slowed", 2), (4, "default", 2), (4, "slowed", 512), (4, "default", 512)]
    # Each pass's figures in the order run; the case one pass could not time left out.
    assert out == {(2, "int32", "eager"): {
        "default": [{"median": 4.0, "fast": 2.0}, {"median": 8.0, "fast": 2.0}],
        "slowed": [{"median": 8.0, "fast": 4.0}, {"median": 16.0, "fast": 4.0}]}}


def test_the_bare_loop_calls_the_op_through_frames_like_the_suites_engine(monkeypatch, capsys):
    # TensorFlow records the calling frames with every eager op, each costing more the
    # further into its function its call sits: the truth must not be slower or faster
    # for its stack. Both start with `python -c` (one short frame above main and serve).
    tf = pytest.importorskip("tensorflow")
    from tests.suite.test_engine import FRAMES_TO_THE_LOOP, LARGEST_CALL_OFFSET, frames_below

    assert reference.WORKER_CODE.startswith("from ") and "main()" in reference.WORKER_CODE
    seen, real = [], tf.multiply

    def recording(*args, **kwargs):
        if sys._getframe(2).f_code.co_name == "_loop_times":  # timed, not calibrating
            seen.append(frames_below("main"))
        return real(*args, **kwargs)

    monkeypatch.setattr(tf, "multiply", recording)
    monkeypatch.setattr(sys, "stdin", io.StringIO("2 float32 eager 2 0.02\n"))
    assert reference_worker.main() == 0
    assert "loops" in capsys.readouterr().out.splitlines()[-1]
    assert seen and {len(offsets) for offsets in seen} == {FRAMES_TO_THE_LOOP}
    assert max(max(offsets) for offsets in seen) <= LARGEST_CALL_OFFSET, {tuple(o) for o in seen}


def test_each_bare_loop_runs_on_the_next_copy_of_the_input(monkeypatch):
    tf = pytest.importorskip("tensorflow")
    inputs, real = [], tf.multiply

    def recording(x, factor):
        inputs.append(id(x))
        return real(x, factor)

    monkeypatch.setattr(tf, "multiply", recording)
    call = reference_worker.build(tf, 2, "float32", "eager", copies=3)
    for _ in range(4):
        call(2)
    loops = [inputs[i:i + 2] for i in range(0, 8, 2)]
    assert all(a == b for a, b in loops)  # one loop, one x
    firsts = [loop[0] for loop in loops]
    assert len(set(firsts[:3])) == 3 and firsts[3] == firsts[0]


def test_the_driver_asks_for_as_many_copies_as_the_suite_times(monkeypatch):
    pytest.importorskip("tensorflow")
    with ReferenceWorker() as worker:
        sent = []
        write = worker.process.stdin.write
        monkeypatch.setattr(worker.process.stdin, "write", lambda text: sent.append(text)
                            or write(text))
        worker.loops(512, "float32", "eager", 0.02)
        worker.ask(4096, "float32", "graph_loop")
    assert sent == [f"512 float32 eager {grid.input_copies(512, 'float32')} 0.02\n",
                    f"4096 float32 graph_loop {grid.input_copies(4096, 'float32')}\n"]
