"""`stacks discover`: rows of new releases, built from the index's answers.

The answers are pypi.org's, recorded by fixtures/capture_index.py. The strongest
check: drop the last rows of stacks.toml, and discover must rebuild them byte for
byte, from the recording alone.
"""

import copy
import datetime
import json
import re
import socket
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tfgpubench.cli import main
from tfgpubench.pairing import METAL_TO_TENSORFLOW
from tfgpubench.stacks.discover import (
    DEFAULT_INDEX_URL,
    SIMPLE_JSON,
    PackageIndexError,
    answer_from_html,
    discover,
    fetch_answers,
    format_rows,
    index_url_from,
    insert_rows,
    releases_in,
    wheel_places,
)
from tfgpubench.stacks.table import parse_table, tomllib

from .conftest import FIXTURES, ROOT

RECORDING = json.loads((FIXTURES / "index_answers.json").read_text())
ANSWERS = RECORDING["answers"]
TABLE = (ROOT / "stacks.toml").read_text()
# The date rows get when the index gives no upload times.
TODAY = datetime.date(2026, 11, 30)
# A row of the table with the blank line before it.
ROW = re.compile(r"\n\[\[(macos|linux)\]\]\n(?:[a-z].*\n)*")


def rows_of(text, section):
    return [m for m in ROW.finditer(text) if m.group(1) == section]


def drop_last(text, section, count):
    """(text without the section's last `count` rows, those rows as discover prints them)."""
    dropped = rows_of(text, section)[-count:]
    for row in reversed(dropped):
        text = text[:row.start()] + text[row.end():]
    return text, "\n".join(row.group()[1:] for row in dropped)


def stacks_of(text):
    """The TensorFlow rows of a table (discover finds no comparator rows)."""
    return [s for s in parse_table(tomllib.loads(text)) if not s.is_comparators]


def recorded(project, version):
    project = project.split("[")[0]  # tensorflow[and-cuda]: tensorflow's files
    prefix = f"{project.replace('-', '_')}-{version}-"
    return any(f["filename"].startswith(prefix) for f in ANSWERS[project]["files"])


def recorded_table():
    """stacks.toml without the rows appended after the recording was captured."""
    text = TABLE
    for stack in reversed(stacks_of(TABLE)):
        if not all(recorded(*pin.split("==")) for pin in stack.pins + stack.cuda):
            row = next(m for m in ROW.finditer(text) if f'label = "{stack.label}"' in m.group())
            text = text[:row.start()] + text[row.end():]
    return text


RECORDED_TABLE = recorded_table()


def with_files(answers, project, *files):
    """A copy of `answers` with more files for `project`: (filename, upload-time) pairs."""
    answers = copy.deepcopy(answers)
    answers[project]["files"].extend({"filename": name, "upload-time": time}
                                     for name, time in files)
    return answers


def test_the_recording_knows_every_row_of_the_table():
    missing = [s.label for s in stacks_of(TABLE) if s not in stacks_of(RECORDED_TABLE)]
    assert not missing, (f"stacks.toml has rows newer than the recording ({', '.join(missing)}): "
                         "re-run python tests/stacks/fixtures/capture_index.py")


# --- rows rebuilt from the recorded answers ------------------------------------------------

REBUILDS = [(section, count) for section in ("macos", "linux")
            for count in range(1, len(rows_of(RECORDED_TABLE, section)))]


def same_rows(found, written):
    """Rows discovered from file lists against the rows as written: the same labels, dates
    and pins; a written row may claim fewer Pythons than the wheels allow (the
    resolution test, tests/stacks/test_resolve.py, narrows a row where a dependency has
    no wheel: jax for Python 3.8, tensorrt for 2.14's CUDA build on 3.11)."""
    assert [(s.label, s.date, s.pins, s.cuda) for s in found] == [
        (s.label, s.date, s.pins, s.cuda) for s in written]
    for new, old in zip(found, written):
        assert set(old.wheels) == set(new.wheels), old.label
        for arch, pythons in old.wheels.items():
            assert set(pythons) <= set(new.wheels[arch]), (old.label, arch)


