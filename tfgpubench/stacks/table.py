"""stacks.toml: load the table of stacks and reject a bad row before anything runs.

Three sections, each a chain of its own in .stacks: `macos` and `linux` pin a
TensorFlow (and Apple's plugin); `comparators` pins PyTorch, JAX and numpy, the
frameworks benchmarks/comparators.py times beside TensorFlow, without
TensorFlow, so their versions have a history on the graphs too.

Every message names the row (`stacks.toml [[linux]] #3 (tf2.14.1): ...`), so a
typo in a new release is found by its author, not by a half-finished run.
"""

import datetime
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..names import COMPARATORS_SECTION, OWN_LABEL_PREFIX, TABLE_FILE
from ..pairing import LAST_TENSORFLOW_MACOS, pairing_verdict, series
from .install_stack import split_pin

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib

# Which distributions a section may pin, and in which role.
TENSORFLOWS = {"macos": ("tensorflow-macos", "tensorflow"), "linux": ("tensorflow-cpu",)}
PLUGIN = {"macos": "tensorflow-metal"}
CUDA_TENSORFLOW = "tensorflow"
# pip's `tensorflow` bundles no CUDA: from TensorFlow 2.14 the extra `and-cuda`
# installs NVIDIA's CUDA and cuDNN wheels with it; 2.12 and 2.13 use the
# system's CUDA 11.8 and cuDNN 8.6 (tfgpubench/stacks/requirements.py). The
# only extra a row may use, and a cuda pin from 2.14 must.
CUDA_EXTRA = "and-cuda"
CUDA_EXTRA_FROM = (2, 14)
ARCHES = ("arm64", "x86_64")
# The comparators' section: the distributions a row may pin, the extras its cuda pins
# may use (JAX's CUDA plugin), and the platforms its wheels name. PyTorch, JAX and numpy
# ship wheels for different OS and architecture pairs (no x86_64 macOS wheels of
# recent PyTorch or jaxlib), so a comparator row's wheels name both: linux-x86_64.
COMPARATORS = COMPARATORS_SECTION
COMPARATOR_PACKAGES = ("torch", "jax", "jaxlib", "numpy")
COMPARATOR_CUDA_EXTRAS = {"jax": ("cuda12", "cuda13")}
# Released together, each jax pinning its own jaxlib: a row pins both or neither, equal.
SAME_VERSION = ("jax", "jaxlib")
PLATFORMS = tuple(f"{os_name}-{arch}" for os_name in ("linux", "macos") for arch in ARCHES)
SECTIONS = (*TENSORFLOWS, COMPARATORS)
ROW_KEYS = {"macos": {"label", "date", "pins", "wheels"},
            "linux": {"label", "date", "pins", "cuda", "wheels", "cuda_wheels"},
            COMPARATORS: {"label", "date", "pins", "cuda", "wheels", "cuda_wheels"}}
REQUIRED_KEYS = {"label", "date", "pins", "wheels"}
# A label is a git tag and an argument to asv: keep it to a safe alphabet, and
# away from what git refuses (a trailing '.' or '.lock', '..') or reads as
# something else: a branch or HEAD, asv's range words, a commit hash.
LABEL = re.compile(r"^[A-Za-z][A-Za-z0-9._+-]{0,63}$")
RESERVED_LABELS = {"head", "fetch_head", "orig_head", "merge_head", "main", "master",
                   "all", "new", "existing", "tags"}
HEX_LABEL = re.compile(r"^[0-9a-fA-F]{4,}$")
# TensorFlow's first release on PyPI: a row dated before it is a typo.
FIRST_RELEASE = datetime.date(2015, 11, 9)
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
    cuda_wheels: dict = field(default=None, hash=False)
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
        if self.cuda_wheels is not None:
            data["cuda_wheels"] = {arch: list(py) for arch, py in sorted(self.cuda_wheels.items())}
        return data

    @property
    def is_comparators(self):
        """A row of the comparators' section: PyTorch, JAX and numpy, no TensorFlow."""
        return self.os == COMPARATORS

    def tensorflow_version(self):
        return next(split_pin(p)[2] for p in self.pins if split_pin(p)[0] in TENSORFLOWS[self.os])


