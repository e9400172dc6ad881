"""Which stacks a run covers, and which of those can install on this machine.

Pure functions over the table; the one that asks pip's index is marked so.
"""

import platform
import subprocess
import sys
from dataclasses import dataclass

from .install_stack import choose_pins, normalize_machine, parse_pin, python_version


class SelectionError(ValueError):
    """A label or range that names no stack; the message says which exist."""


@dataclass(frozen=True)
class Target:
    """The machine and Python the stacks would install on."""

    system: str  # sys.platform: 'linux', 'darwin'
    machine: str  # 'x86_64', 'arm64'
    python: str  # 'X.Y'
    variant: str = "cpu"  # 'cpu' or 'cuda' (Linux rows only)

    @classmethod
    def here(cls, python=None, variant="cpu"):
        return cls(sys.platform, normalize_machine(platform.machine()),
                   python or python_version(), variant)

    def describe(self):
        return f"{self.system} {self.machine}, Python {self.python}, {self.variant}"


def fits(stacks, target):
    """([(stack, pins)] that install on `target`, [(stack, reason)] that don't)."""
    runnable, left_out = [], []
    for stack in stacks:
        pins, reason = choose_pins(stack.as_data(), target.system, target.machine,
                                   target.python, target.variant)
        if pins is None:
            left_out.append((stack, reason))
        else:
            runnable.append((stack, pins))
    return runnable, left_out


def pick(stacks, spec):
    """The stacks named by `spec`, in table order.

    spec: 'all'; a label; 'OLD..NEW' (inclusive, either side may be empty);
    or labels separated by commas. Labels are matched within one section
    (macOS or Linux), in the table's order.
    """
    if spec == "all":
        return list(stacks)
    if "," in spec:
        picked = []
        for part in spec.split(","):
            picked.extend(s for s in pick(stacks, part.strip()) if s not in picked)
        return picked
    labels = [s.label for s in stacks]
    if ".." in spec:
        old, new = spec.split("..", 1)
        if not old and not new:
            raise SelectionError(f"{spec}: a range needs a label on at least one side "
                                 "(OLD.., ..NEW, OLD..NEW)")
        start = _index(labels, old, spec) if old else None
        end = _index(labels, new, spec) if new else None
        os_name = stacks[start if start is not None else end].os
        same_os = [i for i, s in enumerate(stacks) if s.os == os_name]
        lo = start if start is not None else same_os[0]
        hi = end if end is not None else same_os[-1]
        if old and new and stacks[lo].os != stacks[hi].os:
            raise SelectionError(f"{spec}: {old} is a {stacks[lo].os} stack, {new} a "
                                 f"{stacks[hi].os} one; a range stays within one")
        if lo > hi:
            raise SelectionError(f"{spec}: {old} is newer than {new}")
        return [stacks[i] for i in same_os if lo <= i <= hi]
    return [stacks[_index(labels, spec, spec)]]


def _index(labels, label, spec):
    if not label:
        raise SelectionError(f"{spec}: an empty label; `python -m tfgpubench stacks list` "
                             "shows them")
    try:
        return labels.index(label)
    except ValueError:
        raise SelectionError(f"{spec}: no stack labeled {label!r}; "
                             "`python -m tfgpubench stacks list` shows them") from None


def newest(runnable):
    """The newest (last in table order) of the runnable TensorFlow stacks, as a one-item
    list: a comparator stack is measured when chosen, never by default."""
    return [item for item in runnable if not item[0].is_comparators][-1:]


def pip_index_versions(package, python=sys.executable, timeout=120):
    """The versions pip's index offers `python` for `package` (network), or None if unknown.

    `pip index versions` lists only releases with a wheel or sdist this
    interpreter and platform can use.
    """
    try:
        out = subprocess.run(
            [python, "-m", "pip", "index", "versions", package],
            capture_output=True, text=True, timeout=timeout, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.stdout.splitlines():
        if line.startswith("Available versions:"):
            return {v.strip() for v in line.split(":", 1)[1].split(",")}
    # pip says "ERROR: No matching distribution found" when it reached the
    # index and found nothing for this platform; anything else is unknown.
    if "No matching distribution" in out.stderr:
        return set()
    return None


def missing_on_index(runnable, versions_of=pip_index_versions):
    """[(stack, message)] for pins the package index does not offer here.

    Unknown answers (index unreachable) are not failures: pip reports those
    at install time.
    """
    cache = {}
    problems = []
    for stack, pins in runnable:
        for pin in pins:
            name, version = parse_pin(pin)
            if name not in cache:
                cache[name] = versions_of(name)
            offered = cache[name]
            if offered is not None and version not in offered:
                problems.append((stack, f"{stack.where}: {name} {version} is not on the package "
                                        f"index for this platform and Python "
                                        f"({_summary(offered)})"))
    return problems


def _summary(versions):
    if not versions:
        return "it offers none"
    ordered = sorted(versions, key=_version_key)
    return f"it offers {len(ordered)}, {ordered[0]} to {ordered[-1]}"


def _version_key(version):
    return tuple(int(p) if p.isdigit() else 0 for p in version.replace("post", "").split("."))
