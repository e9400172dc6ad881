"""`python -m tfgpubench selfcheck`: its help, and a real --quick run (fidelity under asv)."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def selfcheck(*args, timeout=600):
    return subprocess.run(
        [sys.executable, "-m", "tfgpubench.selfcheck", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout,
    )


def test_help_lists_the_parts_without_importing_tensorflow():
    done = selfcheck("--help", timeout=60)
    assert done.returncode == 0
    for part in ("stability", "fidelity", "noise", "sensitivity", "cost", "--only", "--quick"):
        assert part in done.stdout
    # Parsing arguments must stay instant: TensorFlow is imported inside the parts only.
    probe = subprocess.run(
        [sys.executable, "-c",
         "import sys, tfgpubench.commands.selfcheck; print('tensorflow' in sys.modules)"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )
    assert probe.stdout.strip() == "False"


def test_without_tensorflow_it_says_how_to_install_it_and_measures_nothing(monkeypatch, capsys):
    # The main job's `pip install -e .` leaves this Python without TensorFlow.
    from tfgpubench import cli
    from tfgpubench.selfcheck import asvruns

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "tensorflow" else real_find_spec(name, *a))
    monkeypatch.setattr(asvruns, "Scratch", lambda *a, **k: pytest.fail("measured anyway"))
    monkeypatch.chdir(ROOT)
    assert cli.main(["selfcheck", "--only", "fidelity"]) == 2
    err = capsys.readouterr().err
    assert "no TensorFlow in" in err and "pip install -e '.[tf]'" in err


@pytest.fixture
def tensorflow_found(monkeypatch):
    """The self-check's TensorFlow check passes, whether or not this venv has it: for
    tests whose parts are stand-ins."""
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: object() if name == "tensorflow"
                        else real_find_spec(name, *a))


def test_a_self_check_cut_short_keeps_the_figures_of_the_parts_it_finished(
        tensorflow_found, monkeypatch, tmp_path):
    from tfgpubench import cli
    from tfgpubench.selfcheck import asvruns, stability

    def measured(args, figures, again=False):
        figures["stability"] = {"probes": {"small": {"p90_over_fast": 1.08}}}
        return True

    def cut_short(*args, **kwargs):
        raise KeyboardInterrupt  # Ctrl-C, or SIGTERM as cli.main turns it

    monkeypatch.setattr(stability, "run_part", measured)
    monkeypatch.setattr(asvruns, "Scratch", cut_short)
    monkeypatch.chdir(ROOT)
    out = tmp_path / "figures.json"
    assert cli.main(["selfcheck", "--only", "stability", "--only", "noise",
                     "--json", str(out)]) == 130
    figures = json.loads(out.read_text())
    assert figures["stability"] == {"probes": {"small": {"p90_over_fast": 1.08}}}
    assert figures["complete"] is False and figures["selfcheck_seconds"] >= 0


def test_a_json_file_it_cannot_write_stops_it_before_it_measures(
        tensorflow_found, monkeypatch, tmp_path, capsys):
    from tfgpubench import cli
    from tfgpubench.selfcheck import stability

    monkeypatch.setattr(stability, "run_part", lambda *a, **k: pytest.fail("measured anyway"))
    monkeypatch.chdir(ROOT)
    missing = tmp_path / "no-such-folder" / "figures.json"
    assert cli.main(["selfcheck", "--only", "stability", "--json", str(missing)]) == 2
    assert f"--json {missing}: No such file or directory" in capsys.readouterr().err


@pytest.mark.slow
def test_quick_run_prints_each_fidelity_figure_with_its_target(tmp_path):
    pytest.importorskip("tensorflow")
    out = tmp_path / "figures.json"
    done = selfcheck("--quick", "--json", str(out))
    # The verdict depends on this machine's noise; the figures must be there either way.
    assert done.returncode in (0, 1), done.stderr[-2000:]
    assert "target 1.00 +- 0.05" in done.stdout
    figures = json.loads(out.read_text())
    cases = {(c["size"], c["dtype"], c["mode"]) for c in figures["fidelity"]["cases"]}
    assert len(cases) == 16 and (1000, "float32", "graph_loop") in cases
    assert figures["fidelity"]["launch_method"] in ("forkserver", "spawn")
    # Each case has the fast ratio beside the median one (asv recorded its samples).
    assert all(c["fast_ratio"] > 0 for c in figures["fidelity"]["cases"])
    # And the page faults per op of each side, the engine's come back from its asv runs;
    # a 2x2 op touches no new memory on either.
    assert all(c["suite_faults"] is not None and c["bare_faults"] is not None
               for c in figures["fidelity"]["cases"])
    assert all(c["suite_faults"] < 1 and c["bare_faults"] < 1
               for c in figures["fidelity"]["cases"] if c["size"] == 2)
    assert "cases differ between the suite and the bare loop" in done.stdout
    # The noise floor of the same run: the reference's two halves against each other.
    assert all(c["reference_itself"] >= 1 for c in figures["fidelity"]["cases"])
    assert "the reference against itself (its two halves" in done.stdout
    # The machine's own steadiness comes first, with the figures a FAIL is read against.
    assert "stability: this machine's own speed" in done.stdout
    for probe in ("small", "large"):
        start = figures["stability"]["probes"][probe]
        assert start["loops"] > 100 and start["fast"] > 0
        # And again at the end, read against the first: did the machine stay so under the run?
        assert figures["stability_after"]["probes"][probe]["loops"] > 100
        assert figures["stability_across_the_run"]["probes"][probe]["fast_moved"] > 0
    assert "across the run, small: steady at the start" in done.stdout
    assert "across the run, large: steady at the start" in done.stdout
