"""multiply.Multiply under asv_runner's own timing loop, served by this process's engine
(conftest.py): what asv does with each call of the benchmark."""

import itertools

import pytest

from benchmarks import engine, multiply

pytest.importorskip("tensorflow")
asv_runner_time = pytest.importorskip("asv_runner.benchmarks.time")

CASE = ("cpu", 2, "float32", "eager")


def test_asv_runs_no_untimed_block_a_rounds_samples_warm_up_in_the_engine(monkeypatch):
    # asv's 0.1 s warm-up is off (multiply.Multiply's comment says what dropping it was
    # measured to change), and with setup re-run before every sample asv_runner fixes
    # `number` at 1 without trying calls first: every call asv makes is a sample, and
    # each sample's warm-up is the engine's own (engine.Work.run).
    assert multiply.Multiply.warmup_time == 0
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
    # Every block ran in the engine, the same case's, and each was a sample.
    assert set(runs) == {("multiply:multiply_block",) + CASE}
    assert len(runs) == len(result["samples"])
