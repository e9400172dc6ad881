"""Install one stack's pins into asv's environment, or say in one line why not.

asv runs this as its install_command for every commit of the generated
.stacks repository, with the environment's own Python:

    python {conf_dir}/tfgpubench/stacks/install_stack.py {build_dir}/stack.json BENCHMARK_DIR

It must run on every Python a stack supports (3.8 on), from the suite's
checkout, without the tfgpubench package installed: standard library only.
The tooling imports the same functions, so "does this stack fit here" has one
answer everywhere.

With BENCHMARK_DIR, the suite's GPU self-check then runs in the new
environment (check_gpu.py) and its record is saved there for the benchmarks.

A stack of the comparators' section (PyTorch, JAX, numpy) installs without
TensorFlow and without the GPU self-check (which needs TensorFlow): each
comparator benchmark proves in its own setup where its result lives.

Exit status: 0 installed and verified; 3 the stack does not fit this
platform, architecture or Python; 4 pip failed; 5 the installed versions
differ from the pins; 6 TensorFlow cannot run the GPU self-check. A JSON
record of what happened is written to $ASV_ENV_DIR/tfgpubench-installed.json
for the runner, and appended as a line to tfgpubench-installs.jsonl beside it:
the gate installs its two stacks in turn, round after round, into one
environment, and asks afterwards what each of them installed.
"""

import json
import os
import platform
import re
import subprocess
import sys

if not __package__:
    # Run by asv as a script, with the environment's Python: the package's
    # leaf modules are importable from the checkout this file lies in.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from tfgpubench.names import (  # noqa: E402
    COMPARATORS_SECTION,
    INSTALL_HISTORY_FILE,
    INSTALL_MARKER_FILE,
)

# Every distribution that provides `import tensorflow`, and the GPU plugin. A
# stack installs only its own pins; the others are removed first so two
# TensorFlows never share an environment.
TENSORFLOW_FAMILY = (
    "tensorflow",
    "tensorflow-cpu",
    "tensorflow-gpu",
    "tensorflow-macos",
    "tensorflow-intel",
    "tensorflow-metal",
)
# NAME==VERSION, or NAME[EXTRA]==VERSION: nothing else of pip's syntax can
# reach pip through a stack (stacks.toml decides which extras a row may use).
PIN = re.compile(r"^([a-z][a-z0-9-]*)(?:\[([a-z][a-z0-9-]*)\])?==(\d+(?:\.\d+)*(?:\.post\d+)?)$")
OS_OF_PLATFORM = {"darwin": "macos", "linux": "linux"}
MACHINE_ALIASES = {"amd64": "x86_64", "x86_64": "x86_64", "arm64": "arm64", "aarch64": "arm64"}
# Recorded with each result too: they move with TensorFlow and change timings.
ALSO_RECORDED = ("numpy", "keras", "protobuf")


def normalize_machine(machine):
    """'arm64' or 'x86_64' for the names OSes give them; others lowercased as is."""
    return MACHINE_ALIASES.get(machine.lower(), machine.lower())


def python_version(info=None):
    info = info or sys.version_info
    return f"{info[0]}.{info[1]}"


def has_nvidia_gpu():
    """Whether `nvidia-smi -L` lists a GPU (the CUDA build is then worth installing)."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and "GPU" in out.stdout


def detect_variant(environ=None, nvidia=None):
    """'cuda' or 'cpu': $TFGPUBENCH_VARIANT when set, else cuda where an NVIDIA GPU is."""
    environ = os.environ if environ is None else environ
    chosen = environ.get("TFGPUBENCH_VARIANT", "auto") or "auto"
    if chosen not in ("auto", "cpu", "cuda"):
        raise ValueError(f"TFGPUBENCH_VARIANT={chosen!r}: expected auto, cpu or cuda")
    if chosen != "auto":
        return chosen
    return "cuda" if (has_nvidia_gpu() if nvidia is None else nvidia) else "cpu"


def is_comparators(stack):
    """Whether `stack` (plain data) is a row of the comparators' section."""
    return stack["os"] == COMPARATORS_SECTION


