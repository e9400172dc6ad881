"""asv's forkserver, held still while the engine times a block.

Under the forkserver launch method (what `tfgpubench run` uses on Linux) asv_runner's
server waits for each benchmark process it forked by polling: os.waitpid(WNOHANG), then
a sleep growing to 1 ms (asv_runner/server.py). That is ~1,000 wake-ups a second, on a
core the engine's threads use, for as long as a case runs; a bare loop has nothing of the
kind beside it. On the README's second VM (2-core AMD EPYC, tensorflow-cpu 2.21.0,
2026-12-05) the engine's samples of 22 cpu cases of 512x512 to 2048x2048, asked by a
forked process whose parent polled so, read 1.043-1.058x (median over the cases, three
runs, 19-22 of 22 above 1.00) the same samples asked by a process blocked in recv; with
the parent stopped while each block ran, 1.015-1.036x (scripts/forkserver_hold.py).

So a benchmark process names its parent to the engine when that parent is asv_runner's
forkserver (`forkserver_parent`), and the engine stops it (SIGSTOP) from just before a
block's warm-up to just after the block, then lets it go on (SIGCONT): `held_still`. It
stops nothing else, and never for longer than a block. Nothing is left stopped: the
engine continues it in a `finally`, and a benchmark process whose engine ended mid-block
continues it too (engine.EngineBlock). asv's timeout is the forkserver's to enforce: its
clock runs on while the server is stopped, and it acts on it between blocks. Under spawn
(macOS) asv waits for the benchmark process in select() on its output, without polling,
and is left alone; so is any other parent.

TFGPUBENCH_HOLD_LAUNCHER=0 turns it off (an engine's key includes it: engine.py).
Linux only (/proc); elsewhere no parent is held. Standard library only, Python 3.8.
"""

import contextlib
import os
import signal

HOLD_ENV = "TFGPUBENCH_HOLD_LAUNCHER"
# asv starts its forkserver as `python <asv>/benchmark.py run_server <dir> <socket>`.
FORKSERVER_COMMAND = "run_server"


def command_line(pid):
    """The arguments process `pid` was started with, or None where /proc won't say."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read().decode(errors="replace").split("\0")
    except OSError:
        return None


def forkserver_parent(environ=os.environ, parent=None, read_command_line=command_line):
    """The pid of asv_runner's forkserver where it is this process's parent and holding it
    is not turned off; else None."""
    if environ.get(HOLD_ENV, "1") == "0":
        return None
    parent = os.getppid() if parent is None else parent
    if parent <= 1:
        return None
    arguments = read_command_line(parent) or []
    # The argument after asv's runner script: a process that merely mentions it is not one.
    for script, command in zip(arguments, arguments[1:]):
        if command == FORKSERVER_COMMAND and os.path.basename(script) == "benchmark.py":
            return parent
    return None


def _signal(pid, number):
    try:
        os.kill(pid, number)
    except (ProcessLookupError, PermissionError):  # gone, or not ours: nothing to hold
        return False
    return True


def let_go(pid):
    """Continue process `pid` (None: none), stopped or not."""
    if pid is not None:
        _signal(pid, signal.SIGCONT)


@contextlib.contextmanager
def held_still(pid):
    """Process `pid` stopped for the body of the `with`, continued after whatever happens
    in it; None holds nothing."""
    if pid is None or not _signal(pid, signal.SIGSTOP):
        yield
        return
    try:
        yield
    finally:
        let_go(pid)
