"""scripts/engine_against_revision.py: the other revision's engine is its own package, the
figures are over the bare loop's pooled samples, and a real run leaves no engine behind."""

import sys

import pytest

from tests.script_loader import load_script

against = load_script("engine_against_revision")


def test_the_summary_gives_each_way_over_the_bare_loop_and_the_change_between_them():
    found = {(2, "int32", "eager"): {"checked out": 1.02, "HEAD~1": 1.04},
             (2, "int32", "xla"): {"checked out": 0.99, "HEAD~1": 1.10}}
    lines = against.summary(found, "HEAD~1")
    assert lines[0].startswith("2x2 int32   eager") and lines[0].endswith("HEAD~1: 0.981")
    assert lines[2] == "HEAD~1 / reference: median 1.070 over 2 cases, 1 within 5 %"
    assert lines[3] == "checked out / reference: median 1.005 over 2 cases, 2 within 5 %"
    assert lines[4] == "checked out / HEAD~1: median 0.940 (0.900-0.981)"


def test_an_unknown_revision_is_refused_with_gits_reason(tmp_path):
    with pytest.raises(SystemExit, match="git archive no-such-revision"):
        against.suite_at("no-such-revision", tmp_path)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc settings, /proc")
def test_a_short_run_against_head_compares_both_engines_and_they_end(tmp_path, monkeypatch,
                                                                      capsys):
    pytest.importorskip("tensorflow")
    monkeypatch.delenv(against.engine.ENGINE_DIR_ENV, raising=False)
    monkeypatch.setattr(against.tempfile, "mkdtemp", lambda prefix: str(tmp_path))
    assert against.main(["HEAD", "--sizes", "2", "--processes", "1", "--rounds", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len([line for line in lines if line.startswith("2x2 ")]) == 8  # 2 dtypes x 4 modes
    assert {line.split(" / ")[0] for line in lines if " / reference" in line} == {
        "HEAD", "checked out"}
    assert not tmp_path.exists()  # the engines' folder and HEAD's copy removed
    # and the process is as it was: the next run imports its revision afresh
    assert against.engine.ENGINE_DIR_ENV not in against.os.environ
    assert not [name for name in sys.modules if name.startswith(against.REVISION_PACKAGE)]


def test_a_revision_named_like_a_way_of_the_comparison_is_refused(capsys):
    with pytest.raises(SystemExit):
        against.main(["reference"])
    assert "names a way of the comparison" in capsys.readouterr().err
