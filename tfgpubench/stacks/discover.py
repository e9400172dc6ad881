"""New TensorFlow / tensorflow-metal releases on the package index, as rows of stacks.toml.

`python -m tfgpubench stacks discover` asks the index pip is configured with
(PEP 691's JSON simple API; PEP 700's upload times date the rows) for every
release of tensorflow, tensorflow-cpu, tensorflow-macos and tensorflow-metal,
makes each into the row the table's own rules give, and keeps the rows newer
than the last row of their section:

- macOS: one row per tensorflow-metal release and TensorFlow minor Apple pairs
  it with (pairing.py), pinning the newest patch of that minor with macOS wheels
  (tensorflow-macos up to 2.12, tensorflow from 2.13). A tensorflow-metal series
  Apple's table does not list yet is a note, never a row.
- Linux: one row per TensorFlow minor, its newest patch that tensorflow-cpu
  (`pins`) and tensorflow (`cuda`) both have Linux wheels for.
- wheels: per architecture, the Pythons for which every pin (cuda too) has a wheel.
- date: the day (UTC) the newest pin was first uploaded.

"Newer than the last row" is by date: a row first uploaded on or after the
last row's day and not already in the table (a patch of an older minor released
after a newer minor counts). An index that gives no upload times (a mirror
without PEP 700, or HTML-only) falls back to version order, and the rows are
dated the day they were found, with a warning; they are not written then.

Everything is a pure function of the index's answers except the edge at the
bottom, which reads pip's configuration and asks the index.
"""

import base64
import datetime
import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from collections import defaultdict
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Optional
from urllib.parse import urlsplit, urlunsplit

from ..pairing import (
    METAL_TO_TENSORFLOW,
    macos_tensorflow_package,
    series,
    series_name,
)
from .table import (
    ARCHES,
    CUDA_TENSORFLOW,
    PLUGIN,
    SECTIONS,
    TENSORFLOWS,
    VERSION,
    TableError,
    load_table,
    parse_row,
)

# What the sections pin, and so what the index is asked about.
LINUX_TENSORFLOW = TENSORFLOWS["linux"][0]
METAL = PLUGIN["macos"]
PROJECTS = tuple(sorted({*TENSORFLOWS["macos"], LINUX_TENSORFLOW, CUDA_TENSORFLOW, METAL}))
DEFAULT_INDEX_URL = "https://pypi.org/simple"
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
SIMPLE_HTML = "application/vnd.pypi.simple.v1+html"
# JSON first; an index that only speaks PEP 503 HTML still answers (without upload times).
ACCEPT = f"{SIMPLE_JSON}, {SIMPLE_HTML};q=0.2, text/html;q=0.1"

# The `cuda` pin of a Linux row: from TensorFlow 2.14, `tensorflow[and-cuda]`, which
# also installs NVIDIA's CUDA and cuDNN wheels (table.py requires it from there).
AND_CUDA_FROM = (2, 14)

# Wheel tags -> (system, architecture as the table names it).
CPYTHON = re.compile(r"^cp3(\d+)$")
MACOS_PLATFORM = re.compile(r"^macosx_\d+_\d+_(\w+)$")
MACOS_ARCHES = {"arm64": ("arm64",), "x86_64": ("x86_64",), "universal2": ("arm64", "x86_64")}
LINUX_PLATFORM = re.compile(r"^manylinux\w*_(x86_64|aarch64)$")
LINUX_ARCHES = {"x86_64": "x86_64", "aarch64": "arm64"}
SYSTEM = {"macos": "darwin", "linux": "linux"}


class PackageIndexError(RuntimeError):
    """The package index could not be asked or answered nonsense; the message says which."""


# --- the index's answers as releases ---------------------------------------------------

@dataclass(frozen=True)
class Release:
    """One final release of a project: its first upload day and where its wheels install."""

    project: str
    version: str
    first_upload: Optional[datetime.date]  # None when the index gives no upload times
    wheels: frozenset  # {(system, arch, python)}, e.g. ("darwin", "arm64", "3.11")

    @property
    def pin(self):
        return f"{self.project}=={self.version}"

    def pythons(self, system, arch):
        return {python for s, a, python in self.wheels if (s, a) == (system, arch)}

    def has_wheels_for(self, system):
        return any(s == system for s, _, _ in self.wheels)


