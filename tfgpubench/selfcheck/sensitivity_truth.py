"""Sensitivity's truth: two workers (sensitivity_worker.py) time the suite's blocks with
a bare clock, one in the default environment and one in the slowed one.

Each case is asked of both workers in turn, twice, in opposite orders
(default-slowed, then slowed-default), so slow drift of the machine affects
both sides alike; the workers never measure at the same time.
"""

import itertools
import json
import os
import subprocess
import sys

from ..names import MULTIPLY, case_id
from ..suite import grid
from . import stats


class Worker:
    def __init__(self, benchmark_dir, extra_env):
        env = dict(os.environ, **extra_env)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tfgpubench.selfcheck.sensitivity_worker", benchmark_dir],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
        )
        self._read()

    def _read(self):
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("truth worker exited early")
        return json.loads(line)

    def ask(self, case):
        self.process.stdin.write(" ".join(str(p) for p in case) + "\n")
        self.process.stdin.flush()
        return self._read()

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def cases():
    """Every Multiply combination the suite defines, device first."""
    return list(itertools.product(grid.DEVICES, grid.SIZES, grid.DTYPES, grid.MODES))


def measure(benchmark_dir, slow_env, progress=print, passes=2, keep=None):
    """{case id: {"default": s/op, "slowed": s/op}} for every case both workers measure
    (`keep`: an optional predicate on (device, size, dtype, mode) to measure fewer)."""
    default, slowed = Worker(benchmark_dir, {}), Worker(benchmark_dir, slow_env)
    out = {}
    try:
        for i, case in enumerate(c for c in cases() if keep is None or keep(c)):
            got = {"default": [], "slowed": []}
            for p in range(passes):
                order = [("default", default), ("slowed", slowed)]
                for side, worker in order if p % 2 == 0 else reversed(order):
                    answer = worker.ask(case)
                    if "median" in answer:
                        got[side].append(answer["median"])
            if got["default"] and got["slowed"]:
                medians = {side: stats.median(values) for side, values in got.items()}
                out[case_id(MULTIPLY, map(repr, case))] = medians
                if i % 8 == 7:
                    progress(f"    truth: {i + 1} cases")
    finally:
        default.close()
        slowed.close()
    return out
