"""Drives reference workers (reference_worker.py): the bare-loop truth, in processes of
their own, one per environment (the default, and a slowed one for sensitivity).

Workers are asked in turn, never at the same time; each case is asked of every
worker once a pass, the order reversed on every pass, so slow drift of the
machine hits all of them alike. Each pass starts workers of its own: a mid-size
op's time is partly a draw of the process (fidelity.py), and a truth from one
process per environment would be that draw.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

from ..suite import grid, suite_module

# `python -c`, not `-m`: runpy's two frames would put the worker's loop deeper than the
# suite's engine calls its ops (see reference_worker's docstring).
WORKER_CODE = "from tfgpubench.selfcheck.reference_worker import main; raise SystemExit(main())"
PACKAGE_ROOT = Path(__file__).resolve().parents[2]
STATISTICS = ("median", "fast")


def worker_environ(extra_env=None, environ=os.environ):
    """A worker's environment: the one the suite's TensorFlow engine runs under (its
    malloc settings: the suite's allocator.py), and `extra_env`. The same process
    settings, none of the suite's code: without them a bare loop's 2048x2048 ops land on
    fresh pages in some of its loops and not others, and the two would differ by that."""
    return dict(suite_module("engine").engine_environ(environ), **(extra_env or {}))


class ReferenceWorker:
    """One reference_worker process with `extra_env`; ask(size, dtype, mode) ->
    {"median": s/op, "fast": s/op} (see reference_worker), or None where it failed."""

    def __init__(self, extra_env=None):
        self.process = subprocess.Popen(
            [sys.executable, "-c", WORKER_CODE],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            env=worker_environ(extra_env), cwd=PACKAGE_ROOT,
        )
        self.ready = self._read()

    def _read(self):
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the reference worker exited early")
        return json.loads(line)

    def ask(self, size, dtype, mode):
        self.process.stdin.write(f"{size} {dtype} {mode} {grid.input_copies(size, dtype)}\n")
        self.process.stdin.flush()
        answer = self._read()
        return None if "error" in answer else {k: answer[k] for k in STATISTICS}

    def loops(self, size, dtype, mode, seconds):
        """Per-op seconds of every ~10 ms loop of the case, back to back for `seconds`."""
        return self.loops_and_faults(size, dtype, mode, seconds)[0]

    def loops_and_faults(self, size, dtype, mode, seconds):
        """(per-op seconds, per-op minor page faults) of every ~10 ms loop of the case,
        back to back for `seconds`."""
        copies = grid.input_copies(size, dtype)
        self.process.stdin.write(f"{size} {dtype} {mode} {copies} {seconds}\n")
        self.process.stdin.flush()
        answer = self._read()
        if "error" in answer:
            raise RuntimeError(f"the reference worker could not time the case: {answer['error']}")
        return answer["loops"], answer["faults"]

    def close(self):
        self.process.stdin.close()
        self.process.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def measure_passes(cases, envs, passes=2, progress=None):
    """{case: {env name: [{statistic: per-op seconds} of each pass]}} for (size, dtype,
    mode) cases; statistics: the loops' median per-op time, and their fast time.

    envs: {name: extra environment}; each pass asks every case of one new worker per
    environment, in turn, so the ratio of two environments within a pass is a pair taken
    seconds apart. A case some pass could not time is left out.
    """
    got = {case: {name: [] for name in envs} for case in cases}
    for number in range(passes):
        workers = {}
        try:
            for name, extra in envs.items():
                workers[name] = ReferenceWorker(extra)
            order = list(workers.items())
            for case in cases:
                for name, worker in (order if number % 2 == 0 else order[::-1]):
                    value = worker.ask(*case)
                    if value is not None:
                        got[case][name].append(value)
        finally:
            for worker in workers.values():
                worker.close()
        if progress:
            progress(f"    reference: pass {number + 1}/{passes}, {len(cases)} cases")
    return {case: by_env for case, by_env in got.items()
            if all(len(values) == passes for values in by_env.values())}