@pytest.mark.parametrize("section,count", REBUILDS, ids=[f"{s}-last{n}" for s, n in REBUILDS])
def test_the_dropped_rows_come_back_as_written(section, count):
    shorter, dropped = drop_last(RECORDED_TABLE, section, count)
    found = discover(stacks_of(shorter), ANSWERS, TODAY)
    assert found.notes == [] and found.dated
    assert found.all_rows() == found.rows[section]
    same_rows(found.rows[section],
              [s for s in stacks_of(RECORDED_TABLE) if s.os == section][-count:])
    if format_rows(found.rows[section]) == dropped:
        # Appended where they were: the file comes back byte for byte.
        assert insert_rows(shorter, section, found.rows[section]) == RECORDED_TABLE


def test_nothing_new_when_the_table_has_every_release():
    found = discover(stacks_of(RECORDED_TABLE), ANSWERS, TODAY)
    assert found.all_rows() == [] and found.notes == []


def test_pre_releases_are_never_rows():
    # The recording holds real release candidates newer than the table's last rows.
    assert recorded("tensorflow", "2.22.0rc0") and recorded("tensorflow-cpu", "2.22.0rc0")
    answers = with_files(ANSWERS, "tensorflow-metal",
                         ("tensorflow_metal-1.3.0b1-cp312-cp312-macosx_12_0_arm64.whl",
                          "2026-06-01T00:00:00Z"),
                         ("tensorflow_metal-1.2.1rc1-cp312-cp312-macosx_12_0_arm64.whl",
                          "2026-06-01T00:00:00Z"))
    answers = with_files(answers, "tensorflow-cpu",
                         ("tensorflow_cpu-2.23.0.dev20260601-cp312-cp312-"
                          "manylinux_2_27_x86_64.whl", "2026-06-01T00:00:00Z"))
    answers = with_files(answers, "tensorflow",
                         ("tensorflow-2.23.0a1-cp312-cp312-manylinux_2_27_x86_64.whl",
                          "2026-06-01T00:00:00Z"))
    found = discover(stacks_of(RECORDED_TABLE), answers, TODAY)
    assert found.all_rows() == [] and found.notes == []


def test_a_metal_release_apple_does_not_list_is_a_note_until_pairing_lists_it(monkeypatch):
    answers = with_files(ANSWERS, "tensorflow-metal",
                         ("tensorflow_metal-1.3.0-cp312-cp312-macosx_12_0_arm64.whl",
                          "2026-06-01T10:00:00Z"))
    found = discover(stacks_of(RECORDED_TABLE), answers, TODAY)
    assert found.all_rows() == []
    assert found.notes == ["tensorflow-metal 1.3.0 (first uploaded 2026-06-01) is not in "
                           "Apple's pairing table; add it to pairing.py first"]

    monkeypatch.setitem(METAL_TO_TENSORFLOW, (1, 3), [(2, 19)])
    found = discover(stacks_of(RECORDED_TABLE), answers, TODAY)
    assert found.notes == []
    assert format_rows(found.rows["macos"]) == (
        '[[macos]]\n'
        'label = "tf2.19.1-metal1.3.0"\n'
        'date = 2026-06-01\n'
        'pins = ["tensorflow==2.19.1", "tensorflow-metal==1.3.0"]\n'
        'wheels = { arm64 = ["3.12"] }\n'
    )


def test_a_pair_with_no_python_in_common_is_a_note(monkeypatch):
    # tensorflow 2.19.1 has macOS wheels for arm64 only.
    monkeypatch.setitem(METAL_TO_TENSORFLOW, (1, 3), [(2, 19)])
    answers = with_files(ANSWERS, "tensorflow-metal",
                         ("tensorflow_metal-1.3.0-cp312-cp312-macosx_12_0_x86_64.whl",
                          "2026-06-01T10:00:00Z"))
    found = discover(stacks_of(RECORDED_TABLE), answers, TODAY)
    assert found.all_rows() == []
    assert found.notes == ["tf2.19.1-metal1.3.0: no Python has a darwin wheel of every one of "
                           "tensorflow==2.19.1, tensorflow-metal==1.3.0; not a row"]


