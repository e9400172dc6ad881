"""The suite's engine as checked out against the engine of another revision, both against
the self-check's bare loop: what a change to the timed code did to each cpu case.

    python scripts/engine_against_revision.py REV [--sizes 2 32 128 256 512]

REV's benchmarks/ (git archive) is imported as a package of its own, so it runs an engine
of its own. For each cpu case of `--sizes`, both engines' samples (asked back to back) and
the bare loop's ~10 ms loops are taken in a shuffled order every round, in `--processes`
fresh processes of each, pooled: a process's heap and inputs land differently in every
process (benchmarks/grid.py). Prints each case's ratios to the bare loop and the checked
out engine's over REV's, then their medians and how many are within 5 %. The sampling is
scripts/warm_up_length.py's.
"""

import argparse
import contextlib
import importlib
import importlib.util
import io
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import engine  # noqa: E402
from benchmarks.grid import DTYPES, MODES  # noqa: E402

_spec = importlib.util.spec_from_file_location("warm_up_length",
                                               ROOT / "scripts" / "warm_up_length.py")
warm_up_length = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(warm_up_length)

CHECKED_OUT = "checked out"
REVISION_PACKAGE = "benchmarks_at_revision"


def suite_at(revision, folder):
    """The engine module of benchmarks/ at git `revision`, copied into `folder` and
    imported as a package of its own."""
    name = REVISION_PACKAGE
    try:
        archive = subprocess.run(["git", "archive", "--format=tar", revision, "benchmarks"],
                                 cwd=ROOT, capture_output=True, check=True).stdout
    except subprocess.CalledProcessError as error:
        raise SystemExit(f"git archive {revision}: {error.stderr.decode().strip()}") from None
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        # Python's own safe filter where it has one (3.11.4 on): the archive is ours.
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(folder, **safe)
    os.rename(Path(folder) / "benchmarks", Path(folder) / name)
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return importlib.import_module(f"{name}.engine")


def summary(found, revision):
    """Lines: each case's ratios, then each way's median and count within 5 %, then the
    checked out engine over REV's. found: {case: {way: ratio to the bare loop}}."""
    lines = []
    for case, by_way in found.items():
        change = by_way[CHECKED_OUT] / by_way[revision]
        lines.append(f"{case[0]}x{case[0]} {case[1]:<7} {case[2]:<10} "
                     + "  ".join(f"{way}: {ratio:.3f}" for way, ratio in by_way.items())
                     + f"  {CHECKED_OUT} / {revision}: {change:.3f}")
    for way in (revision, CHECKED_OUT):
        values = [by_way[way] for by_way in found.values()]
        lines.append(f"{way} / reference: median {statistics.median(values):.3f} over "
                     f"{len(values)} cases, {sum(abs(v - 1) <= 0.05 for v in values)} within 5 %")
    changes = [by_way[CHECKED_OUT] / by_way[revision] for by_way in found.values()]
    lines.append(f"{CHECKED_OUT} / {revision}: median {statistics.median(changes):.3f} "
                 f"({min(changes):.3f}-{max(changes):.3f})")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("revision", help="a git revision whose engine to compare with")
    parser.add_argument("--sizes", type=int, nargs="+", default=[2, 32, 128, 256, 512])
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3, help="per process")
    args = parser.parse_args(argv)
    if args.revision in (CHECKED_OUT, warm_up_length.REFERENCE):
        parser.error(f"revision: {args.revision!r} names a way of the comparison; "
                     "give the commit another name (its hash)")
    cases = [(size, dtype, mode) for size in args.sizes for dtype in DTYPES for mode in MODES]
    scratch = tempfile.mkdtemp(prefix="tfgpubench-revision-")
    folder = os.path.join(scratch, "engines")
    saved = os.environ.get(engine.ENGINE_DIR_ENV)
    os.environ[engine.ENGINE_DIR_ENV] = folder
    runs = []
    try:
        other = suite_at(args.revision, scratch)
        for number in range(args.processes):
            engines = {CHECKED_OUT: engine.Engine(), args.revision: other.Engine()}
            # No gap: both engines warm up before each sample as they would under asv.
            runs.append(warm_up_length.one_process_each(engines, cases, args.rounds, 0.0))
            engine.stop_engines(folder)
            print(f"process {number + 1}/{args.processes}", file=sys.stderr, flush=True)
    finally:
        engine.stop_engines(folder)
        shutil.rmtree(scratch, ignore_errors=True)
        # This process as it was: its engines' folder, and no trace of the removed copy.
        if saved is None:
            os.environ.pop(engine.ENGINE_DIR_ENV, None)
        else:
            os.environ[engine.ENGINE_DIR_ENV] = saved
        with contextlib.suppress(ValueError):
            sys.path.remove(scratch)
        for name in [name for name in sys.modules if name.startswith(REVISION_PACKAGE)]:
            del sys.modules[name]
    print("\n".join(summary(warm_up_length.ratios(warm_up_length.pooled(runs)), args.revision)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
