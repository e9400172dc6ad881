"""Run the comparator benchmarks (PyTorch, JAX, numpy) with asv in the Python at hand, no
TensorFlow and no package index needed, and leave asv's result files in one folder.

For a machine that has the frameworks (an NVIDIA machine with PyTorch and JAX built for
CUDA, say) but neither TensorFlow nor pip's index: asv and what it needs that such a
machine lacks travel as a handful of wheels (~0.6 MB; `--download-wheels DIR` fetches
them where the index is reachable). From the checkout's root:

    python3 -m tfgpubench.comparator_run --machine h200 --wheels .wheels --out OUT

It installs the wheels into a scratch folder if asv is missing, registers the machine
with asv (its GPU in the machine info, as `tfgpubench run` does), finds the row of
stacks.toml's comparators whose pins are the versions installed here (its results then
land on that row's commit, on the comparators' chain, as `run` would put them) or else
a side stack for those versions (`own-comparators-...`, drawn after the newest
comparators row, as `run --existing` draws its own stacks, and recorded in
installed-versions.jsonl so that `run`, `gate` and `publish` rebuild its commit and asv
finds the results on it), runs `asv run -E existing:` on this Python with the forkserver, and copies
results/ (benchmarks.json, the machine's machine.json, installed-versions.jsonl and the
result file) and the log into OUT.

Why a module of the package, not a shell script: it reuses the package's machine info
and stacks-repository code, and its pieces are tested with the rest; it imports nothing
beyond the standard library at module level, and runs from a checkout with no install.
"""

import argparse
import ast
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

from .names import COMPARATORS_SECTION, FRAMEWORK_MULTIPLY, INSTALLED_VERSIONS_FILE, TABLE_FILE
from .stacks import ledger
from .stacks import repo as stacks_repo
from .stacks.install_stack import same_versions
from .stacks.machine import machine_info
from .stacks.table import TableError, load_table

ROOT = Path(__file__).resolve().parents[1]
# What asv imports beyond what PyTorch and JAX install: asv, its benchmark runner, and
# the imports asv fails without (tabulate: its command table; importlib_metadata, which
# needs zipp and lazy_importer). Pure Python but asv, whose one wheel (abi3,
# manylinux2014) serves CPython 3.6 and later on x86_64 Linux. ~0.6 MB in all.
WHEELS = ("asv", "asv_runner", "json5", "tabulate", "importlib_metadata", "lazy_importer",
          "zipp", "packaging")
# The distributions whose versions name the comparator stack; cupy is recorded, not run.
COMPARATOR_DISTRIBUTIONS = ("torch", "jax", "jaxlib", "jax-cuda12-plugin", "jax-cuda13-plugin",
                            "numpy", "cupy-cuda12x", "cupy-cuda13x")
# Recorded beside them where this Python has it too (then its cases may be run as well).
TENSORFLOW_DISTRIBUTIONS = ("tensorflow", "tensorflow-cpu", "tensorflow-macos",
                            "tensorflow-metal")
# Versions no row of stacks.toml pins have no release date: a fixed one makes their
# side commit depend on the versions alone, so reruns land on it.
STACK_DATE = "2026-01-01"
LABEL_PREFIX = "own-comparators-"
# One `asv run` per framework, quickest first: asv saves a run's results only when the
# run ends, so a command cut short by a time limit keeps the frameworks done before.
FRAMEWORK_ORDER = ("numpy", "PyTorch", "JAX")
SKIPPED = re.compile(r"asv: skipped: NotImplementedError\((['\"])(.*)\1\)")
# What a framework says when a device was started before asv's forkserver forked: the
# preload (benchmarks/forkserver_preload.py) must only import. Checked on every run.
FORK_HAZARDS = ("os.fork() was called", "Cannot re-initialize CUDA in forked subprocess")


def installed_versions(distributions=COMPARATOR_DISTRIBUTIONS):
    """{distribution: version} of the comparators installed here, without importing them."""
    found = {}
    for name in distributions:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return found


