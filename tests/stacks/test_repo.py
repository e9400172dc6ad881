"""The generated .stacks repository: same hashes everywhere, one tagged commit per row."""

import json
import os

from tfgpubench.stacks import repo
from tfgpubench.stacks.table import load_table

from .conftest import ROOT

STACKS = load_table(ROOT / "stacks.toml")
# The first row's commit. If this changes, every result ever recorded drops
# out of the graphs: change the commit format only on purpose.
FIRST_COMMIT = "2b413d63faaea26093fb0fb1d9fa5420aa105225"


def test_hashes_are_deterministic(tmp_path):
    first = repo.build(STACKS, tmp_path / "a")
    second = repo.build(STACKS, tmp_path / "b")
    assert first == second
    assert first["tf2.9.2-metal0.5.0"] == FIRST_COMMIT
    assert len(set(first.values())) == len(STACKS)


def test_user_git_configuration_does_not_change_hashes(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        "[user]\n name = Someone Else\n email = someone@example.com\n"
        "[commit]\n gpgsign = true\n[i18n]\n commitEncoding = latin1\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Another")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2001-01-01T00:00:00")
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    assert repo.build(STACKS, tmp_path / "r")["tf2.9.2-metal0.5.0"] == FIRST_COMMIT


def test_commits_are_dated_tagged_and_hold_their_row(tmp_path):
    path = tmp_path / "r"
    hashes = repo.build(STACKS, path)
    assert repo.tags(path) == hashes
    log = repo.git(path, "log", "--format=%H %cI %an", "main").splitlines()
    assert len(log) == len(STACKS)
    by_hash = {line.split()[0]: line.split()[1:] for line in log}
    for stack in STACKS:
        date, author = by_hash[hashes[stack.label]][0], by_hash[hashes[stack.label]][1]
        assert date == f"{stack.date.isoformat()}T12:00:00+00:00"
        assert author == "tfgpubench"
        content = repo.git(path, "show", f"{hashes[stack.label]}:stack.json")
        assert json.loads(content) == stack.as_data()
    # Oldest first along the branch, which is the x-axis asv draws.
    dates = [line.split()[1] for line in reversed(log)]
    assert dates == sorted(dates)


def test_appending_a_release_keeps_every_earlier_hash(tmp_path):
    older = repo.build(STACKS[:-1], tmp_path / "a")
    newer = repo.build(STACKS, tmp_path / "b")
    assert all(newer[label] == commit for label, commit in older.items())


def test_rebuild_in_place_drops_stale_tags_and_refs(tmp_path):
    path = tmp_path / "r"
    repo.build(STACKS, path)
    repo.git(path, "tag", "stale")
    repo.git(path, "update-ref", "refs/remotes/origin/main", "main")
    hashes = repo.build(STACKS[:3], path)
    assert repo.tags(path) == hashes
    refs = repo.git(path, "for-each-ref", "--format=%(refname)").splitlines()
    assert "refs/remotes/origin/main" not in refs and "refs/tags/stale" not in refs
    assert sorted(os.listdir(path)) == [".git", "stack.json"]


def test_own_stack_is_a_tagged_side_commit(tmp_path):
    own = [{"label": "own-tensorflow-cpu2.16.1", "parent": "tf2.16.2",
            "stack": {"label": "own-tensorflow-cpu2.16.1", "os": "linux", "own": True,
                      "pins": ["tensorflow-cpu==2.16.1"], "wheels": {"x86_64": ["3.11"]}}}]
    path = tmp_path / "r"
    hashes = repo.build(STACKS, path, own)
    side = hashes["own-tensorflow-cpu2.16.1"]
    assert repo.git(path, "rev-parse", f"{side}^") == hashes["tf2.16.2"]
    main = repo.git(path, "rev-list", "main").splitlines()
    assert side not in main and len(main) == len(STACKS)
    # Same entry, same hash: results under it survive a rebuild.
    assert repo.build(STACKS, tmp_path / "again", own)["own-tensorflow-cpu2.16.1"] == side
