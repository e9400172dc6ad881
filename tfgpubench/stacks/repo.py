"""Generate .stacks/, the git repository asv benchmarks: one commit per stack.

asv orders results by commit, puts tags on its graphs and compares commits;
a commit per stack, dated at its release and tagged with its label, makes
all of that work along releases with asv unmodified. The hashes depend only
on the table (fixed author, committer, dates, content; no user git config),
so every machine generates the same ones and their results merge.

Each section of the table is its own branch (`macos`, `linux`: the names
asv.conf.json lists), a chain of that section's rows in table order. A
commit's hash covers its row and, through its parent, the rows above it in
its own section, and nothing else: appending a row to a section changes no
existing commit of either section, whatever its date. (One chain over both
sections, sorted by date, rehashed every later row of the other section.)

Commits are written with git plumbing (hash-object, mktree, commit-tree):
no hooks, signing or user configuration can change them. The repository is
generated whole beside .stacks and swapped in, so a run killed while
generating it leaves the previous repository, or none, never half of one.
"""

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..names import STACK_FILE
from ..pausepoints import pause_point

AUTHOR = ("tfgpubench stacks", "stacks@tfgpubench.invalid")
# Noon UTC: the same calendar day in every time zone asv displays.
TIME_OF_DAY = "12:00:00 +0000"
# Beside the repository: the one being generated, and the one being replaced.
SCRATCH_SUFFIX, ASIDE_SUFFIX = ".new", ".old"


class RepoError(RuntimeError):
    pass


def _git_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({
        # The user's configuration must not reach the commits.
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": AUTHOR[0],
        "GIT_AUTHOR_EMAIL": AUTHOR[1],
        "GIT_COMMITTER_NAME": AUTHOR[0],
        "GIT_COMMITTER_EMAIL": AUTHOR[1],
        "LC_ALL": "C",
    })
    return env


def git(path, *args, input=None, env=None):
    result = subprocess.run(
        ["git", "-C", str(path), *args], input=input, capture_output=True, text=True,
        env=env or _git_env(), check=False,
    )
    if result.returncode != 0:
        raise RepoError(f"git {' '.join(args)} in {path}: {result.stderr.strip()}")
    return result.stdout.strip()


def stack_file_content(data):
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def commit_message(data):
    pins = " ".join(data["pins"])
    cuda = f" (CUDA: {' '.join(data['cuda'])})" if data.get("cuda") else ""
    return f"{data['label']}: {pins}{cuda}\n"


def write_commit(path, data, parent, date, seconds=0):
    """Write one stack's commit object; its hash."""
    blob = git(path, "hash-object", "-w", "--stdin", input=stack_file_content(data))
    tree = git(path, "mktree", input=f"100644 blob {blob}\t{STACK_FILE}\n")
    stamp = f"{date} {TIME_OF_DAY}"
    if seconds:
        # Side commits sort just after their parent in asv's date order.
        stamp = f"{date} 12:{seconds // 60:02d}:{seconds % 60:02d} +0000"
    env = _git_env()
    env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = stamp
    args = ["commit-tree", tree, "-m", commit_message(data).rstrip("\n")]
    if parent:
        args += ["-p", parent]
    return git(path, *args, env=env)


def branch_of(os_name):
    """The branch that holds a section's chain: the section's own name."""
    return os_name


def expected_hashes(stacks, own=()):
    """{label: hash} the table gives, computed in a scratch repository."""
    with tempfile.TemporaryDirectory() as scratch:
        return build(stacks, Path(scratch) / "stacks", own)


def build(stacks, path, own=()):
    """Generate the repository at `path` (replacing the one there); {label: hash} of every tag.

    stacks: the table's rows, each section oldest first (the table's order).
    own: extra stacks measured from an existing installation that matches no
    row (see runner); each becomes a side commit on its parent row, so it
    has a tag and a place on the graphs without changing any branch.
    """
    path = Path(path)
    scratch = path.with_name(path.name + SCRATCH_SUFFIX)
    aside = path.with_name(path.name + ASIDE_SUFFIX)
    _check_generated(path)
    for leftover in (scratch, aside):  # what a killed build left
        if leftover.exists():
            shutil.rmtree(leftover)
    hashes = _generate(stacks, scratch, own)
    if path.exists():
        path.rename(aside)
    pause_point("stacks-swap")
    scratch.rename(path)
    if aside.exists():
        shutil.rmtree(aside)
    return hashes


def _check_generated(path):
    """Refuse to replace a directory this module did not generate."""
    if not path.exists() or (path.is_dir() and not any(path.iterdir())):
        return
    if not (path / ".git").is_dir():
        raise RepoError(f"{path} is not a generated stacks repository; not replacing it")
    authors = set(git(path, "log", "--all", "--format=%ae").split())
    if authors - {AUTHOR[1]}:
        raise RepoError(f"{path} holds commits by {', '.join(sorted(authors - {AUTHOR[1]}))}; "
                        "not a generated stacks repository, not replacing it")


def _generate(stacks, path, own):
    path.mkdir(parents=True)
    git(path, "init", "-q")
    hashes, heads, roots = {}, {}, {}
    for stack in stacks:
        parent = heads.get(stack.os)
        commit = write_commit(path, stack.as_data(), parent, stack.date.isoformat())
        hashes[stack.label] = heads[stack.os] = commit
        roots.setdefault(stack.os, commit)
    if not heads:
        raise RepoError("the table has no stacks")
    for entry in own:
        # Drawn after its parent row; a parent no longer in the table falls
        # back to the first row of its section, which appending never changes.
        base = (hashes.get(entry["parent"]) or roots.get(entry["stack"].get("os"))
                or next(iter(roots.values())))
        date = git(path, "show", "-s", "--format=%cd", "--date=format:%Y-%m-%d", base)
        hashes[entry["label"]] = write_commit(path, entry["stack"], base, date, seconds=60)
    refs = [f"update refs/heads/{branch_of(os_name)} {head}" for os_name, head in heads.items()]
    refs += [f"update refs/tags/{label} {commit}" for label, commit in hashes.items()]
    git(path, "update-ref", "--stdin", input="\n".join(refs) + "\n")
    # The work tree shows the first section's newest stack, for a human looking.
    git(path, "symbolic-ref", "HEAD", f"refs/heads/{branch_of(next(iter(heads)))}")
    git(path, "reset", "-q", "--hard")
    return hashes


def tags(path):
    """{label: hash} of an existing repository."""
    listing = git(path, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/tags")
    return dict(line.split() for line in listing.splitlines())


def branches(path):
    """{branch: head hash} of an existing repository."""
    listing = git(path, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads")
    return dict(line.split() for line in listing.splitlines())
