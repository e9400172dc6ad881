"""scripts/forkserver_hold.py: every way's samples of a case come from the one engine, the
ratios are over the direct way's, and the script is left running, its engine ended."""

import os
import sys
from pathlib import Path

import pytest

from tests.script_loader import load_script

hold = load_script("forkserver_hold")


def test_the_ratios_are_each_ways_median_over_directs():
    times = {(2, "float32", "eager"): {"direct": [1.0, 2.0, 9.0], "poll": [2.2, 2.1, 0.1],
                                       "hold": [2.0, 3.0, 1.0]}}
    assert hold.ratios(times) == {(2, "float32", "eager"): {"poll": 1.05, "hold": 1.0}}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_each_way_takes_its_samples_and_the_engine_ends(tmp_path, monkeypatch):
    pytest.importorskip("tensorflow")
    from benchmarks import engine

    folder = tmp_path / "engines"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv(engine.ENGINE_DIR_ENV, str(folder))
    handle = engine.Engine()
    case = (2, "float32", "eager")
    try:
        times = hold.paired(handle, [case], rounds=2, count=3)
    finally:
        engine.stop_engines(str(folder))
    assert {way: len(taken) for way, taken in times[case].items()} == {
        "direct": 6, "poll": 6, "hold": 6}
    # A 2x2 multiply: microseconds per op, not a stopped process's seconds.
    assert all(0 < t < 1e-3 for taken in times[case].values() for t in taken), times
    state = Path(f"/proc/{os.getpid()}/stat").read_text()
    assert state[state.rindex(")") + 2] != "T"
    assert not list(folder.glob("*.sock"))