def test_a_patch_of_an_older_minor_released_later_is_new():
    def wheels(project):
        name = project.replace("-", "_")
        return [(f"{name}-2.19.2-cp3{m}-cp3{m}-manylinux_2_27_x86_64.whl", "2026-04-01T09:00:00Z")
                for m in (11, 12)]

    answers = with_files(ANSWERS, "tensorflow-cpu", *wheels("tensorflow-cpu"))
    answers = with_files(answers, "tensorflow", *wheels("tensorflow"))
    found = discover(stacks_of(RECORDED_TABLE), answers, TODAY)
    assert format_rows(found.all_rows()) == (
        '[[linux]]\n'
        'label = "tf2.19.2"\n'
        'date = 2026-04-01\n'
        'pins = ["tensorflow-cpu==2.19.2"]\n'
        'cuda = ["tensorflow[and-cuda]==2.19.2"]\n'
        'wheels = { x86_64 = ["3.11", "3.12"] }\n'
    )


def test_yanked_files_are_not_releases():
    shorter, _ = drop_last(RECORDED_TABLE, "linux", 1)
    answers = copy.deepcopy(ANSWERS)
    for entry in answers["tensorflow-cpu"]["files"]:
        if entry["filename"].startswith("tensorflow_cpu-2.21.0-"):
            entry["yanked"] = "broken wheels"
    found = discover(stacks_of(shorter), answers, TODAY)
    assert found.all_rows() == []


def test_without_upload_times_rows_go_by_version_and_are_dated_the_day_found():
    shorter, _ = drop_last(RECORDED_TABLE, "linux", 2)
    answers = copy.deepcopy(ANSWERS)
    for answer in answers.values():
        for entry in answer["files"]:
            del entry["upload-time"]
    found = discover(stacks_of(shorter), answers, TODAY)
    assert not found.dated
    assert [(s.label, s.date) for s in found.all_rows()] == [("tf2.20.0", TODAY),
                                                             ("tf2.21.0", TODAY)]


# --- the pieces: wheel tags, HTML pages, pip's configuration, inserting -------------------

def test_wheel_tags_map_to_the_tables_architectures():
    assert wheel_places("tensorflow_metal-0.5.0-cp39-cp39-macosx_11_0_universal2.whl") == {
        ("darwin", "arm64", "3.9"), ("darwin", "x86_64", "3.9")}
    assert wheel_places("tensorflow-2.19.1-cp310-cp310-manylinux_2_17_aarch64."
                        "manylinux2014_aarch64.whl") == {("linux", "arm64", "3.10")}
    assert wheel_places("tensorflow-2.19.1-cp313-cp313-win_amd64.whl") == set()
    assert wheel_places("tensorflow_macos-2.16.2-py3-none-any.whl") == set()


def test_an_html_index_page_gives_files_without_upload_times():
    page = ('<html><body><a href="../../f/tensorflow_cpu-2.21.0-cp312-cp312-manylinux_2_27_x86_64'
            '.whl#sha256=ab">tensorflow_cpu-2.21.0-cp312-cp312-manylinux_2_27_x86_64.whl</a>\n'
            '<a href="x" data-yanked="">tensorflow_cpu-2.20.0-cp312-cp312-manylinux_2_27_x86_64'
            '.whl</a></body></html>')
    releases = releases_in("tensorflow-cpu", answer_from_html(page))
    assert list(releases) == ["2.21.0"]
    assert releases["2.21.0"].first_upload is None
    assert releases["2.21.0"].pythons("linux", "x86_64") == {"3.12"}