def stack_data(versions):
    """The comparator stack's commit contents: its label and pins. The label names the
    versions, or, where that would be too long for a side stack's label (ledger.OWN_LABEL:
    local versions such as +cu130, more plugins), a hash of the pins."""
    pins = [f"{name}=={version}" for name, version in sorted(versions.items())]
    label = LABEL_PREFIX + "-".join(f"{name}{version}" for name, version in
                                    sorted(versions.items()))
    if not ledger.OWN_LABEL.match(label):
        label = LABEL_PREFIX + hashlib.sha256("\n".join(pins).encode()).hexdigest()[:12]
    return {"label": label, "comparators": True, "pins": pins}


# The comparator stack's branch: a chain of its own, as each section of stacks.toml is.
BRANCH = COMPARATORS_SECTION


def matching_row(stacks, versions):
    """The newest comparator row of the table whose pins (or cuda pins) are the versions
    installed here, or None."""
    for stack in reversed([s for s in stacks if s.is_comparators]):
        if any(pins and same_versions(pins, versions) for pins in (stack.pins, stack.cuda)):
            return stack
    return None


def side_stack(stacks, versions, recorded=()):
    """The side stack for versions no row pins, as `run --existing` records its own
    (ledger.own_stacks reads it back): the one `recorded` already holds for these
    versions (results/ of the checkout), so that its commit stays that of the results
    under it, else one drawn after the table's newest comparators row."""
    data = stack_data(versions)
    for own in recorded:
        if own["label"] == data["label"]:
            return own
    rows = [stack.label for stack in stacks if stack.is_comparators]
    return {"label": data["label"], "parent": rows[-1] if rows else None,
            "stack": {**data, "os": COMPARATORS_SECTION, "own": True}}


def choose_stack(path, versions, table=ROOT / TABLE_FILE, results=None):
    """(data, commit, own) the results go under, in a repository generated at `path`:
    the table's row these versions match, on the comparators' chain (own None), else
    a side stack of their own (own: its entry for installed-versions.jsonl, so that
    the repository `publish` builds from the table and results/ holds the same
    commit; one `results` (default: the checkout's) already records is reused). A
    table that cannot be read counts as no match, and its side stack is a one-commit
    repository that nothing else rebuilds."""
    try:
        stacks = load_table(table)
    except TableError as exc:
        print(f"warning: {exc}; the results go under a stack of their own, which `publish` "
              "cannot place on asv's graphs", flush=True)
        data = stack_data(versions)
        return data, make_stack_repo(path, data), None
    row = matching_row(stacks, versions)
    if row is None:
        if results is None:
            results = ROOT / checkout_config().get("results_dir", "results")
        own = side_stack(stacks, versions, ledger.own_stacks(results))
        return own["stack"], stacks_repo.build(stacks, path, [own])[own["label"]], own
    return row.as_data(), stacks_repo.build(stacks, path)[row.label], None


def make_stack_repo(path, data):
    """A repository whose one commit is the comparator stack; its hash."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    stacks_repo.git(path, "init", "-q")
    commit = stacks_repo.write_commit(path, data, None, STACK_DATE)
    stacks_repo.git(path, "update-ref", f"refs/heads/{BRANCH}", commit)
    stacks_repo.git(path, "symbolic-ref", "HEAD", f"refs/heads/{BRANCH}")
    stacks_repo.git(path, "tag", "-f", data["label"], commit)
    return commit


def checkout_config():
    """The checkout's asv.conf.json."""
    return json.loads((ROOT / "asv.conf.json").read_text())


def asv_config(work, benchmark_dir, repo):
    """The checkout's asv configuration, pointed at scratch folders under `work`."""
    config = checkout_config()
    config.update(repo=str(repo), branches=[BRANCH], benchmark_dir=str(benchmark_dir),
                  results_dir=str(work / "results"), html_dir=str(work / "html"),
                  env_dir=str(work / "env"), install_command=[], uninstall_command=[])
    return config


def benchmark_groups(asv_args):
    """The -b regular expressions of the asv runs to make: one per comparator, in
    FRAMEWORK_ORDER; [None] (one run, asv_args choose) if asv_args pick benchmarks."""
    if any(a in ("-b", "--bench") or a.startswith("--bench=") for a in asv_args):
        return [None]
    return ["^" + re.escape(FRAMEWORK_MULTIPLY[name]) for name in FRAMEWORK_ORDER]