def load_table(path=TABLE_FILE):
    """The validated stacks of `path`: macOS rows, Linux rows, then comparator rows, each
    section oldest first."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            raw = tomllib.load(f)
    except FileNotFoundError:
        raise TableError(f"{path}: no table of stacks here") from None
    except tomllib.TOMLDecodeError as exc:
        raise TableError(f"{path.name}: not valid TOML: {exc}") from None
    return parse_table(raw, name=path.name)


def parse_table(raw, name=TABLE_FILE, today=None):
    """The validated stacks of a parsed table; TableError naming the first bad row.

    today: the latest date a row may have (default: today, a day ahead for time zones).
    """
    latest = today or datetime.date.today() + datetime.timedelta(days=1)
    unknown = sorted(set(raw) - set(SECTIONS))
    if unknown:
        raise TableError(f"{name}: unknown section(s) {', '.join(unknown)}; expected "
                         f"{', '.join(SECTIONS)}")
    stacks = []
    for os_name in SECTIONS:
        if os_name == COMPARATORS and os_name not in raw:
            # Optional: a table of TensorFlow stacks alone measures no comparators.
            continue
        rows = raw.get(os_name, [])
        if not isinstance(rows, list):
            raise TableError(f"{name}: [{os_name}] must be an array of tables: [[{os_name}]]")
        if not rows:
            # asv.conf.json follows one branch per section; a branch needs a commit.
            raise TableError(f"{name}: [[{os_name}]] has no rows; each section needs at least "
                             "one (asv follows a branch per section)")
        previous = None
        for number, row in enumerate(rows, start=1):
            where = f"{name} [[{os_name}]] #{number}"
            if isinstance(row, dict) and isinstance(row.get("label"), str):
                where += f" ({row['label']})"
            stack = parse_row(row, os_name, where, latest)
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
    # Case-insensitively: on macOS's file system tags tf2.x and TF2.X are one file.
    seen = {}
    for stack in stacks:
        key = stack.label.lower()
        if key in seen:
            raise TableError(f"{stack.where}: label {stack.label!r} is already used by "
                             f"{seen[key]}")
        seen[key] = stack.where


def parse_row(row, os_name, where, latest):
    if not isinstance(row, dict):
        raise TableError(f"{where}: a row must be a table of label, date, pins, wheels")
    keys = set(row)
    if REQUIRED_KEYS - keys:
        raise TableError(f"{where}: missing {', '.join(sorted(REQUIRED_KEYS - keys))}")
    if keys - ROW_KEYS[os_name]:
        raise TableError(f"{where}: unknown key(s) {', '.join(sorted(keys - ROW_KEYS[os_name]))}")
    if os_name == COMPARATORS:
        return parse_comparator_row(row, where, latest)
    label = _parse_label(row["label"], where)
    date = _parse_date(row["date"], where, latest)
    pins = _parse_pins(row["pins"], where, "pins")
    _check_roles(pins, os_name, where)
    cuda = ()
    if "cuda" in row:
        cuda = _parse_pins(row["cuda"], where, "cuda")
        _check_cuda(pins, cuda, where)
    wheels = _parse_wheels(row["wheels"], where)
    cuda_wheels = None
    if "cuda_wheels" in row:
        if not cuda:
            raise TableError(f"{where}: cuda_wheels without cuda pins")
        cuda_wheels = _parse_wheels(row["cuda_wheels"], where, "cuda_wheels")
        for arch, pythons in cuda_wheels.items():
            if not set(pythons) <= set(wheels.get(arch, ())):
                raise TableError(f"{where}: cuda_wheels.{arch} lists a Python wheels.{arch} "
                                 "does not: the CUDA build resolves for fewer Pythons, not more")
    return Stack(label=label, os=os_name, date=date, pins=tuple(pins), wheels=wheels,
                 cuda=tuple(cuda), cuda_wheels=cuda_wheels, where=where)


def parse_comparator_row(row, where, latest):
    """A row of [[comparators]]: PyTorch, JAX and numpy pins, no TensorFlow."""
    label = _parse_label(row["label"], where)
    date = _parse_date(row["date"], where, latest, "a release")
    pins = _parse_pins(row["pins"], where, "pins", COMPARATOR_PACKAGES, COMPARATOR_CUDA_EXTRAS)
    versions = {pin_name(p): split_pin(p)[2] for p in pins}
    present = [n for n in SAME_VERSION if n in versions]
    if present and (len(present) != len(SAME_VERSION)
                    or len({versions[n] for n in SAME_VERSION}) != 1):
        raise TableError(f"{where}: pin {' and '.join(SAME_VERSION)} together, at the same "
                         "version (each jax release requires its own jaxlib)")
    cuda = ()
    if "cuda" in row:
        cuda = _parse_pins(row["cuda"], where, "cuda", COMPARATOR_PACKAGES,
                           COMPARATOR_CUDA_EXTRAS)
        if {pin_name(p): split_pin(p)[2] for p in cuda} != versions:
            raise TableError(f"{where}: cuda must pin the same packages and versions as pins "
                             "(it only adds a CUDA extra)")
    wheels = _parse_wheels(row["wheels"], where, keys=PLATFORMS)
    cuda_wheels = None
    if "cuda_wheels" in row:
        if not cuda:
            raise TableError(f"{where}: cuda_wheels without cuda pins")
        cuda_wheels = _parse_wheels(row["cuda_wheels"], where, "cuda_wheels", keys=PLATFORMS)
    if cuda and not any(p.startswith("linux-") for p in (cuda_wheels or wheels)):
        raise TableError(f"{where}: cuda pins, but no Linux wheels: CUDA builds are for Linux")
    return Stack(label=label, os=COMPARATORS, date=date, pins=tuple(pins), wheels=wheels,
                 cuda=tuple(cuda), cuda_wheels=cuda_wheels, where=where)


def _parse_date(date, where, latest, what="a TensorFlow release"):
    if not isinstance(date, datetime.date) or isinstance(date, datetime.datetime):
        raise TableError(f"{where}: date {date!r} must be a TOML date such as 2024-06-28")
    if not FIRST_RELEASE <= date <= latest:
        raise TableError(f"{where}: date {date} is not a day {what} can have "
                         f"been uploaded ({FIRST_RELEASE} to today)")
    return date


def _parse_label(label, where):
    if not isinstance(label, str) or not LABEL.match(label):
        raise TableError(f"{where}: label {label!r} must start with a letter and use only "
                         "letters, digits and . _ + - (at most 64)")
    refused = None
    if ".." in label or label.endswith((".", ".lock")):
        refused = "git refuses it as a tag ('..', or a trailing '.' or '.lock')"
    elif label.lower() in RESERVED_LABELS or label.lower().endswith("_head"):
        refused = "git or asv reads it as a branch, HEAD or a range, not this tag"
    elif HEX_LABEL.match(label):
        refused = "git reads it as a commit hash, not this tag"
    elif label.lower() in SECTIONS:
        refused = "it is the name of a section's branch"
    elif label.startswith(OWN_LABEL_PREFIX):
        refused = f"{OWN_LABEL_PREFIX}... labels are run --existing's own stacks"
    if refused:
        raise TableError(f"{where}: label {label!r} cannot be used: {refused}")
    return label


def pin_name(pin):
    return split_pin(pin)[0]


def _parse_pins(pins, where, key, allowed=None, cuda_extras=None):
    """The pins of a row's `key`; allowed: the only distributions it may pin (None: any,
    roles checked after); cuda_extras: {name: extras} its cuda pins may use (default:
    tensorflow[and-cuda])."""
    if cuda_extras is None:
        cuda_extras = {CUDA_TENSORFLOW: (CUDA_EXTRA,)}
    if not isinstance(pins, list) or not pins:
        raise TableError(f"{where}: {key} must be a non-empty list of NAME==VERSION strings")
    names = set()
    for pin in pins:
        # Only NAME==VERSION (and the one extra _check_cuda allows): no pip
        # options (--index-url, -e), URLs, paths or markers reach pip.
        try:
            name, extra, version = split_pin(pin)
        except ValueError:
            raise TableError(f"{where}: {key} entry {pin!r} is not NAME==VERSION "
                             "(pip options, URLs, paths and markers are not allowed)") from None
        if allowed is not None and name not in allowed:
            raise TableError(f"{where}: unknown package in {pin!r}; a comparator row pins "
                             f"{', '.join(allowed)}")
        if extra and (key != "cuda" or extra not in cuda_extras.get(name, ())):
            usable = [f"{n}[{e}]" for n, extras in cuda_extras.items() for e in extras]
            which = ("extra a row may use is" if len(usable) == 1 else
                     "extras a row may use are")
            raise TableError(f"{where}: {key} entry {pin!r}: the only {which} "
                             f"{', '.join(usable)}, in cuda")
        if not VERSION.match(version):
            raise TableError(f"{where}: {pin!r}: version {version!r} is not X.Y.Z")
        if name in names:
            raise TableError(f"{where}: {key} pins {name} twice")
        names.add(name)
    return list(pins)


def _check_roles(pins, os_name, where):
    tensorflows = [p for p in pins if pin_name(p) in TENSORFLOWS[os_name]]
    plugins = [p for p in pins if pin_name(p) == PLUGIN.get(os_name)]
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
    if len(cuda) != 1 or pin_name(cuda[0]) != CUDA_TENSORFLOW:
        raise TableError(f"{where}: cuda must pin {CUDA_TENSORFLOW} alone")
    _, extra, version = split_pin(cuda[0])
    if version != split_pin(pins[0])[2]:
        raise TableError(f"{where}: cuda pins {cuda[0]} but pins say {pins[0]}")
    needs_extra = series(version) >= CUDA_EXTRA_FROM
    if needs_extra and not extra:
        raise TableError(f"{where}: cuda pins {cuda[0]}, which installs no CUDA libraries: "
                         f"from TensorFlow 2.14 pin {CUDA_TENSORFLOW}[{CUDA_EXTRA}]=={version}")
    if extra and not needs_extra:
        raise TableError(f"{where}: cuda pins {cuda[0]}, but {CUDA_TENSORFLOW} {version} has no "
                         f"{CUDA_EXTRA} extra (it uses the system's CUDA): pin "
                         f"{CUDA_TENSORFLOW}=={version}")


def _parse_wheels(wheels, where, key="wheels", keys=ARCHES):
    """{architecture (or platform, for comparator rows): (Pythons)}."""
    what = "architecture" if keys == ARCHES else "platform"
    if not isinstance(wheels, dict) or not wheels:
        raise TableError(f"{where}: {key} must map an {what} to its Pythons, "
                         f'e.g. {{ {keys[0]} = ["3.10", "3.11"] }}')
    parsed = {}
    for arch, pythons in wheels.items():
        if arch not in keys:
            raise TableError(f"{where}: {key} for unknown {what} {arch!r}; "
                             f"expected {' or '.join(keys)}")
        if (not isinstance(pythons, list) or not pythons
                or not all(isinstance(p, str) and PYTHON.match(p) for p in pythons)):
            raise TableError(f"{where}: {key}.{arch} must list Pythons such as \"3.11\"")
        if len(set(pythons)) != len(pythons):
            raise TableError(f"{where}: {key}.{arch} lists a Python twice")
        parsed[arch] = tuple(pythons)
    return parsed
