"""Load that comes and goes: a second process busy on one core for a few seconds at a time.

The noise check runs the suite once under it, as a shared machine or a
laptop with a browser open would: the gate must not flag what it causes.
"""

import os
import subprocess
import sys

# Busy for BUSY seconds, idle for IDLE, over and over, on one core (one thread).
BUSY_SECONDS = 3.0
IDLE_SECONDS = 3.0

# It ends on its own once the self-check that started it is gone (killed with no chance
# to clean up, SIGKILL or a lost terminal): a load left behind would slow whatever runs
# next on the machine, for as long as nobody notices it.
_SPIN = """
import os, time
busy, idle, parent = {busy}, {idle}, {parent}
while os.getppid() == parent:
    end = time.perf_counter() + busy
    while time.perf_counter() < end:
        pass
    time.sleep(idle)
"""


class BurstyLoad:
    """Context manager: the load process runs inside the `with` block, and is killed after."""

    def __init__(self, busy=BUSY_SECONDS, idle=IDLE_SECONDS):
        self.busy, self.idle = busy, idle
        self.process = None

    def describe(self):
        return (f"a process busy on one core for {self.busy:g} s, then idle {self.idle:g} s, "
                "over and over")

    def __enter__(self):
        code = _SPIN.format(busy=self.busy, idle=self.idle, parent=os.getpid())
        self.process = subprocess.Popen([sys.executable, "-c", code])
        return self

    def __exit__(self, *exc):
        self.process.kill()
        self.process.wait()
        return False