def asv_run_args(python, commit, machine, bench, asv_args=()):
    """`asv run` on the existing `python`, recorded under `commit` and `machine`, of the
    benchmarks matching `bench` (None: as asv_args say)."""
    return ["run", "-E", f"existing:{python}", "--set-commit-hash", commit,
            "--machine", machine, "--launch-method", "forkserver", "--show-stderr",
            *(["-b", bench] if bench else []), *asv_args]


def skip_reasons(log):
    """{reason: how many cases} from asv's --show-stderr output."""
    counts = {}
    for match in SKIPPED.finditer(log):
        counts[match.group(2)] = counts.get(match.group(2), 0) + 1
    return counts


def fork_hazards(log):
    """{message: how many times} of FORK_HAZARDS in asv's output."""
    return {message: log.count(message) for message in FORK_HAZARDS if message in log}


def summary(result_file):
    """Lines saying, per benchmark and device, how many cases were measured."""
    data = json.loads(Path(result_file).read_text())
    columns = data["result_columns"]
    lines = []
    for name, row in sorted(data["results"].items()):
        entry = dict(zip(columns, row))
        params = entry.get("params") or []
        values = entry.get("result") or []
        devices = [ast.literal_eval(d) for d in params[0]] if params else [""]
        per_device = len(values) // max(1, len(devices))
        for i, device in enumerate(devices):
            chunk = values[i * per_device:(i + 1) * per_device]
            measured = sum(1 for v in chunk if v is not None and v == v)
            lines.append(f"{name} {device}: {measured} of {len(chunk)} cases measured")
    return lines


# --- the edges: wheels, asv, files -----------------------------------------------------


def asv_importable():
    try:
        import asv  # noqa: F401
        import asv_runner  # noqa: F401
    except ImportError:
        return False
    return True


def install_wheels(wheels, site):
    """Install every wheel in `wheels` into `site` without asking any index."""
    found = sorted(str(p) for p in Path(wheels).glob("*.whl"))
    if not found:
        raise SystemExit(f"{wheels}: no wheels there (make them with --download-wheels)")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                    "--no-compile", "--no-cache-dir", "--upgrade", "--target", str(site),
                    *found], check=True)


def download_wheels(target, python_version="3.12"):
    """Fetch the wheels asv needs, at the versions installed here, for x86_64 Linux."""
    pins = [f"{name}=={metadata.version(name)}" for name in WHEELS]
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                    "--only-binary=:all:", "--implementation", "cp", "--python-version",
                    python_version, "--platform", "manylinux2014_x86_64", "-d", str(target),
                    *pins], check=True)
    return pins


def run_logged(cmd, env, log):
    """Run cmd, echoing its output and appending it to the open file `log`;
    (exit code, output)."""
    chunks = []
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, bufsize=1)
    for line in proc.stdout:
        sys.stdout.write(line)
        log.write(line)
        log.flush()
        chunks.append(line)
    return proc.wait(), "".join(chunks)


def collect(results_dir, machine, commit, out):
    """Copy what the report needs into out/results, in asv's layout; the result files."""
    target = Path(out) / "results"
    (target / machine).mkdir(parents=True, exist_ok=True)
    shutil.copy2(results_dir / "benchmarks.json", target / "benchmarks.json")
    for name in ("machine.json", INSTALLED_VERSIONS_FILE):
        if (results_dir / machine / name).is_file():
            shutil.copy2(results_dir / machine / name, target / machine / name)
    copied = []
    for path in ledger.result_files(results_dir, machine, commit):
        shutil.copy2(path, target / machine / path.name)
        copied.append(target / machine / path.name)
    return copied