def version_key(version):
    """Order of X.Y.Z(.postN) versions: 2.15.0 < 2.15.0.post1 < 2.15.1."""
    return tuple(int(n) for n in re.findall(r"\d+", version))


def python_key(python):
    return tuple(int(n) for n in python.split("."))


def file_version(filename):
    """The version a distribution file holds, or None for a file that is no distribution."""
    if filename.endswith(".whl"):
        parts = filename.split("-")
        return parts[1] if len(parts) in (5, 6) else None
    for suffix in (".tar.gz", ".zip"):
        if filename.endswith(suffix) and "-" in filename:
            return filename[: -len(suffix)].rsplit("-", 1)[1]
    return None


def wheel_places(filename):
    """{(system, arch, python)} a file installs on: CPython wheels for macOS or manylinux."""
    if not filename.endswith(".whl") or file_version(filename) is None:
        return set()
    *_, python_tags, _abi, platform_tags = filename[:-4].split("-")
    pythons = {f"3.{m.group(1)}" for tag in python_tags.split(".") if (m := CPYTHON.match(tag))}
    places = set()
    for platform in platform_tags.split("."):
        if m := MACOS_PLATFORM.match(platform):
            places.update(("darwin", arch) for arch in MACOS_ARCHES.get(m.group(1), ()))
        elif m := LINUX_PLATFORM.match(platform):
            places.add(("linux", LINUX_ARCHES[m.group(1)]))
    return {(system, arch, python) for system, arch in places for python in pythons}


def upload_day(value):
    """The UTC day of a PEP 700 `upload-time` (2023-09-26T15:13:41.123456Z), or None."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.date.fromisoformat(value[:10])
    except ValueError:
        return None


def releases_in(project, answer):
    """{version: Release} of the final releases in one project's simple-API answer.

    Pre-releases (rc, a, b, dev) and any other version the table cannot pin are
    left out, and so are yanked files.
    """
    files_of = defaultdict(list)
    for entry in answer.get("files", []):
        if entry.get("yanked"):
            continue
        version = file_version(entry.get("filename", ""))
        if version is not None and VERSION.match(version):
            files_of[version].append(entry)
    releases = {}
    for version, files in files_of.items():
        days = [upload_day(entry.get("upload-time")) for entry in files]
        releases[version] = Release(
            project=project,
            version=version,
            first_upload=None if None in days else min(days),
            wheels=frozenset().union(*(wheel_places(entry["filename"]) for entry in files)),
        )
    return releases


def newest_patch(releases, minor, usable):
    """The newest release of `minor` ((major, minor)) for which usable(release) holds."""
    candidates = [r for r in releases.values() if series(r.version) == minor and usable(r)]
    return max(candidates, key=lambda r: version_key(r.version), default=None)


# --- releases as rows ----------------------------------------------------------------------

@dataclass(frozen=True)
class Found:
    """A release on the index as the table's rules make it: a row, or a note saying why not."""

    section: str
    label: str
    date: Optional[datetime.date]  # first upload of the newest pin; None if the index has none
    pins: tuple
    cuda: tuple = ()
    wheels: dict = field(default_factory=dict, hash=False)  # arch -> [Pythons]
    note: str = ""  # set when the release cannot be a row


def cuda_pin(version):
    if AND_CUDA_FROM is not None and series(version) >= AND_CUDA_FROM:
        return f"{CUDA_TENSORFLOW}[and-cuda]=={version}"
    return f"{CUDA_TENSORFLOW}=={version}"


def _row(section, label, pinned, cuda_releases=(), cuda=(), required=()):
    """A Found row over the releases it pins, or a note if no Python has every wheel.

    required: releases a pinned one installs with it, which have wheels only where
    they say (their Pythons count, their dates and pins do not)."""
    every = (*pinned, *cuda_releases)
    system = SYSTEM[section]
    wheels = {}
    for arch in ARCHES:
        common = set.intersection(*(release.pythons(system, arch)
                                    for release in (*every, *required)))
        if common:
            wheels[arch] = sorted(common, key=python_key)
    days = [release.first_upload for release in every]
    date = None if None in days else max(days)
    note = "" if wheels else (f"{label}: no Python has a {system} wheel of every one of "
                              f"{', '.join(r.pin for r in every)}; not a row")
    return Found(section, label, date, tuple(r.pin for r in pinned), tuple(cuda), wheels, note)