def choose_pins(stack, system, machine, python, variant="cpu"):
    """(pins, None) when `stack` installs on this system/machine/python, else (None, reason).

    stack: a row as plain data (label, os, pins, optional cuda and cuda_wheels, wheels);
    system: sys.platform; machine: platform.machine(); python: 'X.Y'. A TensorFlow
    row's wheels are keyed by architecture (the row is for one OS); a comparator
    row's by OS-architecture (linux-x86_64, macos-arm64), for it serves every OS.
    """
    here = OS_OF_PLATFORM.get(system, system)
    arch = normalize_machine(machine)
    if is_comparators(stack):
        arch = f"{here}-{arch}"
    elif here != stack["os"]:
        return None, f"a {stack['os']} stack, this is {here}"
    wheels = stack["wheels"]
    if arch not in wheels:
        return None, f"no {arch} wheels (only {', '.join(sorted(wheels))})"
    pythons = wheels[arch]
    if python not in pythons:
        return None, f"no wheels for Python {python} on {arch} (only {', '.join(pythons)})"
    if variant == "cuda" and stack.get("cuda"):
        cuda_pythons = stack.get("cuda_wheels", wheels).get(arch, [])
        if python not in cuda_pythons:
            return None, (f"the CUDA build has no wheels for Python {python} on {arch} "
                          f"(only {', '.join(cuda_pythons) or 'none'})")
        return list(stack["cuda"]), None
    return list(stack["pins"]), None


def split_pin(pin):
    """(name, extra or None, version) of NAME[EXTRA]==VERSION."""
    match = PIN.match(pin) if isinstance(pin, str) else None
    if not match:
        raise ValueError(f"not NAME==VERSION: {pin!r}")
    return match.group(1), match.group(2), match.group(3)


def parse_pin(pin):
    """(distribution name, version): what pip must end up installing for `pin`."""
    name, _, version = split_pin(pin)
    return name, version


def family(pins):
    """The distributions whose versions must be exactly a stack's pins: the TensorFlow
    family always (a comparator stack must have none of it), and what it pins."""
    return TENSORFLOW_FAMILY + tuple(parse_pin(p)[0] for p in pins
                                     if parse_pin(p)[0] not in TENSORFLOW_FAMILY)


def installed_versions(names=TENSORFLOW_FAMILY):
    """{distribution: version} for those of `names` installed in this Python."""
    from importlib import metadata

    found = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return found


def public_version(version):
    """The version without its local label: '2.13.0' of '2.13.0+cpu'. pip's ==2.13.0
    takes a local build such as PyTorch's CPU wheel (PEP 440)."""
    return version.split("+", 1)[0] if version else version


def same_versions(pins, installed):
    """Whether every pin's distribution is installed at the pinned (public) version."""
    return all(public_version(installed.get(name)) == version
               for name, version in map(parse_pin, pins))


def verify(pins, installed):
    """None when `installed` is exactly the pinned TensorFlow family, else why not."""
    wanted = dict(parse_pin(p) for p in pins)
    wrong = [
        f"{name} {installed.get(name, 'missing')} instead of {version}"
        for name, version in wanted.items()
        if public_version(installed.get(name)) != version
    ]
    extra = [f"{name} {v} is installed too" for name, v in installed.items() if name not in wanted]
    problems = wrong + extra
    return "; ".join(problems) if problems else None


def _pip(args):
    cmd = [sys.executable, "-m", "pip", *args]
    print("tfgpubench: " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=False).returncode


# What asv itself puts into a new environment (and pip's own); everything
# else in it came from a stack.
ENVIRONMENT_TOOLS = ("pip", "setuptools", "wheel", "build", "asv_runner", "pympler")


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def environment_tools():
    """Canonical names of ENVIRONMENT_TOOLS and everything they require."""
    from importlib import metadata

    keep, todo = set(), list(ENVIRONMENT_TOOLS)
    while todo:
        name = canonical(todo.pop())
        if name in keep:
            continue
        keep.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        todo.extend(
            re.match(r"[A-Za-z0-9_.-]+", r).group(0) for r in requires if "extra ==" not in r
        )
    return keep


def left_by_other_stacks(pins, installed_family, distributions, keep):
    """Distributions to remove before installing `pins`: none when this stack is
    what is installed already (asv reinstalls a commit it measures again),
    else all but asv's tools. asv reuses one environment for every stack, and
    a newer stack's dependencies (numpy 2, jax, keras 3) break an older
    TensorFlow installed over them. installed_family: what
    `installed_versions(family(pins))` finds."""
    if set(installed_family) == {parse_pin(p)[0] for p in pins} and same_versions(
            pins, installed_family):
        return []
    return sorted(d for d in distributions if canonical(d) not in keep)


def install(pins, names=TENSORFLOW_FAMILY):
    """Remove what other stacks left, pip-install `pins` from wheels only. pip's exit status.

    names: the stack's family (see `family`)."""
    from importlib import metadata

    distributions = {d.metadata["Name"] for d in metadata.distributions() if d.metadata["Name"]}
    stale = left_by_other_stacks(pins, installed_versions(names), distributions,
                                 environment_tools())
    if stale and _pip(["uninstall", "-y", *stale]) != 0:
        return 1
    # Wheels only, for the stack and everything it pulls in: building TensorFlow
    # from an sdist would take hours and measure something no user installs, and
    # wheels only is what tests/stacks/test_resolve.py proves resolves on every
    # platform and Python a row claims (pip cannot resolve sdists for another one).
    return _pip(["install", "--only-binary", ":all:", *pins])


