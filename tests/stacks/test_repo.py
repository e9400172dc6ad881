"""The generated .stacks repository: same hashes everywhere, one tagged commit per row,
one branch per section, and no hash that changes when a release is appended."""

import copy
import datetime
import json
import os

import pytest

from tfgpubench.stacks import repo
from tfgpubench.stacks.table import SECTIONS, TENSORFLOWS, load_table, parse_table, tomllib

from .conftest import ROOT

STACKS = load_table(ROOT / "stacks.toml")
# The first row's commit of each branch. If one changes, every result ever
# recorded on that branch drops out of the graphs: change the commit format
# only on purpose. (The linux root changed when each section became its own
# branch; results under the one-chain hashes are measured again.)
FIRST_COMMITS = {"macos": "2b413d63faaea26093fb0fb1d9fa5420aa105225",
                 "linux": "f917b94674e7b848bfd610dceea70a48a0eb0fe3",
                 "comparators": "7ac9dc26480fac4c16e446300c2a5d4fc4d106b9"}


def raw_table():
    with open(ROOT / "stacks.toml", "rb") as f:
        return tomllib.load(f)


def first_of(section):
    return next(s for s in STACKS if s.os == section)


def test_hashes_are_deterministic(tmp_path):
    first = repo.build(STACKS, tmp_path / "a")
    second = repo.build(STACKS, tmp_path / "b")
    assert first == second
    assert {section: first[first_of(section).label] for section in SECTIONS} == FIRST_COMMITS
    assert len(set(first.values())) == len(STACKS)


def test_user_git_configuration_does_not_change_hashes(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        "[user]\n name = Someone Else\n email = someone@example.com\n"
        "[commit]\n gpgsign = true\n[i18n]\n commitEncoding = latin1\n"
        "[init]\n defaultBranch = trunk\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Another")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2001-01-01T00:00:00")
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    hashes = repo.build(STACKS, tmp_path / "r")
    assert {section: hashes[first_of(section).label] for section in SECTIONS} == FIRST_COMMITS


def test_each_section_is_a_branch_of_dated_tagged_commits(tmp_path):
    path = tmp_path / "r"
    hashes = repo.build(STACKS, path)
    assert repo.tags(path) == hashes
    assert sorted(repo.branches(path)) == sorted(SECTIONS)
    for section in SECTIONS:
        rows = [s for s in STACKS if s.os == section]
        # Oldest first along the branch (the x-axis asv draws), one commit per row,
        # and the branch's root has no parent: no row of the other section.
        chain = repo.git(path, "rev-list", "--reverse", section).splitlines()
        assert chain == [hashes[s.label] for s in rows]
        assert repo.git(path, "rev-list", "--max-parents=0", section) == chain[0]
        for stack in rows:
            content = repo.git(path, "show", f"{hashes[stack.label]}:stack.json")
            assert json.loads(content) == stack.as_data()
            date = repo.git(path, "show", "-s", "--format=%cI %an", hashes[stack.label])
            assert date == f"{stack.date.isoformat()}T12:00:00+00:00 tfgpubench stacks"


def test_asv_follows_one_branch_per_section():
    conf = json.loads((ROOT / "asv.conf.json").read_text())
    assert conf["branches"] == [repo.branch_of(section) for section in SECTIONS]


# --- appending a release changes no earlier commit, in either section ------------------

def table_with(rows_of):
    """A validated table holding, per section, the given raw rows."""
    return parse_table({section: rows for section, rows in rows_of.items()})


NEW_ROWS = {
    # The row the issue appended: dated before the newest linux row.
    "macos": [{"label": "tf2.18.0-metal1.2.0", "date": datetime.date(2025, 9, 1),
               "pins": ["tensorflow==2.18.0", "tensorflow-metal==1.2.0"],
               "wheels": {"arm64": ["3.11"]}},
              {"label": "tf2.16.1-metal1.1.0", "date": datetime.date(2026, 6, 1),
               "pins": ["tensorflow==2.16.1", "tensorflow-metal==1.1.0"],
               "wheels": {"arm64": ["3.11"]}}],
    "linux": [{"label": "tf2.22.0", "date": datetime.date(2026, 3, 6),
               "pins": ["tensorflow-cpu==2.22.0"], "cuda": ["tensorflow[and-cuda]==2.22.0"],
               "wheels": {"x86_64": ["3.11"]}}],
    # Comparator releases: dated before and after TensorFlow's newest rows.
    "comparators": [{"label": "torch2.14.1-jax0.10.2-numpy2.4.6",
                     "date": datetime.date(2026, 8, 1),
                     "pins": ["torch==2.14.1", "jax==0.10.2", "jaxlib==0.10.2", "numpy==2.4.6"],
                     "wheels": {"linux-x86_64": ["3.11"]}},
                    {"label": "torch2.14.1-jax0.10.2-numpy2.5.0",
                     "date": datetime.date(2026, 9, 1),
                     "pins": ["torch==2.14.1", "jax==0.10.2", "jaxlib==0.10.2", "numpy==2.5.0"],
                     "cuda": ["torch==2.14.1", "jax[cuda12]==0.10.2", "jaxlib==0.10.2",
                              "numpy==2.5.0"],
                     "wheels": {"linux-x86_64": ["3.12"], "macos-arm64": ["3.12"]}}],
}


