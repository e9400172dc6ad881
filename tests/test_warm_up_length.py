"""scripts/warm_up_length.py: each compared engine is the suite with only its warm-up
length changed, the ratios are over the reference's pooled samples, and a real run leaves
no engine behind."""

import sys
from pathlib import Path

import pytest

from tests.script_loader import load_script

ROOT = Path(__file__).resolve().parents[1]
warm = load_script("warm_up_length")


def test_the_copy_warms_up_every_size_alike_and_changes_nothing_else():
    source = (ROOT / "benchmarks" / "grid.py").read_text()
    patched = warm.with_warm_up_parts(source, 2)
    assert patched.startswith(source)
    namespace = {}
    exec(compile(patched, "grid.py", "exec"), namespace)
    assert {namespace["warm_up_parts"](size) for size in namespace["SIZES"]} == {2}


def test_a_grid_without_the_rule_is_refused():
    with pytest.raises(ValueError, match="0 times"):
        warm.with_warm_up_parts("WARM_UP_PARTS = 8\n", 2)


def test_the_ratios_pool_every_process_then_divide_by_the_reference():
    case = (512, "float32", "eager")
    runs = [{case: {"back to back": [1.0, 1.2], "reference": [1.0, 2.0]}},
            {case: {"back to back": [3.0], "reference": [1.0]}}]
    assert warm.ratios(warm.pooled(runs)) == {case: {"back to back": 1.2}}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc settings, /proc")
def test_a_short_run_compares_every_way_and_its_engines_end(tmp_path, monkeypatch, capsys):
    pytest.importorskip("tensorflow")
    monkeypatch.setattr(warm.tempfile, "mkdtemp", lambda prefix: str(tmp_path))
    assert warm.main(["--parts", "4", "--sizes", "2", "--processes", "1", "--rounds", "1",
                      "--gap", "0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    # 8 cases (2 dtypes x 4 modes), then one summary per way.
    assert len([line for line in lines if line.startswith("2x2 ")]) == 8
    assert {line.split(" / ")[0] for line in lines if " / reference" in line} == {
        "back to back", "gap, 1/4"}
    assert not tmp_path.exists()  # engines' folder and the package copy removed