def macos_found(releases_of):
    """Apple's pairs: every tensorflow-metal release with each TensorFlow minor Apple lists."""
    found = []
    for metal in releases_of.get(METAL, {}).values():
        minors = METAL_TO_TENSORFLOW.get(series(metal.version))
        if minors is None:
            found.append(Found("macos", f"metal{metal.version}", metal.first_upload, (metal.pin,),
                               note=f"tensorflow-metal {metal.version} (first uploaded "
                                    f"{metal.first_upload or 'on an unknown day'}) is not in "
                                    "Apple's pairing table; add it to pairing.py first"))
            continue
        for minor in minors:
            package = macos_tensorflow_package(minor)
            tensorflow = newest_patch(releases_of.get(package, {}), minor,
                                      lambda r: r.has_wheels_for("darwin"))
            label = f"tf{series_name(minor)}-metal{metal.version}"
            if tensorflow is None:
                found.append(Found("macos", label, metal.first_upload, (metal.pin,),
                                   note=f"Apple pairs tensorflow-metal {metal.version} with "
                                        f"TensorFlow {series_name(minor)}, but the index "
                                        f"has no {package} release of it with macOS wheels"))
                continue
            found.append(_row("macos", f"tf{tensorflow.version}-metal{metal.version}",
                              (tensorflow, metal),
                              required=shim_target(releases_of, tensorflow)))
    return found


def shim_target(releases_of, tensorflow):
    """(The tensorflow-macos release `tensorflow` installs on an Apple-silicon Mac,) or ().

    From 2.13 to 2.16 the arm64 macOS wheel of `tensorflow` is a shim that requires
    tensorflow-macos of the same version, whose wheels cover fewer Pythons (2.13.1:
    no 3.8); on other architectures `tensorflow` stands alone."""
    if tensorflow.project != "tensorflow":
        return ()
    macos = releases_of.get("tensorflow-macos", {}).get(tensorflow.version)
    if macos is None:
        return ()
    where = frozenset(w for w in tensorflow.wheels if w[:2] != ("darwin", "arm64")) | frozenset(
        w for w in macos.wheels if w[:2] == ("darwin", "arm64"))
    return (Release(macos.project, macos.version, macos.first_upload, where),)


def linux_found(releases_of):
    """The newest patch of each TensorFlow minor: tensorflow-cpu, and tensorflow for CUDA."""
    cpu = releases_of.get(LINUX_TENSORFLOW, {})
    cuda = releases_of.get(CUDA_TENSORFLOW, {})
    found = []
    for minor in sorted({series(version) for version in cpu}):
        newest = newest_patch(cpu, minor, lambda r: r.has_wheels_for("linux")
                              and r.version in cuda and cuda[r.version].has_wheels_for("linux"))
        if newest is None:
            newest_cpu = newest_patch(cpu, minor, lambda r: True)
            found.append(Found("linux", f"tf{newest_cpu.version}", newest_cpu.first_upload,
                               (newest_cpu.pin,),
                               note=f"TensorFlow {series_name(minor)}: no release that "
                                    f"{LINUX_TENSORFLOW} and {CUDA_TENSORFLOW} both have Linux "
                                    "wheels for; not a row"))
            continue
        found.append(_row("linux", f"tf{newest.version}", (newest,),
                          cuda_releases=(cuda[newest.version],),
                          cuda=(cuda_pin(newest.version),)))
    return found


def order_of(section, pins):
    """A row's version order in its section: (tensorflow-metal, TensorFlow) or (TensorFlow,)."""
    versions = dict(pin.split("==") for pin in pins)
    tensorflow = next((version_key(v) for n, v in versions.items() if n in TENSORFLOWS[section]),
                      ())
    if section in PLUGIN:
        return version_key(versions.get(PLUGIN[section], "0")), tensorflow
    return (tensorflow,)


def newer_than_table(found, table_rows, dated, today):
    """The found rows of one section not in the table and newer than its last row, oldest first.

    dated: by first-upload day (on or after the last row's); else by version order.
    """
    known = {stack.pins for stack in table_rows}
    new = [f for f in found if f.pins not in known]
    if table_rows:
        last = table_rows[-1]
        if dated:
            new = [f for f in new if f.date >= last.date]
        else:
            new = [f for f in new if order_of(last.os, f.pins) > order_of(last.os, last.pins)]
    return sorted(new, key=lambda f: (f.date or today, order_of(f.section, f.pins)))


