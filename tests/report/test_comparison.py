"""TensorFlow against PyTorch, JAX and numpy: the comparison's rows and words, on real
results of this machine (tests/report/fixtures/comparators) and on made-up ones."""

import csv
import dataclasses
import io
import json
import math
from pathlib import Path

import pytest

from tfgpubench.names import (
    FRAMEWORK_MULTIPLY,
    JAX_MULTIPLY,
    MULTIPLY,
    NUMPY_MULTIPLY,
    TORCH_MULTIPLY,
)
from tfgpubench.report import analysis, comparison, load, render
from tfgpubench.report.asvresults import Measurement, Run
from tfgpubench.report.build import COMPARATORS_ONLY_NOTE
from tfgpubench.suite import grid

from .conftest import raw, result_files

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "comparators" / "results"
MACHINE = "vm-xeon"


@pytest.fixture(scope="module")
def loaded():
    return load(FIXTURE)


def stacks_of(loaded):
    _, report = loaded
    return report["machines"][MACHINE]


def combined(loaded):
    """The stack measured with TensorFlow and the comparators in one environment."""
    return next(s for s in stacks_of(loaded) if s.has_tensorflow)


def comparators_alone(loaded):
    return next(s for s in stacks_of(loaded) if not s.has_tensorflow)


def raw_times(stack, benchmark):
    """{(device, size, dtype, mode): seconds} of one benchmark, read without the code
    under test; None for a skipped case."""
    data = raw(FIXTURE / MACHINE / Path(stack.path).name)
    entry = dict(zip(data["result_columns"], data["results"][benchmark]))
    keys = [[json.loads(v.replace("'", '"')) for v in axis] for axis in entry["params"]]
    combos = [[]]
    for values in keys:
        combos = [c + [v] for c in combos for v in values]
    return {tuple(c): v for c, v in zip(combos, entry["result"])}


# --- on real results --------------------------------------------------------------------


def test_fixture_holds_both_kinds_of_run(loaded):
    result_set, _ = loaded
    assert not result_set.problems
    assert {s.has_tensorflow for s in stacks_of(loaded)} == {True, False}


def test_a_run_of_the_comparators_alone_is_no_step_of_tensorflows_story(loaded):
    # The fixture's two runs: one with TensorFlow, one without. A step between them
    # compared nothing and said "nothing beyond noise"; it is no step at all.
    _, report = loaded
    assert report["changes"][MACHINE]["steps"] == []
    assert report["changes"][MACHINE]["overall"] is None


@pytest.mark.parametrize("size", [2, 1000, 4096])
def test_tensorflow_eager_is_set_against_the_fastest_comparator(loaded, size):
    stack = combined(loaded)
    row = next(r for r in stack.comparison.times
               if (r["device"], r["dtype"], r["mode"], r["size"]) ==
               ("cpu", "float32", "eager", size))
    tf = raw_times(stack, MULTIPLY)[("cpu", size, "float32", "eager")]
    others = {name: raw_times(stack, FRAMEWORK_MULTIPLY[name])[("cpu", size, "float32", "eager")]
              for name in comparison.COMPARATORS}
    winner = min(others, key=others.get)
    assert row["TensorFlow"] == tf
    assert row["fastest"] == f"{winner} cpu eager"
    assert row["tensorflow_vs_fastest"].value == pytest.approx(tf / others[winner])
    assert row["tensorflow_vs_fastest"].has_range  # asv's quartiles give it a spread


def test_the_compiled_loops_are_compared_with_each_other(loaded):
    # TensorFlow's graph_loop and JAX's fori_loop are one kind: the whole loop compiled.
    stack = combined(loaded)
    row = next(r for r in stack.comparison.times
               if (r["dtype"], r["mode"], r["size"]) == ("float32", "compiled loop", 2))
    assert row["tensorflow_case"] == "TensorFlow cpu graph_loop"
    assert row["fastest"] == "JAX cpu fori_loop"
    assert row["TensorFlow"] == raw_times(stack, MULTIPLY)[("cpu", 2, "float32", "graph_loop")]


def test_the_fixed_cost_verdict_rests_on_each_frameworks_fit(loaded):
    stack = combined(loaded)
    fixed = {}
    for name, benchmark in FRAMEWORK_MULTIPLY.items():
        times = raw_times(stack, benchmark)
        points = [(grid.bytes_moved(size, "float32"), times[("cpu", size, "float32", "eager")])
                  for size in grid.SIZES]
        fixed[name] = analysis.fit_time_vs_bytes(*zip(*points)).fixed
    text = next(v for v in stack.verdicts if v.startswith("Is it TensorFlow or this CPU?"))
    for name in comparison.COMPARATORS:
        assert f"{fixed['TensorFlow'] / fixed[name]:.3g}x {name}'s" in text
    cheapest = min(comparison.COMPARATORS, key=fixed.get)
    key = "cpu_eager_fixed_cost_vs_cheapest_comparator"
    assert stack.headline[key] == pytest.approx(fixed["TensorFlow"] / fixed[cheapest])


