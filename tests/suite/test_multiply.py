"""multiply.Multiply under asv_runner's own timing loop, served by this process's engine
(conftest.py): what asv does with each call of the benchmark."""

import itertools

import pytest

from benchmarks import engine, multiply

pytest.importorskip("tensorflow")
asv_runner_time = pytest.importorskip("asv_runner.benchmarks.time")

CASE = ("cpu", 2, "float32", "eager")


def test_asv_times_every_block_it_runs_each_after_the_engines_own_warm_up(monkeypatch):
    # asv's own warm-up would run 0.1 s of untimed blocks a round, a quarter of the
    # run's cost: each sample warms up in the engine instead (engine.Work.run), so every
    # block asv asks the engine for is a sample it records.
    runs = []
    run = engine.Work.run

    def counted(work, *args):
        runs.append(args[1:])
        return run(work, *args)

    monkeypatch.setattr(engine.Work, "run", counted)
    # As asv_runner's discovery makes it: attributes from the method, instance, module.
    instance = multiply.Multiply()
    bench = asv_runner_time.TimeBenchmark("multiply.Multiply.time_multiply",
                                          instance.time_multiply,
                                          [instance.time_multiply, instance, multiply])
    bench.set_param_idx(list(itertools.product(*multiply.Multiply.params)).index(CASE))
    assert not bench.do_setup()
    result = bench.do_run()
    bench.do_teardown()
    minimum, maximum, _ = multiply.Multiply.repeat
    assert minimum <= len(result["samples"]) <= maximum
    assert len(runs) == len(result["samples"])
    assert set(runs) == {("multiply:multiply_block",) + CASE}
