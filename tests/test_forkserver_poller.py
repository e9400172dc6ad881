"""scripts/forkserver_poller.py: one time per turn on each side, and no poller left behind."""

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("forkserver_poller",
                                              ROOT / "scripts" / "forkserver_poller.py")
poller = importlib.util.module_from_spec(spec)
spec.loader.exec_module(poller)


def pollers_running():
    """Processes running the script's poller, by their command line."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if "pause *= 10" in command:
                found.append(int(entry.name))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_each_turn_times_the_multiply_polling_and_stopped_and_the_poller_ends():
    pytest.importorskip("tensorflow")
    before = set(pollers_running())
    polling, stopped = poller.paired(2, "float32", turns=3)
    assert len(polling) == len(stopped) == 3
    # A 2x2 multiply: microseconds per op, not the loop's length or a stopped process's.
    assert all(0 < t < 1e-3 for t in polling + stopped), (polling, stopped)
    assert set(pollers_running()) <= before