def test_the_index_is_pips():
    pip_config = ("global.index-url='https://global.example/simple'\n"
                  "install.index-url='https://install.example/simple'\n")
    assert index_url_from({}, "") == DEFAULT_INDEX_URL
    assert index_url_from({}, pip_config) == "https://install.example/simple"
    assert index_url_from({}, pip_config.splitlines()[0]) == "https://global.example/simple"
    assert index_url_from({"PIP_INDEX_URL": "https://env.example/simple"},
                          pip_config) == "https://env.example/simple"


def test_a_directory_index_on_disk_is_read_as_pip_reads_it(tmp_path):
    wheel = "tensorflow_cpu-2.21.0-cp311-cp311-manylinux_2_27_x86_64.whl"
    (tmp_path / "tensorflow-cpu").mkdir()
    (tmp_path / "tensorflow-cpu" / "index.html").write_text(f'<a href="{wheel}">{wheel}</a>')
    answers = fetch_answers(tmp_path.as_uri(), ("tensorflow-cpu", "tensorflow"))
    assert answers == {"tensorflow-cpu": {"files": [{"filename": wheel, "yanked": False}]},
                       "tensorflow": None}


def test_rows_of_a_section_with_no_rows_yet_go_at_the_end():
    text = TABLE[:TABLE.index("[[linux]]")].rstrip("\n")  # no trailing newline either
    linux_rows = [s for s in stacks_of(TABLE) if s.os == "linux"][:1]
    grown = insert_rows(text, "linux", linux_rows)
    assert grown.startswith(text + "\n\n[[linux]]\n")
    assert stacks_of(grown)[-1] == linux_rows[0]


# --- the command, against a local index serving the recorded answers ----------------------

@contextmanager
def serving(answers, html=False):
    """An index on 127.0.0.1 answering as PyPI does: JSON when asked for it, else 404."""

    class Index(BaseHTTPRequestHandler):
        def do_GET(self):
            answer = answers.get(self.path.strip("/").split("/")[-1])
            if answer is None:
                self.send_error(404)
                return
            if html:
                links = "".join(f'<a href="#">{f["filename"]}</a>\n' for f in answer["files"])
                body, kind = f"<html><body>{links}</body></html>".encode(), "text/html"
            elif SIMPLE_JSON in self.headers.get("Accept", ""):
                body, kind = json.dumps(answer).encode(), SIMPLE_JSON
            else:
                self.send_error(406)
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Index)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/simple"
    finally:
        server.shutdown()
        server.server_close()


def discover_command(monkeypatch, capsys, index_url, table, *options):
    monkeypatch.setenv("PIP_INDEX_URL", index_url)
    code = main(["stacks", "discover", "--table", str(table), *options])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def shortened(tmp_path):
    """stacks.toml without its last 3 macOS and 2 Linux rows, and those rows."""
    text, macos_rows = drop_last(RECORDED_TABLE, "macos", 3)
    text, linux_rows = drop_last(text, "linux", 2)
    path = tmp_path / "stacks.toml"
    path.write_text(text)
    return path, macos_rows + "\n" + linux_rows


def test_command_prints_the_rows_ready_to_append(monkeypatch, capsys, shortened):
    path, dropped = shortened
    before = path.read_bytes()
    with serving(ANSWERS) as index_url:
        code, out, err = discover_command(monkeypatch, capsys, index_url, path)
    assert code == 0
    assert out == dropped
    assert "5 new row(s)" in err
    assert path.read_bytes() == before


def test_command_write_appends_them_leaving_the_rest_byte_identical(monkeypatch, capsys,
                                                                     shortened):
    path, _ = shortened
    before = path.read_text()
    with serving(ANSWERS) as index_url:
        code, _, err = discover_command(monkeypatch, capsys, index_url, path, "--write")
    assert code == 0, err
    found = discover(stacks_of(before), ANSWERS, TODAY)
    after = path.read_text()
    for section in ("macos", "linux"):
        before = insert_rows(before, section, found.rows[section])
    assert after == before
    same_rows(stacks_of(after), stacks_of(RECORDED_TABLE))


