"""The report command end to end on the fixture results: tables, verdicts, formats, faults."""

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tfgpubench.names import CPU_REFERENCE, SEED_SPEEDUP
from tfgpubench.report import load

from .conftest import FIXTURE_RESULTS, raw, result_files, write_config


def report_command(config, *args):
    return subprocess.run(
        [sys.executable, "-m", "tfgpubench.report", "--config", str(config), *args],
        capture_output=True, text=True, timeout=120,
    )


@pytest.fixture
def config(tmp_path, stack_repo):
    return write_config(tmp_path, FIXTURE_RESULTS, stack_repo)


def test_verdicts_are_computed_from_the_results(stack_repo):
    _, report = load(FIXTURE_RESULTS, stack_repo)
    [stacks] = report["machines"].values()
    for stack in stacks:
        path = next(p for p in result_files() if p.name in stack.path)
        data = raw(path)
        reported = dict(zip(data["result_columns"], data["results"][SEED_SPEEDUP]))["result"][0]
        text = "\n".join(stack.verdicts)
        assert "No GPU results" in text
        assert f"reports a {reported:.3g}x GPU speedup" in text
        assert "ran on the CPU" in text
        assert "is fixed per-op cost" in text
        assert "a tf.function called per op is" in text and "than eager" in text
        # The ceiling is the all-core STREAM scale measured in the same run.
        assert "STREAM scale at 8192x8192 float32 on every core, same run" in text
        # Nothing GPU-side is claimed from CPU numbers.
        assert stack.speedups == [] and stack.crossovers == []
        assert "Best measured GPU speedup" not in text


def test_results_without_the_all_core_reference_name_the_one_thread_one_as_no_ceiling(
        stack_repo, results_copy):
    # Results of suite versions before reference.StreamScale have numpy's one-thread
    # multiply only: it is quoted, and said not to be a ceiling.
    for path in result_files(results_copy):
        data = raw(path)
        data["results"].pop(CPU_REFERENCE)
        path.write_text(json.dumps(data))
    _, report = load(results_copy, stack_repo)
    for stack in next(iter(report["machines"].values())):
        assert "on one thread, not a ceiling" in "\n".join(stack.verdicts)


def test_text_report_prints_tables_and_verdicts(config):
    done = report_command(config)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for label in ("testbox / tf-2.16.2", "testbox / tf-2.21.0", "Across stacks"):
        assert label in out
    for heading in ("Verdicts", "t = a + b*bytes", "share of the reference", "against eager"):
        assert heading in out
    assert "no GPU results: every gpu combination was skipped" in out


def test_markdown_json_csv(config):
    markdown = report_command(config, "--format", "markdown").stdout
    assert "## testbox / tf-2.21.0" in markdown and "| device |" in markdown

    data = json.loads(report_command(config, "--format", "json").stdout)
    stacks = data["machines"]["testbox"]
    assert [s["label"] for s in stacks] == ["tf-2.16.2", "tf-2.21.0"]
    assert stacks[0]["fits"][0]["fit"]["fixed_seconds"] > 0
    assert data["problems"] == []

    rows = list(csv.DictReader(io.StringIO(report_command(config, "--format", "csv").stdout)))
    fixed = [r for r in rows if r["quantity"] == "fixed_seconds"]
    assert {r["stack"] for r in fixed} == {"tf-2.16.2", "tf-2.21.0"}
    assert all(float(r["value"]) > 0 for r in fixed)


def test_unknown_machine_option_says_which_exist(config):
    done = report_command(config, "--machine", "nowhere")
    assert done.returncode == 2 and "machines with results: testbox" in done.stderr


def test_corrupt_file_is_named_and_the_report_carries_on(tmp_path, results_copy, stack_repo):
    broken, kept = result_files(results_copy)
    broken.write_bytes(b"\x00garbage{")
    config = write_config(tmp_path, results_copy, stack_repo)
    done = report_command(config)
    assert done.returncode == 0
    assert broken.name in done.stderr and "corrupt or truncated" in done.stderr
    assert broken.name in done.stdout  # the "Left out" section of the report itself
    assert kept.name in done.stdout and "Verdicts" in done.stdout
    assert done.stdout.count("Verdicts") == 1


def test_the_gpu_self_check_recorded_by_the_runner_reaches_the_verdicts(
    results_copy, stack_repo, tmp_path
):
    # The record comes from running the self-check in this Python, as the runner
    # does for `--existing`.
    from tfgpubench.runner import gpu_checks_in

    root = Path(__file__).resolve().parents[2]
    record = gpu_checks_in(Path(sys.executable), root / "benchmarks", tmp_path / "checks.json")
    assert record is not None and record["checks"][0]["name"] == "gpu listed"
    reason = record["verdicts"]["gpu"]["int32"]["eager"]
    assert reason
    machine_dir = next(p.parent for p in results_copy.rglob("machine.json"))
    lines = [
        json.dumps({"commit": raw(path)["commit_hash"], "installed": {}, "gpu_checks": record})
        for path in machine_dir.glob("*-*.json")
    ]
    (machine_dir / "installed-versions.jsonl").write_text("\n".join(lines) + "\n")
    _, report = load(results_copy, stack_repo)
    for stacks in report["machines"].values():
        for stack in stacks:
            assert reason in "\n".join(stack.verdicts)
            assert [c["name"] for c in stack.gpu_checks] == [c["name"] for c in record["checks"]]


def test_ledger_lines_written_before_the_self_check_still_give_their_reasons(
    results_copy, stack_repo
):
    machine_dir = next(p.parent for p in results_copy.rglob("machine.json"))
    legacy = {"int32": "no GPU visible to TensorFlow", "float32": "no GPU visible to TensorFlow"}
    lines = [
        json.dumps({"commit": raw(path)["commit_hash"], "installed": {}, "gpu_multiply": legacy})
        for path in machine_dir.glob("*-*.json")
    ]
    (machine_dir / "installed-versions.jsonl").write_text("\n".join(lines) + "\n")
    _, report = load(results_copy, stack_repo)
    for stacks in report["machines"].values():
        for stack in stacks:
            assert stack.gpu_note == "no GPU results: every gpu combination was skipped: " + (
                "no GPU visible to TensorFlow")
