"""Every bad input stops `run` before anything is installed or changed: one line on
stderr naming the row, argument or file, exit status 2, and results/ and .stacks/
byte for byte as they were. No TensorFlow is installed (each case takes a second).

The workspace holds recorded results (tests/stacks/fixtures/results, machine `vm`) and a
generated .stacks; each case breaks one thing.
"""

import json
import platform
import shutil

import pytest

from tfgpubench.stacks import repo
from tfgpubench.stacks.table import load_table

from .conftest import RECORDED_RESULTS, ROOT, make_workspace, tfgpubench

TABLE = (ROOT / "stacks.toml").read_text()
NEWEST = "tf2.21.0"
ROW = f"stacks.toml [[linux]] #10 ({NEWEST})"
RUN = ["run", "--stacks", NEWEST, "--machine", "e2e", "--no-index-check", "--no-publish"]
RESULT = "results/vm/16a3973b-virtualenv-py3.11.json"
LEDGER = "results/vm/installed-versions.jsonl"
HOST = platform.node()


def edit(old, new):
    """A table edit: `old` (found once in the table) becomes `new`."""
    def apply(text):
        assert text.count(old) == 1, old
        return text.replace(old, new)
    return apply


def newest_label(label):
    return edit(f'label = "{NEWEST}"', f'label = "{label}"')


def row_of(label):
    return f"stacks.toml [[linux]] #10 ({label})"


def recorded(path):
    """The text of `path` (results/...) as the workspace holds it before a case breaks it."""
    return (RECORDED_RESULTS.parent / path).read_text()


def first_lines(path, count):
    return "\n".join(recorded(path).splitlines()[:count]) + "\n"


def cut(path, keep):
    return recorded(path)[:keep]


OTHER_MACHINE = json.dumps({"machine": HOST, "cpu": "Another CPU", "num_cpu": "64",
                            "ram": "1000000000000", "arch": platform.machine(),
                            "gpu": "none", "os": "Another OS 1.0", "version": 1})