def test_each_fit_shows_what_its_largest_size_moved_beside_its_slope(loaded):
    stack = combined(loaded)
    rows = [r for r in stack.comparison.fits if r["case"] == "cpu eager"]
    assert rows
    for row in rows:
        benchmark = FRAMEWORK_MULTIPLY[row["framework"]]
        largest = max(grid.SIZES)
        seconds = raw_times(stack, benchmark)[("cpu", largest, row["dtype"], "eager")]
        assert row["largest_size"] == largest
        assert row["largest_bandwidth"] == pytest.approx(
            grid.bytes_moved(largest, row["dtype"]) / seconds)
    table = next(t for t in render.stack_tables(stack) if t.title.startswith("Fixed cost per op"))
    assert table.columns[-1] == "measured at largest"
    assert all(cells[-1].endswith(f"at {largest}x{largest}") for cells in table.rows)


def test_a_run_of_the_comparators_alone_says_so_and_shows_only_their_tables(loaded):
    stack = comparators_alone(loaded)
    assert stack.gpu_note == COMPARATORS_ONLY_NOTE
    titles = [t.title for t in render.stack_tables(stack)]
    assert titles and all("comparator" in t or "by framework" in t for t in titles)
    assert not any("Seed" in v or "seed" in v for v in stack.verdicts)
    assert any("no TensorFlow results to set against them" in v for v in stack.verdicts)
    # Its GPU cases were skipped here: no crossover is claimed.
    assert stack.comparison.crossovers == []


def test_a_tensorflow_run_without_comparators_takes_its_machines_newest_comparator_run(loaded):
    result_set, _ = loaded
    with_both = next(r for r in result_set.runs if comparison.has_tensorflow(r))
    alone = next(r for r in result_set.runs if not comparison.has_tensorflow(r))
    tensorflow_only = dataclasses.replace(
        with_both, measurements={MULTIPLY: with_both.benchmark(MULTIPLY)})
    older = dataclasses.replace(alone, date=alone.date - 1, label="older")
    partners = comparison.partner_runs(tensorflow_only, [tensorflow_only, older, alone])
    assert partners and all(run is alone for run in partners.values())
    found = comparison.compare(tensorflow_only, partners)
    assert found.partner == alone.label
    assert f"come from {alone.label} on the same machine" in found.verdicts[-1]
    elsewhere = dataclasses.replace(alone, machine="another")
    assert comparison.partner_runs(tensorflow_only, [tensorflow_only, elsewhere]) == {}


def test_each_comparator_comes_from_the_run_that_measured_it():
    # A TensorFlow stack's environment has numpy; PyTorch and JAX are in the comparators'
    # own stack: numpy from the run itself, the others from that stack.
    tensorflow = run_of(series(MULTIPLY, "cpu", "eager", 15e-6, 1e-10)
                        + series(NUMPY_MULTIPLY, "cpu", "eager", 1e-6, 1e-10))
    frameworks = dataclasses.replace(
        run_of(series(TORCH_MULTIPLY, "cpu", "eager", 3e-6, 1e-10)
               + series(JAX_MULTIPLY, "cpu", "eager", 9e-6, 1e-10)),
        label="torch-jax", date=tensorflow.date + 1)
    partners = comparison.partner_runs(tensorflow, [tensorflow, frameworks])
    assert partners == {"numpy": tensorflow, "PyTorch": frameworks, "JAX": frameworks}
    found = comparison.compare(tensorflow, partners)
    assert found.partner == "torch-jax"
    assert "The PyTorch and JAX numbers come from torch-jax on the same machine." in found.verdicts
    assert all(row.get("PyTorch") and row.get("JAX") and row.get("numpy") for row in found.times)


def test_tensorflow_only_results_get_no_comparison(stack_repo, results_copy):
    # The fixture's stacks ran numpy's comparator too (numpy is in every environment):
    # without the comparators' results, there is nothing to compare with.
    for path in result_files(results_copy):
        data = raw(path)
        for benchmark in set(FRAMEWORK_MULTIPLY.values()) - {MULTIPLY}:
            data["results"].pop(benchmark, None)
        path.write_text(json.dumps(data))
    _, report = load(results_copy, stack_repo)
    for stack in report["machines"]["testbox"]:
        assert stack.comparison is None
        assert not [t for t in render.stack_tables(stack) if "comparator" in t.title]


def test_every_format_carries_the_comparison(loaded):
    _, report = loaded
    data = json.loads(render.render_json(report))
    stack = next(s for s in data["machines"][MACHINE] if s["comparison"]["times"][0].get(
        "TensorFlow"))
    assert stack["comparison"]["fits"] and stack["comparison"]["verdicts"]
    rows = list(csv.DictReader(io.StringIO(render.render_csv(report))))
    fits = [r for r in rows if r["table"] == "comparison_fits"]
    assert {r["quantity"] for r in fits} >= {"PyTorch fixed_seconds", "JAX fixed_seconds",
                                            "numpy fixed_seconds", "TensorFlow fixed_seconds"}
    assert "TensorFlow against the fastest comparator" in render.render_text(report,
                                                                              markdown=True)


