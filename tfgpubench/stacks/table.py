"""stacks.toml: load the table of stacks and reject a bad row before anything runs.

Every message names the row (`stacks.toml [[linux]] #3 (tf2.14.1): ...`), so a
typo in a new release is found by its author, not by a half-finished run.
"""

import datetime
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..names import TABLE_FILE
from ..pairing import LAST_TENSORFLOW_MACOS, pairing_verdict, series
from .install_stack import PIN

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib

# Which distributions a section may pin, and in which role.
TENSORFLOWS = {"macos": ("tensorflow-macos", "tensorflow"), "linux": ("tensorflow-cpu",)}
PLUGIN = {"macos": "tensorflow-metal"}
CUDA_TENSORFLOW = "tensorflow"
ARCHES = ("arm64", "x86_64")
ROW_KEYS = {"macos": {"label", "date", "pins", "wheels"},
            "linux": {"label", "date", "pins", "cuda", "wheels"}}
REQUIRED_KEYS = {"label", "date", "pins", "wheels"}
# A label is a git tag and an argument to asv: keep it to a safe alphabet.
LABEL = re.compile(r"^[A-Za-z][A-Za-z0-9._+-]*$")
PYTHON = re.compile(r"^3\.\d+$")
# Releases are X.Y.Z, with an optional .postN (tensorflow-cpu 2.15.0.post1).
VERSION = re.compile(r"^\d+\.\d+\.\d+(\.post\d+)?$")


class TableError(ValueError):
    """A row of stacks.toml that cannot be used; the message names it."""


@dataclass(frozen=True)
class Stack:
    label: str
    os: str
    date: datetime.date
    pins: tuple
    wheels: dict = field(hash=False)
    cuda: tuple = ()
    where: str = field(default="", compare=False)

    def as_data(self):
        """The row as plain JSON data: what each generated commit holds."""
        data = {
            "label": self.label,
            "os": self.os,
            "date": self.date.isoformat(),
            "pins": list(self.pins),
            "wheels": {arch: list(py) for arch, py in sorted(self.wheels.items())},
        }
        if self.cuda:
            data["cuda"] = list(self.cuda)
        return data

    def tensorflow_version(self):
        name = TENSORFLOWS[self.os]
        return next(p.split("==")[1] for p in self.pins if p.split("==")[0] in name)