def _write_marker(record):
    env_dir = os.environ.get("ASV_ENV_DIR")
    if env_dir:
        with open(os.path.join(env_dir, INSTALL_MARKER_FILE), "w") as f:
            json.dump(record, f, indent=1, sort_keys=True)
        with open(os.path.join(env_dir, INSTALL_HISTORY_FILE), "a") as f:
            f.write(json.dumps(record, sort_keys=True) + "\n")


def run_gpu_checks(benchmark_dir):
    """(record, None) from the suite's GPU self-check in this environment, saved where its
    benchmark processes look; (None, reason) when TensorFlow cannot even run it (a
    mismatched TensorFlow / tensorflow-metal pair crashes at import)."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_gpu.py")
    print("tfgpubench: running the GPU self-check", flush=True)
    try:
        done = subprocess.run([sys.executable, script, benchmark_dir], capture_output=True,
                              text=True, timeout=600, check=False)
    except subprocess.TimeoutExpired:
        return None, "the GPU self-check did not finish in 10 minutes"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"TensorFlow fails in this environment (exit {done.returncode}): {last}"
    lines = done.stdout.strip().splitlines()
    for line in lines[:-1]:
        print(f"tfgpubench:   {line}", flush=True)
    return json.loads(lines[-1]), None


# What a stack file must hold, and of which type (asv checks out one per commit).
STACK_KEYS = {"label": str, "os": str, "pins": list, "wheels": dict}


def read_stack(path):
    """The stack in `path` as plain data; ValueError in one line if it is not one."""
    try:
        with open(path) as f:
            stack = json.load(f)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read the stack ({exc})") from None
    if not isinstance(stack, dict):
        raise ValueError(f"{path}: not a stack (a JSON object of {', '.join(STACK_KEYS)})")
    for key, kind in STACK_KEYS.items():
        if not isinstance(stack.get(key), kind):
            raise ValueError(f"{path}: not a stack: {key} must be a {kind.__name__}")
    cuda = stack.get("cuda", [])
    if not isinstance(cuda, list):
        raise ValueError(f"{path}: not a stack: cuda must be a list")
    for pin in stack["pins"] + cuda:
        try:
            split_pin(pin)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
    return stack


def describe_here():
    """This Python's platform and TensorFlow family, as plain data (for --query)."""
    return {
        "python": python_version(),
        "system": sys.platform,
        "machine": normalize_machine(platform.machine()),
        "installed": installed_versions(),
        "also": installed_versions(ALSO_RECORDED),
    }


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--query"]:
        print(json.dumps(describe_here(), sort_keys=True))
        return 0
    if len(argv) not in (1, 2):
        print("usage: install_stack.py STACK.json [BENCHMARK_DIR] | --query", file=sys.stderr)
        return 2
    benchmark_dir = argv[1] if len(argv) == 2 else None
    try:
        variant = detect_variant()
        stack = read_stack(argv[0])
    except ValueError as exc:
        _write_marker({"commit": os.environ.get("ASV_COMMIT"), "ok": False, "reason": str(exc)})
        print(f"tfgpubench: nothing installed: {exc}", file=sys.stderr)
        return 2
    python = python_version()
    record = {
        "commit": os.environ.get("ASV_COMMIT"),
        "label": stack["label"],
        "python": python,
        "platform": f"{sys.platform} {normalize_machine(platform.machine())}",
        "variant": variant,
    }
    pins, reason = choose_pins(stack, sys.platform, platform.machine(), python, variant)
    status = 3
    if pins is not None:
        record["pins"] = pins
        names = family(pins)
        if install(pins, names) != 0:
            reason, status = f"pip could not install {' '.join(pins)}", 4
        else:
            installed = installed_versions(names)
            record["installed"] = installed
            record["also"] = installed_versions(ALSO_RECORDED)
            reason, status = verify(pins, installed), 5
    if reason is None and benchmark_dir and not is_comparators(stack):
        record["gpu_checks"], reason = run_gpu_checks(benchmark_dir)
        status = 6
    record["ok"] = reason is None
    record["reason"] = reason
    _write_marker(record)
    if reason is not None:
        print(f"tfgpubench: stack {stack['label']} not installed: {reason}", file=sys.stderr)
        return status
    print(f"tfgpubench: stack {stack['label']} installed: {' '.join(pins)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
