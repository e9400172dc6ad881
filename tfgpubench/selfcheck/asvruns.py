"""Real `asv run`s of the suite against this interpreter, in a scratch directory.

The self-check must not touch the project's results, environments or stacks
repository, so it writes a copy of asv.conf.json whose repo is a throwaway
git repository (one empty commit per run: `asv compare` compares commits) and
whose results, environments and html live in a temporary directory, and runs
`asv run -E existing:<this python> --set-commit-hash <commit>`. HOME points
there too, so the machine file asv writes is the scratch one.
"""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from ..names import GPU_CHECKS_ENV
from ..runner import ASV_RUN_DEFAULTS, end_interrupted, engine_scope, gpu_checks_in
from ..suite import suite_module
from .stats import unroll_results

MACHINE = "selfcheck"
# [[commit, round number, {case: samples its result file held after that round}], ...]
ROUNDS_FILE = "rounds.json"
_PROGRESS = re.compile(r"^\[\s*\d+(\.\d+)?%\]")


class Scratch:
    """A scratch asv setup: config, a git repo with `commits` empty commits, a HOME."""

    def __init__(self, root, config_path, commits=4, launch_method=None):
        from asv.util import load_json

        self.root = Path(root)
        self.repo = self.root / "repo"
        self.home = self.root / "home"
        self.home.mkdir(parents=True, exist_ok=True)
        self.gpu_checks = self.root / "gpu-checks.json"
        self.hashes = _make_repo(self.repo, commits)
        config = load_json(str(config_path), js_comments=True)
        base = Path(config_path).resolve().parent
        config.update(
            repo=str(self.repo),
            branches=["main"],
            benchmark_dir=str((base / config.get("benchmark_dir", "benchmarks")).resolve()),
            env_dir=str(self.root / "env"),
            results_dir=str(self.root / "results"),
            html_dir=str(self.root / "html"),
        )
        if launch_method:
            config["launch_method"] = launch_method
        self.launch_method = config.get("launch_method") or "spawn"
        # {commit: {(builder, *args): page faults per op of each run}}: see page_faults.
        self.faults = {}
        # [(commit, round number, {case: how many samples it holds})] of run_interleaved's rounds,
        # in the order they ran: where each round's samples end (stats.round_drift).
        self.rounds_run = []
        self.benchmark_dir = config["benchmark_dir"]
        self.config = self.root / "asv.conf.json"
        self.config.write_text(json.dumps(config, indent=1))
        self._asv(["machine", "--yes", "--machine", MACHINE], quiet=True)
        # The GPU self-check once, handed to every benchmark process, as `run` does.
        if gpu_checks_in(sys.executable, self.benchmark_dir, self.gpu_checks) is None:
            raise RuntimeError("the GPU self-check did not run in this Python")

    def env(self, extra=None):
        env = dict(os.environ, HOME=str(self.home), **{GPU_CHECKS_ENV: str(self.gpu_checks)})
        env.update(extra or {})
        return env

    def _asv(self, args, extra_env=None, quiet=False, progress=None, engine_faults=None):
        """asv's output. engine_faults: a dict the page faults its TensorFlow engines
        counted are added to ({block: per-op faults of each run of it})."""
        command = [sys.executable, "-m", "asv", *args, "--config", str(self.config)]
        env = self.env(extra_env)
        # Each asv run gets TensorFlow engines of its own, ended after it, as under `run`.
        with engine_scope(env) as folder:
            process = subprocess.Popen(
                command,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                env=env,
                cwd=str(self.root),
            )
            lines = []
            try:
                for line in process.stdout:
                    lines.append(line)
                    if progress and _PROGRESS.match(line.strip()):
                        progress("    " + line.strip()[:96])
            except KeyboardInterrupt as interrupt:
                end_interrupted(process, interrupt)
                raise
            process.wait()
            if engine_faults is not None:
                for counted in suite_module("engine").ask_engines(folder, "page_faults"):
                    for block, faults in counted.items():
                        engine_faults.setdefault(block, []).extend(faults)
        output = "".join(lines)
        if process.returncode and not quiet:
            raise RuntimeError(
                f"asv {' '.join(args)} exited {process.returncode}:\n{output[-3000:]}"
            )
        return output

    def run(self, commit, bench=None, extra_env=None, progress=None, one_round=False,
            asv_args=()):
        """One `asv run` recorded under `commit`; returns its wall time and output.

        bench: an asv -b pattern, or a list of them.
        one_round: run one round of each case and add its samples to those `commit`
        already has (`--attribute rounds=1 --append-samples`): one step of run_interleaved.
        asv_args: more arguments for asv run (`--attribute warmup_time=0`).
        """
        args = [
            "run",
            "-E",
            f"existing:{sys.executable}",
            "--set-commit-hash",
            commit,
            "--machine",
            MACHINE,
            "--launch-method",
            self.launch_method,
            *ASV_RUN_DEFAULTS,
        ]
        for pattern in [bench] if isinstance(bench, str) else bench or ():
            args += ["-b", pattern]
        if one_round:
            args += ["--attribute", "rounds=1", "--append-samples"]
        args += list(asv_args)
        start = time.perf_counter()
        # A failing benchmark makes asv exit non-zero; the run still counts, and the
        # failure shows in compare as a missing value, so don't stop the self-check.
        output = self._asv(args, extra_env=extra_env, progress=progress, quiet=True,
                           engine_faults=self.faults.setdefault(commit, {}))
        if "Discovering benchmarks" not in output or "Benchmarking" not in output:
            raise RuntimeError(f"asv run did not run:\n{output[-3000:]}")
        return {"wall": time.perf_counter() - start, "output": output}

    def run_interleaved(self, commits, rounds, bench=None, envs=None, between=None,
                        progress=None):
        """Measure `commits` one round of every case at a time, in turn, `rounds` rounds.

        What `asv continuous` does with its two commits, and so `tfgpubench gate`
        (asv's --interleave-rounds, its default wherever it can switch commits; an
        existing environment, as here, cannot): the order reverses every round (A B,
        B A, A B, B A), so the machine's slow drift, and load that comes and goes,
        fall on every commit alike instead of deciding a comparison. Each round's
        samples are appended to the commit's earlier ones, as asv continuous does.

        envs: {commit: extra environment}; between(number) runs after each round.
        Each round's sample counts go to `rounds_run`, and to ROUNDS_FILE in the scratch
        directory. Returns {commit: wall seconds of its asv runs, summed}.
        """
        walls = dict.fromkeys(commits, 0.0)
        for number in range(1, rounds + 1):
            for commit in commits if number % 2 else commits[::-1]:
                if progress:
                    progress(f"    round {number}/{rounds} of {commit[:8]}")
                done = self.run(commit, bench, extra_env=(envs or {}).get(commit),
                                one_round=True)
                walls[commit] += done["wall"]
                self.rounds_run.append((commit, number, self.sample_counts(commit)))
                # Kept with the results (--keep), a run cut short included: where each
                # round's samples end, for a look at them after the self-check.
                (self.root / ROUNDS_FILE).write_text(json.dumps(self.rounds_run, indent=1))
            if between:
                between(number)
        return walls

    def page_faults(self, commit):
        """{(builder, *args): minor page faults per op of each run of the block} the
        TensorFlow engines counted in the asv runs of `commit` (engine.Work.page_faults):
        every run asv asked for, its warm-up's included, not only its samples'."""
        return self.faults.get(commit, {})

    def compare(self, before, after, factor):
        return self._asv(
            ["compare", "--factor", str(factor), "--split", "--machine", MACHINE, before, after]
        )

    def sample_counts(self, commit):
        """{case: how many samples `commit`'s result file holds}, for the cases with any;
        {} where asv wrote none (the run's failure shows in compare, not here)."""
        try:
            cases = unroll_results(self.result_file(commit))
        except RuntimeError:
            return {}
        return {case: len(c["samples"]) for case, c in cases.items() if c["samples"]}

    def result_file(self, commit):
        found = list((self.root / "results" / MACHINE).glob(f"{commit[:8]}-*.json"))
        if not found:
            raise RuntimeError(f"asv wrote no results for {commit[:8]}")
        return json.loads(found[0].read_text())