@dataclass
class Discovery:
    rows: dict  # section -> [Stack], oldest first
    notes: list
    dated: bool  # False: the index gave no upload times; rows are dated the day found

    def all_rows(self):
        return [stack for section in TENSORFLOWS for stack in self.rows[section]]


def discover(stacks, answers, today):
    """The rows (and notes) of releases newer than each section's last row.

    stacks: the table (load_table); answers: {project: simple-API answer, or None
    where the index has no such project}; today: the date rows get when the index
    gives no upload times.
    """
    notes = [f"the index has no project {project}" for project in PROJECTS
             if answers.get(project) is None]
    releases_of = {project: releases_in(project, answer)
                   for project, answer in answers.items() if answer is not None}
    found = macos_found(releases_of) + linux_found(releases_of)
    dated = all(f.date is not None for f in found)
    rows = {section: [] for section in TENSORFLOWS}
    for section in TENSORFLOWS:
        table_rows = [stack for stack in stacks if stack.os == section]
        for f in newer_than_table([f for f in found if f.section == section], table_rows,
                                  dated, today):
            if f.note:
                notes.append(f.note)
                continue
            raw = {"label": f.label, "date": f.date or today, "pins": list(f.pins),
                   "wheels": f.wheels}
            if f.cuda:
                raw["cuda"] = list(f.cuda)
            try:
                rows[section].append(parse_row(raw, section, f"discovered {f.label}",
                                               latest=today + datetime.timedelta(days=1)))
            except TableError as exc:  # the validator rejects what the rules built
                notes.append(str(exc))
    return Discovery(rows, notes, dated)


# --- rows as TOML ---------------------------------------------------------------------------

def _toml_list(items):
    return "[" + ", ".join(json.dumps(item) for item in items) + "]"


def format_row(stack):
    """A row of stacks.toml exactly as the table writes them."""
    lines = [f"[[{stack.os}]]",
             f"label = {json.dumps(stack.label)}",
             f"date = {stack.date.isoformat()}",
             f"pins = {_toml_list(stack.pins)}"]
    if stack.cuda:
        lines.append(f"cuda = {_toml_list(stack.cuda)}")
    wheels = ", ".join(f"{arch} = {_toml_list(stack.wheels[arch])}"
                       for arch in ARCHES if arch in stack.wheels)
    lines.append(f"wheels = {{ {wheels} }}")
    return "\n".join(lines) + "\n"


def format_rows(stacks):
    """Rows ready to append, a blank line between them as in the table."""
    return "\n".join(format_row(stack) for stack in stacks)


def insert_rows(text, section, stacks):
    """`text` with the rows appended after the last row of `section`, the rest unchanged.

    A section's last row ends at its last line that is neither blank nor a
    comment before the next table header; with no row of the section yet, the
    rows go at the end of the file.
    """
    if not stacks:
        return text
    headers = list(re.finditer(rf"^\[\[{section}\]\][ \t]*(#.*)?$", text, re.M))
    if headers:
        following = re.compile(r"^\[", re.M).search(text, headers[-1].end())
        region_end = following.start() if following else len(text)
        end = headers[-1].end()
        for line in re.finditer(r"^.*$\n?", text[:region_end], re.M):
            stripped = line.group().strip()
            if line.start() >= headers[-1].start() and stripped and not stripped.startswith("#"):
                end = line.end()
    else:
        end = len(text)
    before = text[:end] if text[:end].endswith("\n") or not end else text[:end] + "\n"
    return before + "".join("\n" + format_row(stack) for stack in stacks) + text[end:]


# --- the edge: pip's configuration, the index, the file -------------------------------------

def index_url_from(environ, pip_config):
    """The index pip installs from: PIP_INDEX_URL, then `pip config list`'s
    install.index-url or global.index-url, then PyPI."""
    if environ.get("PIP_INDEX_URL"):
        return environ["PIP_INDEX_URL"]
    settings = dict(re.findall(r"^([^=\s]+)='(.*)'$", pip_config, re.M))
    for key in (":env:.index-url", "install.index-url", "global.index-url"):
        if settings.get(key):
            return settings[key]
    return DEFAULT_INDEX_URL