def run(args):
    started = time.monotonic()
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    work = Path(args.work or tempfile.mkdtemp(prefix="tfgpubench-comparators-")).resolve()
    env = dict(os.environ)
    if not asv_importable():
        if not args.wheels:
            raise SystemExit("asv is not installed here: pass --wheels DIR (see "
                             "--download-wheels)")
        site = work / "site"
        install_wheels(args.wheels, site)
        sys.path.insert(0, str(site))
        # asv drops PYTHONPATH in the benchmark processes it starts; ASV_PYTHONPATH
        # is what it hands them instead.
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
        env["ASV_PYTHONPATH"] = str(site)
    if shutil.which("git") is None:
        raise SystemExit("git is not on PATH: asv needs it to read the commit results go under")

    versions = installed_versions()
    data, commit, own = choose_stack(work / "repo", versions)
    print(f"comparators here: {' '.join(data['pins']) or 'none'}; results go under "
          f"{data['label']} ({commit[:8]})", flush=True)
    config_path = work / "asv.conf.json"
    config = asv_config(work, ROOT / "benchmarks", work / "repo")
    config_path.write_text(json.dumps(config, indent=1))

    # asv keeps machine entries in ~/.asv-machine.json: this run keeps its own.
    env["HOME"] = str(work)
    os.environ["HOME"] = str(work)
    from asv.machine import Machine, MachineCollection

    info = machine_info(defaults=Machine.get_defaults())
    info["machine"] = args.machine
    MachineCollection.save(args.machine, info)
    print(f"machine {args.machine}: {info.get('cpu')}; GPU {info['gpu']}; {info['os']}",
          flush=True)

    (out / "stack.json").write_text(stacks_repo.stack_file_content(data))
    asv_args = [a for a in args.asv_args if a != "--"]
    if args.rounds:
        asv_args += ["-a", f"rounds={args.rounds}"]
    results_dir = Path(config["results_dir"])
    codes, output, copied = [], "", []
    with open(out / "asv-run.log", "w", encoding="utf-8") as log:
        for bench in benchmark_groups(asv_args):
            cmd = [sys.executable, "-m", "asv",
                   *asv_run_args(sys.executable, commit, args.machine, bench, asv_args),
                   "--config", str(config_path)]
            code, text = run_logged(cmd, env, log)
            codes.append(code)
            output += text
            # 2: some benchmark failed, the rest were saved.
            if code in (0, 2) and not (results_dir / args.machine /
                                       INSTALLED_VERSIONS_FILE).exists():
                record_installed(results_dir, args.machine, commit, data, versions, own)
            if results_dir.is_dir():
                copied = collect(results_dir, args.machine, commit, out)
    for result_file in copied:
        print("\n".join(summary(result_file)))
    for reason, count in sorted(skip_reasons(output).items()):
        print(f"skipped {count}x: {reason}")
    for message, count in fork_hazards(output).items():
        print(f"warning: {count}x {message!r}: a device started before the fork")
    print(f"asv exited {', '.join(map(str, codes))}; {len(copied)} result file(s) in "
          f"{out / 'results'}; {time.monotonic() - started:.0f} s", flush=True)
    return 0 if not any(codes) and copied else 1


def record_installed(results_dir, machine, commit, data, versions, own=None):
    """Say in installed-versions.jsonl what each result file of `commit` measured, and
    the side stack it went under (own, if any), for `publish` to rebuild its commit."""
    for path in ledger.result_files(results_dir, machine, commit):
        record = {
            "label": data["label"], "commit": commit,
            "env_name": json.loads(path.read_text())["env_name"],
            "installed": {**versions, **installed_versions(TENSORFLOW_DISTRIBUTIONS)},
            "python": ".".join(map(str, sys.version_info[:3])),
            "existing": sys.executable, "comparators": True}
        if own:
            record["own"] = own
        ledger.record_installed(results_dir, machine, record)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m tfgpubench.comparator_run",
        description=__doc__.split("\n\n")[0])
    parser.add_argument("--machine", help="the machine's name in results/ (required to run)")
    parser.add_argument("--out", help="folder for results/, the log and stack.json")
    parser.add_argument("--wheels", help="folder of wheels for asv, used if asv is missing")
    parser.add_argument("--work", help="scratch folder (default: a new temporary one)")
    parser.add_argument("--rounds", type=int,
                        help="asv rounds per case (default: the benchmarks' own, 4)")
    parser.add_argument("--download-wheels", metavar="DIR",
                        help="only fetch the wheels asv needs into DIR (needs pip's index)")
    parser.add_argument("asv_args", nargs=argparse.REMAINDER,
                        help="after --: more arguments for asv run, e.g. -- --quick")
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.download_wheels:
        pins = download_wheels(args.download_wheels)
        print(f"{args.download_wheels}: {' '.join(pins)}")
        return 0
    if not (args.machine and args.out):
        parser.error("--machine and --out are required to run")
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
