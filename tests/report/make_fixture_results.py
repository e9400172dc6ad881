"""Regenerate tests/report/fixtures/results/ from a real run of today's suite.

Two real TensorFlow releases (tensorflow-cpu 2.16.2 and 2.21.0), each in a
virtual environment of its own, are measured with the real `asv run` (the
launch method `tfgpubench run` uses here, samples kept) under the commits of
tests/report/stackrepo.py, on machine "testbox". The report's tests read
these files; regenerate them whenever the suite's benchmarks change (their
ids, parameters or versions), and commit the result.

    python tests/report/make_fixture_results.py [--envs DIR]

Takes ~5 minutes on 2 cores with pip's cache warm (two installs of ~25 s, two
full runs of the suite); the environments are kept for the next time.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT = HERE / "fixtures" / "results"
MACHINE = "testbox"
RELEASES = {"tf-2.16.2": "tensorflow-cpu==2.16.2", "tf-2.21.0": "tensorflow-cpu==2.21.0"}


def environment(directory, pin):
    """A virtual environment with `pin` and asv_runner installed; its Python."""
    python = directory / "bin" / "python"
    if not python.exists():
        venv.create(directory, with_pip=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", pin, "asv_runner"],
                       check=True)
    return python


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # A fixed place: asv names an existing environment after its Python's path, and
    # that name is part of every result file's name.
    parser.add_argument("--envs", type=Path,
                        default=Path(tempfile.gettempdir()) / "tfgpubench-envs",
                        help="where the virtual environments live (default: %(default)s)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(ROOT))
    from stackrepo import make_stack_repo

    from tfgpubench.runner import ASV_RUN_DEFAULTS, launch_method_args

    with tempfile.TemporaryDirectory(prefix="tfgpubench-fixture-") as scratch:
        scratch = Path(scratch)
        envs = args.envs
        hashes = make_stack_repo(scratch / "repo")
        results = scratch / "results"
        config = json.loads((ROOT / "asv.conf.json").read_text())
        config.update(repo=str(scratch / "repo"), branches=["main"],
                      benchmark_dir=str(ROOT / "benchmarks"), results_dir=str(results),
                      html_dir=str(scratch / "html"), env_dir=str(scratch / "env"))
        config_path = scratch / "asv.conf.json"
        config_path.write_text(json.dumps(config))
        env = dict(os.environ, HOME=str(scratch))  # asv's machine file stays in the scratch

        def asv(*command):
            subprocess.run([sys.executable, "-m", "asv", *command, "--config", str(config_path)],
                           check=True, env=env, cwd=scratch)

        asv("machine", "--yes", "--machine", MACHINE)
        for tag, pin in RELEASES.items():
            python = environment(envs / tag, pin)
            print(f"measuring {tag} ({pin}) with {python}", flush=True)
            # A failing benchmark makes asv exit 2 with the results saved: not fatal here.
            subprocess.run([sys.executable, "-m", "asv", "run", "-E", f"existing:{python}",
                            "--set-commit-hash", hashes[tag], "--machine", MACHINE,
                            *ASV_RUN_DEFAULTS, *launch_method_args([]),
                            "--config", str(config_path)], env=env, cwd=scratch, check=False)
        if OUT.exists():
            shutil.rmtree(OUT)
        shutil.copytree(results, OUT)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