def test_the_page_shows_the_comparison(loaded, tmp_path):
    from tfgpubench.report import write_page

    result_set, report = loaded
    page = write_page(result_set, report, tmp_path, show_progress=False).read_text()
    assert "TensorFlow against the fastest comparator" in page
    assert "Is it TensorFlow or this CPU?" in page
    assert COMPARATORS_ONLY_NOTE in page
    assert "../index.html#torch_multiply.TorchMultiply.time_multiply?machine=vm-xeon" in page


# --- the words, on made-up numbers ------------------------------------------------------


def measurement(benchmark, device, size, mode, seconds, dtype="float32"):
    return Measurement(benchmark, {"device": device, "size": size, "dtype": dtype,
                                   "mode": mode}, seconds, "seconds", seconds * 0.9,
                       seconds * 1.1)


def run_of(measurements, machine="box", label="stack", date=0):
    grouped = {}
    for m in measurements:
        grouped.setdefault(m.benchmark, []).append(m)
    return Run(path=f"{label}.json", machine=machine, commit_hash="0" * 40, env_name="env",
               date=date, label=label, measurements=grouped)


def series(benchmark, device, mode, fixed, per_byte):
    """t = fixed + per_byte * bytes at every size of the grid."""
    return [measurement(benchmark, device, size, mode,
                        fixed + per_byte * grid.bytes_moved(size, "float32"))
            for size in grid.SIZES]


def test_a_tensorflow_fixed_cost_far_above_the_cheapest_is_tensorflows_own():
    run = run_of(series(MULTIPLY, "cpu", "eager", 15e-6, 1e-10)
                 + series(TORCH_MULTIPLY, "cpu", "eager", 3e-6, 1e-10)
                 + series(NUMPY_MULTIPLY, "cpu", "eager", 1e-6, 1e-10))
    text = comparison.compare(run, comparison.partner_runs(run, [run])).verdicts[0]
    assert text.startswith("Is it TensorFlow or this CPU? TensorFlow's eager dispatch costs "
                           "15 us per op, 5x PyTorch's, 15x numpy's.")
    assert "costs numpy 15x less on the same device: most of TensorFlow's fixed cost is " \
           "TensorFlow's own" in text


def test_a_tensorflow_fixed_cost_close_to_the_cheapest_is_the_devices():
    run = run_of(series(MULTIPLY, "cpu", "eager", 1.2e-6, 1e-10)
                 + series(NUMPY_MULTIPLY, "cpu", "eager", 1e-6, 1e-10))
    text = comparison.compare(run, comparison.partner_runs(run, [run])).verdicts[0]
    assert "numpy pays nearly as much (1.2x less): the cost is the device's and Python's" in text


def test_each_frameworks_gpu_crossover_is_named_and_a_missing_tensorflow_gpu_said():
    # PyTorch's cuda: 10 us fixed, 10x the CPU's bandwidth; its CPU: 3 us fixed.
    run = run_of(series(TORCH_MULTIPLY, "cpu", "eager", 3e-6, 1e-10)
                 + series(TORCH_MULTIPLY, "cuda", "eager", 10e-6, 1e-11)
                 + series(MULTIPLY, "cpu", "eager", 15e-6, 1e-10))
    (row,) = comparison.compare(run, comparison.partner_runs(run, [run])).crossovers
    ratios = [(3e-6 + 1e-10 * b) / (10e-6 + 1e-11 * b)
              for b in (grid.bytes_moved(s, "float32") for s in grid.SIZES)]
    first_faster = grid.SIZES[next(i for i, r in enumerate(ratios) if r >= 1)]
    assert (row["framework"], row["case"], row["crossover"].status) == (
        "PyTorch", "cuda eager", "at")
    assert grid.SIZES[grid.SIZES.index(first_faster) - 1] < row["crossover"].size <= first_faster
    found = comparison.compare(run, comparison.partner_runs(run, [run]))
    text = comparison.crossover_verdict(found.crossovers)
    assert f"{row['crossover'].describe()} in PyTorch (cuda)" in text
    assert "not measured in TensorFlow" in text


def test_no_comparator_results_means_no_comparison():
    run = run_of(series(MULTIPLY, "cpu", "eager", 15e-6, 1e-10))
    assert comparison.partner_runs(run, [run]) == {}
    assert comparison.compare(run, {}) is None


def test_skipped_cases_are_left_out_not_counted_as_zero():
    run = run_of(series(MULTIPLY, "cpu", "eager", 15e-6, 1e-10)
                 + series(NUMPY_MULTIPLY, "cpu", "eager", 1e-6, 1e-10)
                 + [measurement(TORCH_MULTIPLY, "cpu", 2, "eager", math.nan)])
    rows = comparison.compare(run, comparison.partner_runs(run, [run])).times
    assert all("PyTorch" not in r for r in rows)
    assert {r["fastest"] for r in rows} == {"numpy cpu eager"}
