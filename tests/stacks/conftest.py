"""A scratch copy of the suite for tests that run asv: its own results, .asv and
.stacks, with the real benchmarks/, tfgpubench/ and asv.conf.json."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
# Real results of an earlier suite version: ten tensorflow-cpu stacks measured by
# `python -m tfgpubench run --all` on machine "vm" (a 2-core AMD EPYC VM),
# once committed under results/vm/; kept here as a results folder to corrupt,
# interrupt and skip in the tests.
RECORDED_RESULTS = FIXTURES / "results"


def make_workspace(path, table=None):
    path.mkdir(parents=True, exist_ok=True)
    for name in ("benchmarks", "tfgpubench"):
        (path / name).symlink_to(ROOT / name)
    shutil.copy(ROOT / "asv.conf.json", path / "asv.conf.json")
    if table is None:
        shutil.copy(ROOT / "stacks.toml", path / "stacks.toml")
    else:
        (path / "stacks.toml").write_text(table)
    (path / "home").mkdir()
    return path


def workspace_env(path):
    env = dict(os.environ)
    # asv keeps machine descriptions in ~/.asv-machine.json: keep the user's out of it,
    # but keep pip's cache so TensorFlow downloads once.
    env.setdefault("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip"))
    env["HOME"] = str(path / "home")
    env["PYTHONPATH"] = str(path)
    env["TFGPUBENCH_VARIANT"] = "cpu"
    return env


def tfgpubench(path, *args, timeout=900, env_extra=None, **kwargs):
    return subprocess.run(
        [sys.executable, "-m", "tfgpubench", *args], cwd=path,
        env={**workspace_env(path), **(env_extra or {})},
        capture_output=True, text=True, timeout=timeout, **kwargs,
    )


def asv(path, *args, timeout=900):
    return subprocess.run(
        [sys.executable, "-m", "asv", *args], cwd=path, env=workspace_env(path),
        capture_output=True, text=True, timeout=timeout,
    )


def _default_sigint():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_until(path, args, marker, then, delay, env_extra=None):
    """Start the runner in its own process group; once `marker` is printed, wait
    `delay` s and send `then` to the whole group. Output and exit status.

    The runner starts with SIGINT's default action, as a terminal's foreground job
    does: a test run started in the background by a non-interactive shell (`pytest &`)
    ignores SIGINT, every child inherits that, and Python then installs no
    KeyboardInterrupt, so a Ctrl-C test would see the run finish instead."""
    proc = subprocess.Popen([sys.executable, "-m", "tfgpubench", *args], cwd=path,
                            env={**workspace_env(path), **(env_extra or {})},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, preexec_fn=_default_sigint)
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if marker in line:
            time.sleep(delay)
            os.killpg(proc.pid, then)
            break
    lines.extend(proc.stdout)
    return "".join(lines), proc.wait(timeout=120)


@pytest.fixture
def workspace(tmp_path):
    return make_workspace(tmp_path / "suite")