def test_command_says_no_new_releases(monkeypatch, capsys, tmp_path):
    path = tmp_path / "stacks.toml"
    path.write_text(RECORDED_TABLE)
    with serving(ANSWERS) as index_url:
        code, out, _ = discover_command(monkeypatch, capsys, index_url, path, "--write")
    assert code == 0
    assert out.startswith("no new releases")
    assert path.read_text() == RECORDED_TABLE


def test_command_notes_an_unpaired_metal_release_and_appends_nothing(monkeypatch, capsys,
                                                                     tmp_path):
    path = tmp_path / "stacks.toml"
    path.write_text(RECORDED_TABLE)
    answers = with_files(ANSWERS, "tensorflow-metal",
                         ("tensorflow_metal-1.3.0-cp312-cp312-macosx_12_0_arm64.whl",
                          "2026-06-01T10:00:00Z"))
    with serving(answers) as index_url:
        code, out, err = discover_command(monkeypatch, capsys, index_url, path, "--write")
    assert code == 0
    assert "note: tensorflow-metal 1.3.0 (first uploaded 2026-06-01) is not in Apple's " \
           "pairing table; add it to pairing.py first" in err
    assert "[[" not in out
    assert path.read_text() == RECORDED_TABLE


def test_command_notes_a_project_the_index_lacks(monkeypatch, capsys, shortened):
    path, _ = shortened
    answers = {p: a for p, a in ANSWERS.items() if p != "tensorflow-metal"}
    with serving(answers) as index_url:
        code, out, err = discover_command(monkeypatch, capsys, index_url, path)
    assert code == 0
    assert "note: the index has no project tensorflow-metal" in err
    assert "[[macos]]" not in out and "[[linux]]" in out


def test_command_unreachable_index_is_one_line_and_exit_2(monkeypatch, capsys, shortened):
    path, _ = shortened
    before = path.read_bytes()
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}/simple"
    code, out, err = discover_command(monkeypatch, capsys, closed, path, "--write")
    assert code == 2
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    assert errors[0].startswith(f"error: cannot reach the package index {closed}")
    assert out == ""
    assert path.read_bytes() == before


def test_command_write_refuses_a_table_that_would_not_validate(monkeypatch, capsys, tmp_path):
    # The last Linux row took the label the next release needs.
    text, _ = drop_last(RECORDED_TABLE, "linux", 1)
    text = text.replace('label = "tf2.20.0"', 'label = "tf2.21.0"')
    path = tmp_path / "stacks.toml"
    path.write_text(text)
    with serving(ANSWERS) as index_url:
        code, _, err = discover_command(monkeypatch, capsys, index_url, path, "--write")
    assert code == 2
    assert "does not validate, so it was left unchanged" in err
    assert "'tf2.21.0' is already used" in err
    assert path.read_text() == text


def test_command_on_an_index_without_upload_times_prints_but_does_not_write(monkeypatch, capsys,
                                                                            shortened):
    path, _ = shortened
    before = path.read_bytes()
    with serving(ANSWERS, html=True) as index_url:
        code, out, err = discover_command(monkeypatch, capsys, index_url, path)
        assert code == 0
        assert f"gives no upload times (PEP 700): the rows are dated {datetime.date.today()}" \
               in err
        assert 'label = "tf2.21.0"' in out
        code, _, err = discover_command(monkeypatch, capsys, index_url, path, "--write")
    assert code == 2
    assert "error: not written" in err
    assert path.read_bytes() == before


# --- the live index ---------------------------------------------------------------------------

@pytest.mark.slow
def test_live_pypi_rebuilds_the_last_rows():
    try:
        answers = fetch_answers(DEFAULT_INDEX_URL)
    except PackageIndexError as exc:
        pytest.skip(f"the live index is unreachable: {exc}")
    text, macos_rows = drop_last(TABLE, "macos", 2)
    text, linux_rows = drop_last(text, "linux", 2)
    found = discover(stacks_of(text), answers, TODAY)
    assert found.dated
    # Releases that appeared since come after the dropped rows, never before.
    assert format_rows(found.rows["macos"]).startswith(macos_rows)
    assert format_rows(found.rows["linux"]).startswith(linux_rows)
