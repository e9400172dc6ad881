"""The report's GPU branches, on SYNTHETIC GPU results made up from a stated model.

No GPU runs here, so the fixture (tests/report/fixtures/synthetic_gpu) is written by
make_synthetic_gpu_results.py from t = fixed + bytes / bandwidth per device and mode,
with noise; the expected figures below follow from that model, not from a machine.
"""

import math

import pytest

from tfgpubench.names import MULTIPLY
from tfgpubench.report import load, publish_page, render
from tfgpubench.suite import grid

from . import make_synthetic_gpu_results as model
from .conftest import SYNTHETIC_GPU_RESULTS, SYNTHETIC_MACHINE, write_config


def crossover_of_the_model(dtype, mode):
    """The size at which the model's GPU and CPU times are equal."""
    fixed = model.FIXED["gpu"][mode] - model.FIXED["cpu"][mode]
    per_byte = 1 / model.BANDWIDTH["cpu"] - 1 / model.BANDWIDTH["gpu"]
    return math.sqrt(fixed / per_byte / grid.bytes_moved(1, dtype))


@pytest.fixture(scope="module")
def synthetic(stack_repo):
    result_set, report = load(SYNTHETIC_GPU_RESULTS, stack_repo)
    assert result_set.problems == []
    return result_set, report["machines"][SYNTHETIC_MACHINE]


def test_gpu_results_are_recognised_and_int32_skips_carry_the_checks_reason(synthetic):
    _, stacks = synthetic
    for stack in stacks:
        assert stack.gpu_measured and stack.gpu_note == ""
        never = next(v for v in stack.verdicts if v.startswith("Never on the GPU"))
        assert "int32 eager, int32 function, int32 graph_loop" in never
        assert "host memory" in never and "int32 xla" not in never


def test_speedup_table_has_a_row_per_case_and_none_where_the_gpu_did_not_run(synthetic):
    _, stacks = synthetic
    rows = {(r["size"], r["dtype"], r["mode"]): r for r in stacks[0].speedups}
    assert len(rows) == len(grid.SIZES) * len(grid.DTYPES) * len(grid.MODES)
    assert rows[(2, "int32", "eager")]["from_times"] is None
    big = rows[(4096, "float32", "eager")]["from_times"]
    expected = model.model_seconds("cpu", 4096, "float32", "eager", False, grid) / (
        model.model_seconds("gpu", 4096, "float32", "eager", False, grid))
    assert big.value == pytest.approx(expected, rel=0.08) and big.low <= big.value <= big.high


@pytest.mark.parametrize("dtype,mode", [("float32", "eager"), ("int32", "xla")])
def test_crossover_lands_where_the_model_crosses(synthetic, dtype, mode):
    _, stacks = synthetic
    row = next(r for r in stacks[0].crossovers if (r["dtype"], r["mode"]) == (dtype, mode))
    cross = row["crossover"]
    assert cross.status == "at"
    # Interpolated in log-log between measured sizes: within 15% of the model's size.
    assert cross.size == pytest.approx(crossover_of_the_model(dtype, mode), rel=0.15)
    assert cross.has_range and cross.low <= cross.size <= cross.high


def test_gpu_bandwidth_is_a_share_of_the_gpus_published_peak(synthetic):
    _, stacks = synthetic
    row = next(r for r in stacks[0].bandwidth if (r["device"], r["mode"]) == ("gpu", "eager"))
    assert row["reference"] == 200e9 and "Apple M1 Pro published peak" in row["reference_source"]
    seconds = model.model_seconds("gpu", 4096, "float32", "eager", False, grid)
    assert row["measured_share"] == pytest.approx(
        grid.bytes_moved(4096, "float32") / seconds / 200e9, rel=0.08)


