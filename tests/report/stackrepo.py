"""A tiny stand-in for asv's generated stacks repo, with reproducible commit hashes.

The fixture results under tests/fixtures/results were recorded by real asv
runs with `--set-commit-hash` set to these commits, so `asv publish` and the
report can find them: fixed author, dates and contents give the same hashes
on every machine.
"""

import os
import subprocess
from pathlib import Path

# (tag, file contents) per commit, oldest first: the TensorFlow each fixture ran.
STACKS = [
    ("tf-2.16.2", "tensorflow-cpu==2.16.2\n"),
    ("tf-2.21.0", "tensorflow-cpu==2.21.0\n"),
]

_IDENTITY = {
    "GIT_AUTHOR_NAME": "tfgpubench",
    "GIT_AUTHOR_EMAIL": "tfgpubench@example.invalid",
    "GIT_COMMITTER_NAME": "tfgpubench",
    "GIT_COMMITTER_EMAIL": "tfgpubench@example.invalid",
}


def make_stack_repo(path):
    """Create the repo at `path`; returns {tag: commit hash}."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **_IDENTITY, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*args):
        return subprocess.run(
            ["git", "-C", str(path), *args], env=env, check=True, capture_output=True, text=True
        ).stdout.strip()

    git("init", "-q")
    git("symbolic-ref", "HEAD", "refs/heads/main")
    hashes = {}
    for day, (tag, contents) in enumerate(STACKS, 1):
        (path / "requirements.txt").write_text(contents)
        git("add", "requirements.txt")
        stamp = f"2026-01-0{day}T00:00:00+00:00"
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = stamp
        git("commit", "-q", "-m", tag)
        git("tag", tag)
        hashes[tag] = git("rev-parse", "HEAD")
    return hashes


if __name__ == "__main__":
    import sys

    for tag, commit in make_stack_repo(sys.argv[1]).items():
        print(tag, commit)
