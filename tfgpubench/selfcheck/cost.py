"""Cost: the wall time of one stack's full default run, and what starting
processes and importing TensorFlow take of it."""

from .. import format as fmt
from . import asvruns, stats
from .console import progress, section

COST_TARGET_SECONDS = 300


def run_part(scratch, full_runs, figures):
    """Print what the full default run costs; whether it is within the target."""
    section("cost: the full default run for one stack")
    walls = [r["wall"] for r in full_runs.values()]
    benchmarks = scratch.benchmarks()
    method = scratch.launch_method
    counts = stats.process_count(benchmarks, method)
    spawn_counts = stats.process_count(benchmarks, "spawn")
    progress("  timing a fresh interpreter importing asv_runner and the suite...")
    start_import = asvruns.import_seconds(scratch.benchmark_dir)
    share = counts["fresh_interpreters"] * start_import
    wall = stats.median(walls)
    print(
        f"  wall time ({method}): "
        + ", ".join(f"{w:.0f} s" for w in walls)
        + f"  target <= {COST_TARGET_SECONDS} s  {fmt.verdict(wall <= COST_TARGET_SECONDS)}"
    )
    print(
        f"  benchmark processes: {counts['benchmark_processes']}; fresh interpreters "
        f"importing TensorFlow: {counts['fresh_interpreters']} x {start_import:.2f} s "
        f"= {share:.0f} s ({share / wall:.0%} of the run)"
    )
    if method != "spawn":
        spawn_share = spawn_counts["fresh_interpreters"] * start_import
        print(
            f"  with spawn the same run would start {spawn_counts['fresh_interpreters']} "
            f"interpreters: ~{spawn_share:.0f} s more, ~{wall + spawn_share:.0f} s in all"
        )
    durations = stats.benchmark_durations(scratch.result_file(next(iter(full_runs))))
    for name, seconds in sorted(durations.items(), key=lambda kv: -kv[1]):
        print(f"    {seconds:6.1f} s  {name}")
    figures["cost"] = {
        "launch_method": method,
        "walls": walls,
        "import_seconds": start_import,
        **counts,
        "start_import_share": share / wall,
        "durations": durations,
    }
    return wall <= COST_TARGET_SECONDS
