"""Loading asv result files: real fixtures, and the faults the report must survive."""

import json
import math

from tfgpubench.report.asvresults import load_results, parse_param, stack_labels_from_repo
from tfgpubench.report.build import OLDER_TENSORFLOW_NOTE, build_stack_report

from .conftest import FIXTURE_RESULTS, MACHINE, raw, result_files

MULTIPLY = "multiply.Multiply.time_multiply"


def measurement_count(result_set):
    return sum(len(v) for run in result_set.runs for v in run.measurements.values())


def test_parse_param_reads_asv_reprs():
    assert parse_param("'cpu'") == "cpu"
    assert parse_param("4096") == 4096
    assert parse_param("not a literal") == "not a literal"


def test_fixture_loads_with_tags_as_labels_in_repo_order(stack_repo):
    result_set = load_results(FIXTURE_RESULTS, stack_labels_from_repo(stack_repo))
    assert result_set.problems == []
    assert [r.label for r in result_set.runs] == ["tf-2.16.2", "tf-2.21.0"]
    assert set(result_set.machines) == {MACHINE}


def test_values_and_spread_match_the_file():
    path = result_files()[0]
    data = raw(path)
    columns = data["result_columns"]
    row = dict(zip(columns, data["results"][MULTIPLY]))
    loaded = load_results(FIXTURE_RESULTS).runs
    run = next(r for r in loaded if r.commit_hash == data["commit_hash"])
    first = run.benchmark(MULTIPLY)[0]  # asv's order: first value of every axis
    assert first.params == {"device": "cpu", "size": 2, "dtype": "int32", "mode": "eager"}
    assert first.value == row["result"][0]
    assert (first.q25, first.q75) == (row["stats_q_25"][0], row["stats_q_75"][0])
    skipped = run.get(MULTIPLY, device="gpu", size=2, dtype="int32", mode="eager")
    assert not skipped.measured and math.isnan(skipped.value)


def test_labels_fall_back_to_short_hashes_without_a_repo(tmp_path):
    result_set = load_results(FIXTURE_RESULTS, stack_labels_from_repo(tmp_path / "missing"))
    assert {r.label for r in result_set.runs} == {r.commit_hash[:8] for r in result_set.runs}


def test_truncated_file_is_named_and_the_rest_kept(results_copy):
    intact = load_results(FIXTURE_RESULTS)
    broken, kept = result_files(results_copy)
    broken.write_text(broken.read_text()[: len(broken.read_text()) // 2])
    result_set = load_results(results_copy)
    [problem] = result_set.problems
    assert problem.path.endswith(broken.name) and "corrupt or truncated" in problem.message
    [run] = result_set.runs
    assert run.path.endswith(kept.name)
    twin = next(r for r in intact.runs if r.commit_hash == run.commit_hash)
    assert run.measurements == twin.measurements


def test_unknown_machine_is_named_and_the_rest_kept(results_copy):
    stray = results_copy / "elsewhere"
    stray.mkdir()
    source = result_files(results_copy)[0]
    (stray / source.name).write_text(source.read_text())
    result_set = load_results(results_copy)
    [problem] = result_set.problems
    assert "elsewhere" in problem.path and "unknown machine 'elsewhere'" in problem.message
    assert len(result_set.runs) == 2
    assert measurement_count(result_set) == measurement_count(load_results(FIXTURE_RESULTS))


def test_file_for_another_machine_is_named(results_copy):
    path = result_files(results_copy)[0]
    data = raw(path)
    data["params"]["machine"] = "someone-else"
    path.write_text(json.dumps(data))
    result_set = load_results(results_copy)
    [problem] = result_set.problems
    assert path.name in problem.path and "machine name is not 'testbox'" in problem.message
    assert len(result_set.runs) == 1


def test_results_from_an_older_benchmark_version_are_left_out_by_name(results_copy):
    benchmarks = raw(results_copy / "benchmarks.json")
    recorded = benchmarks[MULTIPLY]["version"]
    benchmarks[MULTIPLY]["version"] = recorded + "-changed"
    (results_copy / "benchmarks.json").write_text(json.dumps(benchmarks))
    result_set = load_results(results_copy)
    assert len(result_set.problems) == 2
    for problem in result_set.problems:
        assert "older suite version" in problem.message
        assert MULTIPLY in problem.message and repr(recorded) in problem.message
    for run in result_set.runs:
        assert MULTIPLY not in run.measurements and run.older_versions == {MULTIPLY: recorded}
        assert "seed.SeedScript.track_reported_speedup" in run.measurements
        # The stack's section says why it shows no TensorFlow, not that it has none.
        assert build_stack_report(run).gpu_note == OLDER_TENSORFLOW_NOTE


def test_old_file_format_is_named(results_copy):
    path = result_files(results_copy)[1]
    data = raw(path)
    data["version"] = 1
    path.write_text(json.dumps(data))
    result_set = load_results(results_copy)
    [problem] = result_set.problems
    assert path.name in problem.path and "old file format" in problem.message
    assert len(result_set.runs) == 1


def test_installed_versions_are_used_when_present_and_bad_lines_named(results_copy):
    commit = raw(result_files(results_copy)[0])["commit_hash"]
    lines = [
        json.dumps({"commit_hash": commit, "versions": {"tensorflow-cpu": "2.16.2"},
                    "also": {"numpy": "1.26.4"}}),
        "{not json",
    ]
    (results_copy / MACHINE / "installed-versions.jsonl").write_text("\n".join(lines) + "\n")
    result_set = load_results(results_copy)
    [problem] = result_set.problems
    assert problem.path.endswith("installed-versions.jsonl:2")
    run = next(r for r in result_set.runs if r.commit_hash == commit)
    assert run.installed == {"tensorflow-cpu": "2.16.2"}
    # What the installer found besides the pins: which of the benchmarks are controls.
    assert run.also == {"numpy": "1.26.4"}
    assert len(result_set.runs) == 2
    assert next(r for r in result_set.runs if r.commit_hash != commit).also == {}


def test_an_older_version_of_a_benchmark_that_measured_nothing_is_not_reported(results_copy):
    # A TensorFlow stack's files keep the PyTorch and JAX entries, every case skipped,
    # of runs from before `run` stopped asking for them: nothing of value is left out.
    jax = "jax_multiply.JaxMultiply.time_multiply"
    benchmarks = raw(results_copy / "benchmarks.json")
    benchmarks[jax]["version"] += "-changed"
    (results_copy / "benchmarks.json").write_text(json.dumps(benchmarks))
    result_set = load_results(results_copy)
    assert result_set.problems == []
    assert all(jax not in run.measurements for run in result_set.runs)