def appends():
    """(section, rows before, row appended): every real row appended to the rows above it
    in its section, with the other section whole; then new releases after each section."""
    raw = raw_table()
    cases = []
    for section in SECTIONS:
        other = {s: raw[s] for s in SECTIONS if s != section}
        for count in range(1, len(raw[section])):
            cases.append((section, {**other, section: raw[section][:count]},
                          raw[section][count]))
        appended = list(raw[section])
        for row in NEW_ROWS[section]:
            # Each new release after the ones appended before it, as the table grows.
            cases.append((section, {**other, section: list(appended)}, row))
            appended.append(row)
    return cases


def where_in(date, rows):
    """Where `date` falls among the dates of `rows`."""
    if all(date < row["date"] for row in rows):
        return "before"
    if all(date > row["date"] for row in rows):
        return "after"
    return "among"


def test_appended_rows_fall_before_among_and_after_the_other_sections_rows():
    # What the next test covers: appended rows at every place the other section allows.
    raw = raw_table()
    seen = {section: set() for section in TENSORFLOWS}
    for section, _, row in appends():
        if section not in TENSORFLOWS:
            continue
        other = next(s for s in TENSORFLOWS if s != section)
        seen[section].add(where_in(row["date"], raw[other]))
    assert seen == {"macos": {"before", "among", "after"}, "linux": {"among", "after"}}
    # Linux rows cannot come before every macOS row: the first is from 2023, macOS's 2022.


@pytest.mark.parametrize("section,before,row", appends(),
                         ids=[f"{c[0]}+{c[2]['label']}" for c in appends()])
def test_appending_a_row_keeps_every_earlier_commit_of_every_section(section, before, row):
    older = repo.expected_hashes(table_with(before))
    after = copy.deepcopy(before)
    after[section] = [*after[section], row]
    newer = repo.expected_hashes(table_with(after))
    assert {label: newer[label] for label in older} == older
    assert set(newer) - set(older) == {row["label"]}


def test_removing_the_newest_row_of_a_section_keeps_the_rest():
    for section in SECTIONS:
        newest = [s for s in STACKS if s.os == section][-1]
        older = repo.expected_hashes([s for s in STACKS if s is not newest])
        full = repo.expected_hashes(STACKS)
        assert all(full[label] == commit for label, commit in older.items())


# --- regenerating ------------------------------------------------------------------------

def test_a_rebuild_replaces_the_repository_stale_tags_and_refs_and_all(tmp_path):
    path = tmp_path / "r"
    repo.build(STACKS, path)
    repo.git(path, "tag", "stale")
    repo.git(path, "update-ref", "refs/remotes/origin/main", "macos")
    repo.git(path, "update-ref", "refs/heads/main", "macos")  # the one-chain layout's branch
    hashes = repo.build(STACKS[:3], path)
    assert repo.tags(path) == hashes
    refs = repo.git(path, "for-each-ref", "--format=%(refname)").splitlines()
    assert sorted(refs) == sorted(["refs/heads/macos"] + [f"refs/tags/{t}" for t in hashes])
    assert sorted(os.listdir(path)) == [".git", "stack.json"]
    assert sorted(os.listdir(tmp_path)) == ["r"]


def test_a_build_killed_midway_is_redone_from_scratch(tmp_path):
    # What a kill leaves: the new repository half written beside, the old one moved aside.
    path = tmp_path / "r"
    repo.build(STACKS, path)
    path.rename(tmp_path / "r.old")
    (tmp_path / "r.new" / ".git").mkdir(parents=True)
    (tmp_path / "r.new" / ".git" / "index.lock").write_text("")
    hashes = repo.build(STACKS, path)
    assert hashes == repo.tags(path) == repo.expected_hashes(STACKS)
    assert sorted(os.listdir(tmp_path)) == ["r"]


def test_a_directory_it_did_not_generate_is_not_replaced(tmp_path):
    mine = tmp_path / "project"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    with pytest.raises(repo.RepoError, match="not a generated stacks repository"):
        repo.build(STACKS, mine)
    assert (mine / "notes.txt").read_text() == "keep me"


def test_own_stack_is_a_tagged_side_commit(tmp_path):
    own = [{"label": "own-tensorflow-cpu2.16.1", "parent": "tf2.16.2",
            "stack": {"label": "own-tensorflow-cpu2.16.1", "os": "linux", "own": True,
                      "pins": ["tensorflow-cpu==2.16.1"], "wheels": {"x86_64": ["3.11"]}}}]
    path = tmp_path / "r"
    hashes = repo.build(STACKS, path, own)
    side = hashes["own-tensorflow-cpu2.16.1"]
    assert repo.git(path, "rev-parse", f"{side}^") == hashes["tf2.16.2"]
    for section in SECTIONS:
        assert side not in repo.git(path, "rev-list", section).splitlines()
    # Same entry, same hash, also after a release is appended: results under it survive.
    appended = table_with({**raw_table(), "linux": [*raw_table()["linux"], NEW_ROWS["linux"][0]]})
    assert repo.build(appended, tmp_path / "again", own)["own-tensorflow-cpu2.16.1"] == side


def test_own_stack_whose_parent_left_the_table_hangs_on_its_sections_first_row(tmp_path):
    own = [{"label": "own-tensorflow-cpu2.5.0", "parent": None,
            "stack": {"label": "own-tensorflow-cpu2.5.0", "os": "linux", "own": True,
                      "pins": ["tensorflow-cpu==2.5.0"], "wheels": {"x86_64": ["3.8"]}}}]
    path = tmp_path / "r"
    hashes = repo.build(STACKS, path, own)
    assert repo.git(path, "rev-parse", f"{hashes['own-tensorflow-cpu2.5.0']}^") == (
        hashes[first_of("linux").label])