def configured_index_url(environ=os.environ):
    """index_url_from this environment and `python -m pip config list` (empty if pip fails)."""
    if environ.get("PIP_INDEX_URL"):
        return environ["PIP_INDEX_URL"]
    try:
        listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"],
                                capture_output=True, text=True, timeout=60, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        listed = ""
    return index_url_from(environ, listed)


def redact(url):
    """`url` without a password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{host}"))


class _Anchors(HTMLParser):
    """The files of a PEP 503 project page: each anchor's text, and whether it is yanked."""

    def __init__(self):
        super().__init__()
        self.files = []
        self._yanked = None

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self._yanked = "data-yanked" in dict(attrs)
            self.files.append({"filename": "", "yanked": self._yanked})

    def handle_data(self, data):
        if self._yanked is not None:
            self.files[-1]["filename"] += data.strip()

    def handle_endtag(self, tag):
        if tag == "a":
            self._yanked = None


def answer_from_html(page):
    """A PEP 503 HTML page as a simple-API answer (files without upload times)."""
    anchors = _Anchors()
    anchors.feed(page)
    return {"files": anchors.files}


def fetch_answer(index_url, project, timeout=60):
    """One project's simple-API answer from the index, or None if it has no such project."""
    url = f"{index_url.rstrip('/')}/{project}/"
    parts = urlsplit(url)
    headers = {"Accept": ACCEPT, "User-Agent": "tfgpubench-discover"}
    if parts.username is not None:  # user:password@ in the URL, as pip allows
        login = f"{parts.username}:{parts.password or ''}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(login).decode()
        url = urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))
    if parts.scheme == "file":  # a directory index on disk, as pip reads one
        url += "index.html"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers),
                                    timeout=timeout) as response:
            content_type = response.headers.get_content_type()
            body = response.read()
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise PackageIndexError(f"the package index {redact(index_url)} answered HTTP "
                                f"{exc.code} ({exc.reason}) for {project}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        if parts.scheme == "file" and isinstance(reason, FileNotFoundError):
            return None
        raise PackageIndexError(f"cannot reach the package index {redact(index_url)} "
                                f"({project}): {reason}") from None
    if content_type == SIMPLE_JSON:
        try:
            answer = json.loads(body)
        except ValueError as exc:
            raise PackageIndexError(f"the package index {redact(index_url)} sent bad JSON for "
                                    f"{project}: {exc}") from None
        api = str(answer.get("meta", {}).get("api-version", "1.0"))
        if not api.startswith("1."):
            raise PackageIndexError(f"the package index {redact(index_url)} speaks simple API "
                                    f"{api}; this reads version 1")
        return answer
    if content_type in ("text/html", SIMPLE_HTML):
        return answer_from_html(body.decode("utf-8", "replace"))
    raise PackageIndexError(f"the package index {redact(index_url)} answered {content_type} "
                            f"for {project}, not a simple-API page")


def fetch_answers(index_url, projects=PROJECTS):
    return {project: fetch_answer(index_url, project) for project in projects}


def append_to_table(path, discovery):
    """Append the discovered rows at the end of their sections of the table at `path`.

    The rest of the file stays byte-identical. The whole table is validated
    afterwards (load_table) and must read as the old rows plus the new ones;
    if not, the file is restored and TableError says why.
    """
    path = Path(path)
    original = path.read_bytes()
    before = load_table(path)
    text = original.decode("utf-8")
    for section in TENSORFLOWS:
        text = insert_rows(text, section, discovery.rows[section])
    # Every section in the table's order; the comparators' has no discovered rows.
    expected = [stack for section in SECTIONS for stack in
                [s for s in before if s.os == section] + discovery.rows.get(section, [])]
    path.write_bytes(text.encode("utf-8"))
    try:
        after = load_table(path)
        if after != expected:
            raise TableError(f"{path}: the new rows did not land at the end of their sections")
    except TableError as exc:
        path.write_bytes(original)
        raise TableError(f"{path} with the new rows does not validate, so it was left "
                         f"unchanged: {exc}") from None
    except BaseException:
        path.write_bytes(original)
        raise
