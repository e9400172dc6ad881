"""asv's forkserver, held still while the engine times a block (benchmarks/launcher.py)."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from benchmarks import engine, launcher, timing

ROOT = Path(__file__).resolve().parents[2]
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

FORKSERVER = ["/venv/bin/python", "/venv/lib/python3.11/site-packages/asv/benchmark.py",
              "run_server", "/repo/benchmarks", "/tmp/asv-forkserver-x/socket"]


def parent_of(arguments, **settings):
    return launcher.forkserver_parent(parent=4242, read_command_line=lambda pid: arguments,
                                      **settings)


def test_the_forkserver_is_recognised_by_asvs_command_line():
    assert parent_of(FORKSERVER, environ={}) == 4242


@pytest.mark.parametrize("arguments", [
    ["/venv/bin/python", "-m", "asv", "run", "--launch-method", "spawn"],  # spawn: asv itself
    ["/bin/bash"],
    ["python", "my_tool.py", "run_server"],  # mentions the command, is not asv's runner
    None,  # gone, or no /proc
])
def test_any_other_parent_is_not_held(arguments):
    assert parent_of(arguments, environ={}) is None


def test_holding_can_be_turned_off():
    assert parent_of(FORKSERVER, environ={launcher.HOLD_ENV: "0"}) is None
    assert parent_of(FORKSERVER, environ={launcher.HOLD_ENV: "1"}) == 4242


def test_init_is_never_held():
    assert launcher.forkserver_parent(environ={}, parent=1,
                                      read_command_line=lambda pid: FORKSERVER) is None


# --- real processes -------------------------------------------------------------------


def state(pid):
    """The process's state letter in /proc: T while it is stopped."""
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2]


def wait_for_state(pid, wanted, seconds=5.0):
    # A signal is delivered when the process next runs: not always before kill() returns.
    deadline = time.monotonic() + seconds
    while state(pid) not in wanted and time.monotonic() < deadline:
        time.sleep(0.001)
    return state(pid)


@pytest.fixture
def sleeper():
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield process.pid
    process.kill()
    process.wait()


@linux_only
def test_held_still_stops_the_process_for_the_body_and_continues_it_after(sleeper):
    with launcher.held_still(sleeper):
        assert wait_for_state(sleeper, "T") == "T"
    assert wait_for_state(sleeper, "SR") in "SR"


@linux_only
def test_a_body_that_fails_still_continues_the_process(sleeper):
    with pytest.raises(RuntimeError), launcher.held_still(sleeper):
        wait_for_state(sleeper, "T")
        raise RuntimeError("the block failed")
    assert wait_for_state(sleeper, "SR") in "SR"


def test_a_process_already_gone_holds_nothing():
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    ran = []
    with launcher.held_still(process.pid):  # no ProcessLookupError: the body runs
        ran.append(process.pid)
    launcher.let_go(process.pid)
    with launcher.held_still(None):
        ran.append(None)
    assert ran == [process.pid, None]


def work_with(block):
    block.ops, block.warm_up = 10, block
    work = engine.Work(gate=None)
    work.blocks[("m:f", 1)] = timing.InTurn([block])
    return work


@linux_only
def test_the_engine_holds_the_process_through_the_warm_up_and_the_timed_block(sleeper):
    seen = []

    def block():
        seen.append(wait_for_state(sleeper, "T"))

    work = work_with(block)
    work.run(sleeper, "m:f", 1)
    assert seen == ["T", "T"]  # the warm-up, then the timed block
    assert wait_for_state(sleeper, "SR") in "SR"
    work.run(None, "m:f", 1)  # nothing to hold: nothing stopped
    assert seen[-1] != "T"


@linux_only
def test_a_block_that_fails_in_the_engine_leaves_nothing_stopped(sleeper):
    def block():
        wait_for_state(sleeper, "T")
        raise ValueError("out of memory")

    with pytest.raises(ValueError):
        work_with(block).run(sleeper, "m:f", 1)
    assert wait_for_state(sleeper, "SR") in "SR"


@linux_only
def test_a_benchmark_process_whose_engine_ended_mid_block_continues_its_forkserver(
        sleeper, monkeypatch):
    class EndedMidBlock:
        def call(self, request, hold, *args):
            os.kill(hold, signal.SIGSTOP)  # as the engine did before it was killed
            wait_for_state(hold, "T")
            raise engine.EngineError("the TensorFlow engine ended during run")

    monkeypatch.setattr(engine, "forkserver_parent", lambda: sleeper)
    block = engine.EngineBlock(EndedMidBlock(), "multiply:multiply_block", ("cpu", 2), 100)
    with pytest.raises(engine.EngineError):
        block()
    assert wait_for_state(sleeper, "SR") in "SR"
    with pytest.raises(engine.EngineError):
        block.per_op_seconds()
    assert wait_for_state(sleeper, "SR") in "SR"


# --- under asv's own forkserver -------------------------------------------------------

BENCHMARK = """
import os, sys, time
sys.path.insert(0, {root!r})
from benchmarks import launcher


def parent_state():
    text = open(f"/proc/{{os.getppid()}}/stat").read()
    return text[text.rindex(")") + 2]


def track_forkserver_recognised():
    return int(launcher.forkserver_parent() == os.getppid())


def track_forkserver_stopped_while_held():
    with launcher.held_still(launcher.forkserver_parent()):
        deadline = time.monotonic() + 5
        while parent_state() != "T" and time.monotonic() < deadline:
            time.sleep(0.001)
        return int(parent_state() == "T")
"""


@linux_only
@pytest.mark.slow
def test_under_asvs_forkserver_the_benchmark_process_finds_and_holds_its_parent(tmp_path):
    # asv's command line for its forkserver is what launcher.py recognises: an asv that
    # starts it otherwise would leave the poll running, and this fails.
    pytest.importorskip("asv")
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "__init__.py").write_text("")
    (bench / "held.py").write_text(textwrap.dedent(BENCHMARK.format(root=str(ROOT))))
    config = tmp_path / "asv.conf.json"
    config.write_text(json.dumps({
        "version": 1, "project": "t", "repo": str(repo), "branches": ["main"],
        "environment_type": "existing", "benchmark_dir": str(bench),
        "results_dir": str(tmp_path / "results"), "html_dir": str(tmp_path / "html")}))
    env = {**os.environ, "HOME": str(tmp_path)}
    env.pop(launcher.HOLD_ENV, None)
    asv = [sys.executable, "-m", "asv", "--config", str(config)]
    subprocess.run([*asv, "machine", "--yes", "--machine", "box"], check=True, env=env,
                   capture_output=True)
    done = subprocess.run([*asv, "run", "--launch-method", "forkserver", "-E",
                           f"existing:{sys.executable}", "--set-commit-hash", "HEAD",
                           "--machine", "box", "--quick"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    (result,) = (tmp_path / "results" / "box").glob("*-existing-*.json")
    recorded = json.loads(result.read_text())["results"]
    assert recorded["held.track_forkserver_recognised"][0] == [1]
    assert recorded["held.track_forkserver_stopped_while_held"][0] == [1]
