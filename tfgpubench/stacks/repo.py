"""Generate .stacks/, the git repository asv benchmarks: one commit per stack.

asv orders results by commit, puts tags on its graphs and compares commits;
a commit per stack, dated at its release and tagged with its label, makes
all of that work along releases with asv unmodified. The hashes depend only
on the table (fixed author, committer, dates, content; no user git config),
so every machine generates the same ones and their results merge.

Commits are written with git plumbing (hash-object, mktree, commit-tree):
no hooks, signing or user configuration can change them.
"""

import json
import os
import subprocess
from pathlib import Path

from ..names import STACK_FILE

BRANCH = "main"
AUTHOR = ("tfgpubench stacks", "stacks@tfgpubench.invalid")
# Noon UTC: the same calendar day in every time zone asv displays.
TIME_OF_DAY = "12:00:00 +0000"
OWN_PREFIX = "own-"


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


def chain_order(stacks):
    """The stacks in commit order: by date, the table's order breaking ties."""
    return sorted(stacks, key=lambda s: s.date)


def expected_hashes(stacks, own=()):
    """{label: hash} the table gives, computed in a scratch repository."""
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        return build(stacks, scratch, own)


def build(stacks, path, own=()):
    """Create or update the repository at `path`; {label: hash} for every tag.

    own: extra stacks measured from an existing installation that matches no
    row (see runner); each becomes a side commit on its parent row, so it
    has a tag and a place on the graphs without changing the main line.
    """
    path = Path(path)
    if not (path / ".git").is_dir():
        path.mkdir(parents=True, exist_ok=True)
        git(path, "init", "-q")
    hashes = {}
    parent = None
    for stack in chain_order(stacks):
        parent = write_commit(path, stack.as_data(), parent, stack.date.isoformat())
        hashes[stack.label] = parent
    if parent is None:
        raise RepoError("the table has no stacks")
    for entry in own:
        base = hashes.get(entry["parent"], parent)
        date = git(path, "show", "-s", "--format=%cd", "--date=format:%Y-%m-%d", base)
        hashes[entry["label"]] = write_commit(path, entry["stack"], base, date, seconds=60)
    git(path, "update-ref", f"refs/heads/{BRANCH}", parent)
    git(path, "symbolic-ref", "HEAD", f"refs/heads/{BRANCH}")
    _sync_tags(path, hashes)
    # The work tree follows the branch so a human looking at .stacks sees the newest stack.
    git(path, "reset", "-q", "--hard", BRANCH)
    return hashes


def _sync_tags(path, hashes):
    current = {}
    listing = git(path, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/tags")
    for line in listing.splitlines():
        name, obj = line.split()
        current[name] = obj
    for name in set(current) - set(hashes):
        git(path, "tag", "-d", name)
    for label, commit in hashes.items():
        if current.get(label) != commit:
            git(path, "tag", "-f", label, commit)
    # Other refs (a placeholder remote, old branches) would put stale commits
    # into asv's `rev-list --all` ordering.
    refs = git(path, "for-each-ref", "--format=%(refname)")
    for ref in refs.splitlines():
        if not ref.startswith(("refs/tags/", f"refs/heads/{BRANCH}")):
            git(path, "update-ref", "-d", ref)


def tags(path):
    """{label: hash} of an existing repository."""
    listing = git(path, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/tags")
    return dict(line.split() for line in listing.splitlines())