def load_table(path=TABLE_FILE):
    """The validated stacks of `path`, macOS rows then Linux rows, each oldest first."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            raw = tomllib.load(f)
    except FileNotFoundError:
        raise TableError(f"{path}: no table of stacks here") from None
    except tomllib.TOMLDecodeError as exc:
        raise TableError(f"{path}: not valid TOML: {exc}") from None
    return parse_table(raw, name=path.name)


def parse_table(raw, name=TABLE_FILE):
    unknown = sorted(set(raw) - set(TENSORFLOWS))
    if unknown:
        raise TableError(f"{name}: unknown section(s) {', '.join(unknown)}; expected macos, linux")
    stacks = []
    for os_name in TENSORFLOWS:
        rows = raw.get(os_name, [])
        if not isinstance(rows, list):
            raise TableError(f"{name}: [{os_name}] must be an array of tables: [[{os_name}]]")
        previous = None
        for number, row in enumerate(rows, start=1):
            where = f"{name} [[{os_name}]] #{number}"
            if isinstance(row, dict) and isinstance(row.get("label"), str):
                where += f" ({row['label']})"
            stack = parse_row(row, os_name, where)
            if previous is not None and stack.date < previous.date:
                raise TableError(
                    f"{where}: dated {stack.date}, before the row above it "
                    f"({previous.label}, {previous.date}); rows go oldest first"
                )
            previous = stack
            stacks.append(stack)
    _check_unique_labels(stacks)
    return stacks


def _check_unique_labels(stacks):
    seen = {}
    for stack in stacks:
        if stack.label in seen:
            raise TableError(f"{stack.where}: label {stack.label!r} is already used by "
                             f"{seen[stack.label]}")
        seen[stack.label] = stack.where


def parse_row(row, os_name, where):
    if not isinstance(row, dict):
        raise TableError(f"{where}: a row must be a table of label, date, pins, wheels")
    keys = set(row)
    if REQUIRED_KEYS - keys:
        raise TableError(f"{where}: missing {', '.join(sorted(REQUIRED_KEYS - keys))}")
    if keys - ROW_KEYS[os_name]:
        raise TableError(f"{where}: unknown key(s) {', '.join(sorted(keys - ROW_KEYS[os_name]))}")
    label = row["label"]
    if not isinstance(label, str) or not LABEL.match(label) or ".." in label:
        raise TableError(f"{where}: label {label!r} must start with a letter and use only "
                         "letters, digits and . _ + -")
    date = row["date"]
    if not isinstance(date, datetime.date) or isinstance(date, datetime.datetime):
        raise TableError(f"{where}: date {date!r} must be a TOML date such as 2024-06-28")
    pins = _parse_pins(row["pins"], where, "pins")
    _check_roles(pins, os_name, where)
    cuda = ()
    if "cuda" in row:
        cuda = _parse_pins(row["cuda"], where, "cuda")
        _check_cuda(pins, cuda, where)
    wheels = _parse_wheels(row["wheels"], where)
    return Stack(label=label, os=os_name, date=date, pins=tuple(pins), wheels=wheels,
                 cuda=tuple(cuda), where=where)


def _parse_pins(pins, where, key):
    if not isinstance(pins, list) or not pins:
        raise TableError(f"{where}: {key} must be a non-empty list of NAME==VERSION strings")
    names = set()
    for pin in pins:
        # Only NAME==VERSION: no pip options (--index-url, -e), URLs, paths,
        # extras or markers can reach pip through the table.
        if not isinstance(pin, str) or not PIN.match(pin):
            raise TableError(f"{where}: {key} entry {pin!r} is not NAME==VERSION "
                             "(pip options, URLs, paths, extras and markers are not allowed)")
        name, version = pin.split("==")
        if not VERSION.match(version):
            raise TableError(f"{where}: {pin!r}: version {version!r} is not X.Y.Z")
        if name in names:
            raise TableError(f"{where}: {key} pins {name} twice")
        names.add(name)
    return list(pins)


def _check_roles(pins, os_name, where):
    tensorflows = [p for p in pins if p.split("==")[0] in TENSORFLOWS[os_name]]
    plugins = [p for p in pins if p.split("==")[0] == PLUGIN.get(os_name)]
    unknown = [p for p in pins if p not in tensorflows and p not in plugins]
    if unknown:
        allowed = TENSORFLOWS[os_name] + ((PLUGIN[os_name],) if os_name in PLUGIN else ())
        raise TableError(f"{where}: unknown package in {unknown[0]!r}; a {os_name} stack pins "
                         f"{' and '.join(allowed)}")
    if len(tensorflows) != 1:
        raise TableError(f"{where}: pins {len(tensorflows)} TensorFlow distributions; "
                         f"expected one of {', '.join(TENSORFLOWS[os_name])}")
    if os_name in PLUGIN:
        if len(plugins) != 1:
            raise TableError(f"{where}: a {os_name} stack pins {PLUGIN[os_name]}")
        ok, message = pairing_verdict(tensorflows[0].split("==")[1], plugins[0].split("==")[1])
        if not ok:
            raise TableError(f"{where}: {message}")
        if tensorflows[0].startswith("tensorflow-macos==") and series(
            tensorflows[0].split("==")[1]
        ) > LAST_TENSORFLOW_MACOS:
            # Later tensorflow-macos releases are shims over `tensorflow`.
            raise TableError(f"{where}: from TensorFlow 2.13 pin tensorflow, not tensorflow-macos")


def _check_cuda(pins, cuda, where):
    if len(cuda) != 1 or not cuda[0].startswith(CUDA_TENSORFLOW + "=="):
        raise TableError(f"{where}: cuda must pin {CUDA_TENSORFLOW} alone")
    if cuda[0].split("==")[1] != pins[0].split("==")[1]:
        raise TableError(f"{where}: cuda pins {cuda[0]} but pins say {pins[0]}")


def _parse_wheels(wheels, where):
    if not isinstance(wheels, dict) or not wheels:
        raise TableError(f"{where}: wheels must map an architecture to its Pythons, "
                         'e.g. { arm64 = ["3.10", "3.11"] }')
    parsed = {}
    for arch, pythons in wheels.items():
        if arch not in ARCHES:
            raise TableError(f"{where}: wheels for unknown architecture {arch!r}; "
                             f"expected {' or '.join(ARCHES)}")
        if (not isinstance(pythons, list) or not pythons
                or not all(isinstance(p, str) and PYTHON.match(p) for p in pythons)):
            raise TableError(f"{where}: wheels.{arch} must list Pythons such as \"3.11\"")
        parsed[arch] = tuple(pythons)
    return parsed
