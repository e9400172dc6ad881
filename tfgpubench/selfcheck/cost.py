"""Cost: the wall time of one stack's full default run under the launch method asked
for (`--launch-method spawn` measures what a Mac pays), and where it goes."""

from .. import format as fmt
from ..names import TENSORFLOW_STACK_BENCHMARKS
from ..stacks import ledger
from . import asvruns, stats
from .console import progress, section

COST_TARGET_SECONDS = 300


def run_part(scratch, full_runs, figures):
    """Print what the full default run costs; whether it is within the target."""
    section("cost: the full default run for one stack")
    walls = [r["wall"] for r in full_runs.values()]
    # What `run` measures on a TensorFlow stack, as the full runs did.
    benchmarks = ledger.selected_benchmarks(scratch.root / "results",
                                            [TENSORFLOW_STACK_BENCHMARKS])
    method = scratch.launch_method
    counts = stats.process_count(benchmarks, method)
    progress("  timing a benchmark process's start, and the TensorFlow engine's...")
    process_start = asvruns.start_seconds(scratch.benchmark_dir, tensorflow=False)
    engine_start = asvruns.start_seconds(scratch.benchmark_dir, tensorflow=True)
    wall = stats.median(walls)
    print(
        f"  wall time ({method}): "
        + ", ".join(f"{w:.0f} s" for w in walls)
        + f"  target <= {COST_TARGET_SECONDS} s  {fmt.verdict(wall <= COST_TARGET_SECONDS)}"
    )
    print(
        f"  benchmark processes: {counts['benchmark_processes']} (fresh interpreters: "
        f"{counts['fresh_interpreters']}); a fresh one starts in {process_start:.2f} s "
        f"without TensorFlow; the TensorFlow engine, once per run, in {engine_start:.2f} s"
    )
    durations = stats.benchmark_durations(scratch.result_file(next(iter(full_runs))))
    for name, seconds in sorted(durations.items(), key=lambda kv: -kv[1]):
        print(f"    {seconds:6.1f} s  {name}")
    figures["cost"] = {
        "launch_method": method,
        "walls": walls,
        "process_start_seconds": process_start,
        "engine_start_seconds": engine_start,
        **counts,
        "durations": durations,
    }
    return wall <= COST_TARGET_SECONDS