def _make_repo(path, commits):
    path.mkdir(parents=True, exist_ok=True)
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="selfcheck",
        GIT_AUTHOR_EMAIL="selfcheck@localhost",
        GIT_COMMITTER_NAME="selfcheck",
        GIT_COMMITTER_EMAIL="selfcheck@localhost",
    )

    def git(*args):
        return subprocess.run(
            ["git", *args], cwd=path, env=env, check=True, capture_output=True, text=True
        ).stdout.strip()

    git("init", "-q", "-b", "main")
    hashes = []
    for i in range(commits):
        git("commit", "-q", "--allow-empty", "-m", f"selfcheck run {i + 1}")
        hashes.append(git("rev-parse", "HEAD"))
    return hashes


def start_seconds(benchmark_dir, tensorflow, count=3):
    """What starting a process costs, median of `count`: a benchmark process (Python,
    asv_runner and the suite's module: TensorFlow stays out of it), or with `tensorflow`
    the TensorFlow engine's start (Python and TensorFlow, once per run)."""
    parent, package = os.path.split(os.path.abspath(benchmark_dir))
    code = f"import sys; sys.path.insert(0, {parent!r}); "
    code += (f"import {package}.common; {package}.common.load_tensorflow()" if tensorflow
             else f"import asv_runner.run; import {package}.multiply")
    times = []
    for _ in range(count):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2]
