"""The noise check's passing load: it runs inside its `with` block and never outlives it."""

import subprocess
import sys
import time
from pathlib import Path

from tfgpubench.selfcheck.load import BurstyLoad

ROOT = Path(__file__).resolve().parents[2]


def running(pid):
    """Whether `pid` is a live process (a zombie waiting for its reaper is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


def wait_until(condition, seconds=10.0):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_the_load_runs_inside_the_block_and_is_gone_after():
    with BurstyLoad(busy=0.05, idle=0.05) as load:
        pid = load.process.pid
        assert running(pid)
    assert load.process.returncode is not None and not running(pid)


def test_the_load_ends_on_its_own_when_the_self_check_is_killed(tmp_path):
    # SIGKILL leaves no `with` block a chance to end it: the load must notice by itself.
    pid_file = tmp_path / "load.pid"
    starter = subprocess.Popen([sys.executable, "-c", (
        "import time; from tfgpubench.selfcheck.load import BurstyLoad\n"
        "load = BurstyLoad(busy=0.05, idle=0.05).__enter__()\n"
        f"open({str(pid_file)!r}, 'w').write(str(load.process.pid))\n"
        "time.sleep(60)")], cwd=ROOT)
    try:
        assert wait_until(lambda: pid_file.exists() and pid_file.read_text())
        pid = int(pid_file.read_text())
        assert running(pid)
    finally:
        starter.kill()
        starter.wait()
    assert wait_until(lambda: not running(pid), seconds=5.0), "the load outlived its starter"