# id: (table edit or None, {file: new content}, environment, arguments, [what the line names])
CASES = {
    # labels the old validator let through, that git refuses or misreads
    "label-trailing-dot": (newest_label("tf2."), {}, {}, RUN, [row_of("tf2."), "git refuses"]),
    "label-dot-lock": (newest_label("a.lock"), {}, {}, RUN, [row_of("a.lock"), "git refuses"]),
    "label-double-dot": (newest_label("tf2..x"), {}, {}, RUN, [row_of("tf2..x"), "git refuses"]),
    "label-main": (newest_label("main"), {}, {}, RUN, [row_of("main"), "as a branch, HEAD"]),
    "label-HEAD": (newest_label("HEAD"), {}, {}, RUN, [row_of("HEAD"), "as a branch, HEAD"]),
    "label-hex": (newest_label("abcdef0123456789abcdef0123456789abcdef01"), {}, {}, RUN,
                  ["abcdef0123456789abcdef0123456789abcdef01", "as a commit hash"]),
    "label-branch": (newest_label("linux"), {}, {}, RUN, [row_of("linux"), "section's branch"]),
    "label-own": (newest_label("own-tf"), {}, {}, RUN, [row_of("own-tf"), "run --existing"]),
    "label-case-twin": (newest_label("TF2.20.0"), {}, {}, RUN,
                        [row_of("TF2.20.0"), "already used by stacks.toml [[linux]] #9"]),
    "label-space": (newest_label("tf 2.21"), {}, {}, RUN, [row_of("tf 2.21"), "only letters"]),
    # dates
    "date-string": (edit("date = 2026-03-06", 'date = "2026-03-06"'), {}, {}, RUN,
                    [ROW, "must be a TOML date"]),
    "date-time": (edit("date = 2026-03-06", "date = 2026-03-06T12:00:00"), {}, {}, RUN,
                  [ROW, "must be a TOML date"]),
    "date-future": (edit("date = 2026-03-06", "date = 2999-01-01"), {}, {}, RUN,
                    [ROW, "not a day a TensorFlow release"]),
    "date-order": (edit("date = 2026-03-06", "date = 2020-01-01"), {}, {}, RUN,
                   [ROW, "before the row above it"]),
    # pins and extras
    "pin-pip-option": (edit('pins = ["tensorflow-cpu==2.21.0"]',
                            'pins = ["--index-url https://evil.example/simple"]'), {}, {}, RUN,
                       [ROW, "is not NAME==VERSION"]),
    "pin-url": (edit('pins = ["tensorflow-cpu==2.21.0"]',
                     'pins = ["tensorflow-cpu @ file:///tmp/tf.whl"]'), {}, {}, RUN,
                [ROW, "is not NAME==VERSION"]),
    "pin-version": (edit('pins = ["tensorflow-cpu==2.21.0"]', 'pins = ["tensorflow-cpu==2.21"]'),
                    {}, {}, RUN, [ROW, "is not X.Y.Z"]),
    "pin-package": (edit('pins = ["tensorflow-cpu==2.21.0"]', 'pins = ["tensorflow-gpu==2.21.0"]'),
                    {}, {}, RUN, [ROW, "unknown package"]),
    "extra-in-pins": (edit('pins = ["tensorflow-cpu==2.21.0"]',
                           'pins = ["tensorflow-cpu[and-cuda]==2.21.0"]'), {}, {}, RUN,
                      [ROW, "the only extra a row may use"]),
    "extra-unknown": (edit('cuda = ["tensorflow[and-cuda]==2.21.0"]',
                           'cuda = ["tensorflow[gpu]==2.21.0"]'), {}, {}, RUN,
                      [ROW, "the only extra a row may use"]),
    "extra-missing": (edit('cuda = ["tensorflow[and-cuda]==2.21.0"]',
                           'cuda = ["tensorflow==2.21.0"]'), {}, {}, RUN,
                      [ROW, "installs no CUDA libraries"]),
    "extra-too-early": (edit('cuda = ["tensorflow==2.12.1"]',
                             'cuda = ["tensorflow[and-cuda]==2.12.1"]'), {}, {}, RUN,
                        ["stacks.toml [[linux]] #1 (tf2.12.1)", "has no and-cuda extra"]),
    # the table as a whole
    "toml-syntax": (edit(f'label = "{NEWEST}"', "label = "), {}, {}, RUN,
                    ["stacks.toml: not valid TOML"]),
    "toml-section": (lambda text: text + '\n[[windows]]\nlabel = "tfw"\n', {}, {}, RUN,
                     ["stacks.toml: unknown section(s) windows"]),
    "toml-wheels": (edit('wheels = { x86_64 = ["3.10", "3.11", "3.12", "3.13"] }',
                         'wheels = { x86_64 = "3.11" }'), {}, {}, RUN,
                    [ROW, "wheels.x86_64 must list Pythons"]),
    "cuda-wheels-more": (edit('cuda_wheels = { x86_64 = ["3.9", "3.10"] }',
                              'cuda_wheels = { x86_64 = ["3.9", "3.12"] }'), {}, {}, RUN,
                         ["stacks.toml [[linux]] #3 (tf2.14.1)", "cuda_wheels.x86_64 lists"]),
    "toml-no-macos": (lambda text: text.split("[[macos]]")[0] + "[[linux]]" +
                      text.split("[[linux]]", 1)[1], {}, {}, RUN,
                      ["stacks.toml: [[macos]] has no rows"]),
    # selections
    "stacks-dots": (None, {}, {}, ["run", "--stacks", "..", "--machine", "e2e"],
                    ["--stacks ..:", "a range needs a label"]),
    "stacks-comma": (None, {}, {}, ["run", "--stacks", ",", "--machine", "e2e"],
                     ["--stacks :", "an empty label"]),
    "stacks-unknown": (None, {}, {}, ["run", "--stacks", "tf9.9.9", "--machine", "e2e"],
                       ["--stacks tf9.9.9:", "no stack labeled 'tf9.9.9'"]),
    "stacks-reversed": (None, {}, {}, ["run", "--stacks", "tf2.21.0..tf2.12.1"],
                        ["--stacks tf2.21.0..tf2.12.1:", "newer than"]),
    "stacks-across": (None, {}, {}, ["run", "--stacks", "tf2.12.1..tf2.18.1-metal1.2.0"],
                      ["--stacks tf2.12.1..tf2.18.1-metal1.2.0:", "stays within one"]),
    # variants
    "variant-argument": (None, {}, {}, [*RUN, "--variant", "rocm"],
                         ["argument --variant: invalid choice: 'rocm'"]),
    "variant-environment": (None, {}, {"TFGPUBENCH_VARIANT": "rocm"}, RUN,
                            ["TFGPUBENCH_VARIANT='rocm'", "expected auto, cpu or cuda"]),
    # machine names
    "machine-path": (None, {}, {}, ["run", "--stacks", NEWEST, "--machine", "../evil"],
                     ["--machine: machine name '../evil'"]),
    "machine-empty": (None, {}, {}, ["run", "--stacks", NEWEST, "--machine", ""],
                      ["--machine: machine name ''"]),
    "machine-file": (None, {}, {}, ["run", "--stacks", NEWEST, "--machine", "benchmarks.json"],
                     ["--machine: machine name 'benchmarks.json'"]),
    "machine-default-taken": (None, {f"results/{HOST}/machine.json": OTHER_MACHINE}, {},
                              ["run", "--stacks", NEWEST, "--no-index-check"],
                              [f"results/{HOST}/ holds another machine's results",
                               "cpu 'Another CPU'", "pass --machine NAME"]),
    # broken files under results/ that no interrupted run explains
    "result-truncated": (None, {RESULT: cut(RESULT, 300)}, {}, RUN,
                         [RESULT, "not valid JSON"]),
    "result-not-object": (None, {RESULT: "[]"}, {}, RUN, [RESULT, "holds list"]),
    "result-foreign": (None, {RESULT: '{"version": 99}'}, {}, RUN,
                       [RESULT, "not a result file asv can read"]),
    "machine-json-truncated": (None, {"results/vm/machine.json": '{"arch": "x86'}, {}, RUN,
                               ["results/vm/machine.json", "not valid JSON"]),
    "benchmarks-json-truncated": (None, {"results/benchmarks.json": cut("results/benchmarks.json",
                                                                        500)}, {}, RUN,
                                  ["results/benchmarks.json", "not valid JSON"]),
    "ledger-merge-conflict": (None, {LEDGER: first_lines(LEDGER, 1) + "<<<<<<< HEAD\n" +
                                     first_lines(LEDGER, 2)}, {}, RUN,
                              [f"{LEDGER}:2", "not a JSON record"]),
    "ledger-not-record": (None, {LEDGER: first_lines(LEDGER, 1) + "[1, 2]\n"}, {}, RUN,
                          [f"{LEDGER}:2", "not a record of a stack"]),
    "ledger-own-label": (None, {LEDGER: first_lines(LEDGER, 1) + json.dumps(
        {"label": "own-x", "commit": "0" * 40, "own": {"label": "own-../../x", "parent": None,
                                                       "stack": {"os": "linux", "pins": []}}})
        + "\n"}, {}, RUN, [f"{LEDGER}:2", "its own stack is not one"]),
    # other arguments
    "config-missing": (None, {}, {}, ["run", "--config", "nowhere.json"],
                       ["--config nowhere.json: no asv configuration"]),
    "existing-missing": (None, {}, {}, ["run", "--existing", "/nonexistent/python", "--machine",
                                        "e2e"], ["--existing /nonexistent/python: cannot ask"]),
}


def tree_bytes(path):
    return {p.relative_to(path): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A workspace with recorded results and a generated .stacks, copied per case."""
    path = make_workspace(tmp_path_factory.mktemp("pristine") / "suite")
    shutil.copytree(RECORDED_RESULTS, path / "results")
    repo.build(load_table(path / "stacks.toml"), path / ".stacks")
    return path


def test_the_table_holds_at_least_25_cases():
    assert len(CASES) >= 25


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_input_is_one_line_exit_2_and_changes_nothing(pristine, tmp_path, case):
    table_edit, files, environment, args, named = CASES[case]
    path = tmp_path / "suite"
    shutil.copytree(pristine, path, symlinks=True)
    if table_edit:
        (path / "stacks.toml").write_text(table_edit(TABLE))
    for name, content in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(content)
    before = {name: tree_bytes(path / name) for name in ("results", ".stacks")}
    out = tfgpubench(path, *args, env_extra=environment, timeout=120)
    lines = out.stderr.splitlines()
    assert out.returncode == 2, out.stdout + out.stderr
    assert len(lines) == 1, out.stderr
    for part in named:
        assert part in lines[0]
    assert {name: tree_bytes(path / name) for name in ("results", ".stacks")} == before
    assert not (path / ".asv").exists()