def test_the_cpu_loop_written_in_place_is_measured_against_the_kernel_written_in_place(
        synthetic):
    # The model's CPU graph_loop moves its bytes at 45 GB/s, above STREAM into a new
    # array (35) and under STREAM written over its input (55): the report says why it
    # reads above the ceiling, with the in-place kernel's figure from the same run.
    _, stacks = synthetic
    rows = {(r["device"], r["mode"]): r for r in stacks[0].bandwidth}
    loop = rows[("cpu", "graph_loop")]
    in_place = loop["in_place_reference"]
    assert in_place == pytest.approx(model.STREAM_SCALE_IN_PLACE, rel=0.1)
    assert loop["reference"] == pytest.approx(model.STREAM_SCALE, rel=0.1)
    assert loop["measured_share"] > 1
    measured = loop["measured_share"] * loop["reference"]
    assert measured == pytest.approx(model.CPU_IN_PLACE_BANDWIDTH, rel=0.1)
    assert "graph_loop writes each product over the one before" in loop["note"]
    assert f"{in_place / 1e9:.3g} GB/s at 4096x4096" in loop["note"]
    assert f"({measured / in_place:.0%} of it)" in loop["note"]
    # A mode that writes a new array each op stays under the ceiling, with no note.
    assert rows[("cpu", "eager")]["measured_share"] < 1 and rows[("cpu", "eager")]["note"] == ""


def test_verdicts_answer_the_seed_with_what_the_gpu_measured(synthetic):
    _, stacks = synthetic
    text = "\n".join(stacks[0].verdicts)
    assert "its own case (2x2 int32 eager) never computes on the GPU" in text
    assert "the nearest case a GPU ran, 2x2 float32 eager" in text
    assert "int32 did compute on the GPU under xla" in text
    assert "Best measured GPU speedup" in text and "the GPU is faster from ~" in text
    assert "on the GPU a 2x2 float32 eager multiply takes" in text
    seed = stacks[0].seed
    assert seed["real_case"] == {"size": 2, "dtype": "float32", "mode": "eager"}
    assert seed["real"].value == pytest.approx(
        model.model_seconds("cpu", 2, "float32", "eager", False, grid)
        / model.model_seconds("gpu", 2, "float32", "eager", False, grid), rel=0.1)
    # The seed's own case has no GPU number: its headline stays empty.
    assert stacks[0].headline["seed_real_speedup"] is None
    assert stacks[0].headline["gpu_speedup_float32_eager_4096"] > 1


def test_the_gpu_self_check_is_quoted_in_every_format(synthetic):
    _, stacks = synthetic
    assert [c["name"] for c in stacks[0].gpu_checks][:2] == ["gpu listed", "wait stays on gpu"]
    text = render.render_text({"machines": {SYNTHETIC_MACHINE: stacks}, "problems": []})
    assert "GPU self-check, run before measuring" in text
    assert "FAIL    the GPU Mul kernel for int32" in text
    data = render.report_data({"machines": {SYNTHETIC_MACHINE: stacks}, "problems": []})
    assert data["machines"][SYNTHETIC_MACHINE][0]["gpu_checks"][0]["passed"] is True


def test_the_release_that_made_gpu_dispatch_cheaper_shows_across_stacks(synthetic):
    result_set, stacks = synthetic
    older, newer = (run for run in result_set.runs)
    before = older.get(MULTIPLY, device="gpu", size=2, dtype="float32", mode="eager").value
    after = newer.get(MULTIPLY, device="gpu", size=2, dtype="float32", mode="eager").value
    assert before / after == pytest.approx(model.GPU_EAGER_SPEEDUP, rel=0.08)
    assert stacks[1].headline["gpu_fixed_cost_seconds"] < stacks[0].headline[
        "gpu_fixed_cost_seconds"]


def test_the_page_draws_the_speedup_figures_and_says_synthetic(tmp_path, stack_repo):
    config = write_config(tmp_path, SYNTHETIC_GPU_RESULTS, stack_repo)
    from tfgpubench.config import load_config

    index = publish_page(load_config(config), show_progress=False)
    page = index.read_text()
    assert "GPU/CPU speedup vs size, float32" in page and "GPU/CPU speedup vs size, int32" in page
    assert page.count("SYNTHETIC") >= 2 and SYNTHETIC_MACHINE in page
    assert "GPU self-check, run before measuring" in page
