"""The answer in words for the seed's case, computed from a StackReport's tables.

Each verdict states the numbers it rests on; where the data for one is
missing it says what is missing instead of guessing.
"""

from .. import format as fmt
from ..names import MULTIPLY, SEED_DTYPE, SEED_MODE, SEED_SIZE
from .cases import gpu_reasons, in_suite_order


def gpu_placement(report, run):
    """Which dtypes and modes never reached the GPU, and why (the GPU self-check's words)."""
    gpu = [m for m in run.benchmark(MULTIPLY) if m.params.get("device") == "gpu"]
    if not gpu:
        return "No GPU combinations were recorded in this run."
    reasons = gpu_reasons(run)
    if not report.gpu_measured:
        why = "; ".join(sorted(set(reasons.values()))) or (
            "see `python -m tfgpubench doctor --check` on that machine for the reason")
        return (
            f"No GPU results: every '/GPU:0' combination was skipped ({why}); "
            "what follows is CPU-only."
        )
    never = {}  # reason -> ["int32 eager", ...]
    for dtype in in_suite_order(run, "dtype"):
        for mode in in_suite_order(run, "mode"):
            timed = run.select(MULTIPLY, device="gpu", dtype=dtype, mode=mode)
            if timed and not any(m.measured for m in timed):
                why = reasons.get((dtype, mode)) or reasons.get((dtype, "*")) or "reason unknown"
                never.setdefault(why, []).append(f"{dtype} {mode}")
    if not never:
        return "Every dtype and mode was measured on the GPU."
    return ("Never on the GPU, so never timed there: " + "; ".join(
        f"{', '.join(cases)} ({why})" for why, cases in never.items()) + ". A gpu number is "
        "recorded only where every check of the GPU self-check that concerns it passed.")


def seed_placement(report):
    on_gpu = report.seed.get("gpu_calls_on_a_gpu")
    if on_gpu is None:
        return None
    if on_gpu >= 1:
        return "The seed's '/GPU:0' int32 multiply computed on a GPU."
    return (
        "The seed's '/GPU:0' int32 multiply ran on the CPU (track_gpu_calls_on_a_gpu = "
        f"{on_gpu:g}): its \"GPU\" loop timed the CPU a second time."
    )


def eager_fits(report):
    """{device: the fit row of its eager multiply}: the seed's dtype where that device
    ran it, else float32 (int32 never runs on a GPU outside XLA)."""
    eager = {(r["device"], r["dtype"]): r for r in report.fits if r["mode"] == SEED_MODE}
    rows = {}
    for device in dict.fromkeys(device for device, _ in eager):
        row = eager.get((device, SEED_DTYPE)) or eager.get((device, "float32"))
        if row is not None:
            rows[device] = row
    return rows


def fixed_cost(report):
    """What share of the seed's small op is fixed per-op cost, per device; the measured
    time at both ends of the size range, the fit only for the split between them."""
    texts = []
    for device, row in eager_fits(report).items():
        fit = row["fit"]
        small, large = row["smallest_size"], row["largest_size"]
        texts.append(
            f"on the {device.upper()} a {small}x{small} {row['dtype']} {SEED_MODE} multiply "
            f"takes {fmt.seconds(row['smallest_seconds'])}, of which "
            f"{fmt.seconds(fit.fixed)} ({fmt.share(row['fixed_share_of_smallest'])}) is "
            f"fixed per-op cost (intercept of t = a + b*bytes over the {fit.points} sizes it "
            f"fits within {fmt.share(fit.worst_residual)}); at {large}x{large} it moves "
            f"{fmt.bandwidth(row['largest_bandwidth'])} (measured)"
        )
    if not texts:
        return None
    return "Fixed cost: " + "; ".join(texts) + "."


def function_vs_eager(report):
    """How a per-op tf.function, and a loop moved into the graph, compare with eager."""
    texts = []
    for row in report.modes:
        if row["dtype"] != SEED_DTYPE or row["mode"] not in ("function", "graph_loop"):
            continue
        size = row["smallest_size"]
        faster = row["at_smallest"]
        if faster is None:
            continue
        if row["mode"] == "function":
            what = f"a tf.function called per op is {_times(faster, 'slower', 'faster')} than eager"
        else:
            what = (
                "the loop moved into one tf.function (graph_loop) is "
                f"{_times(faster, 'slower', 'faster')} per op than eager"
            )
        text = f"on the {row['device'].upper()} at {size}x{size} {SEED_DTYPE}, {what}"
        cross = row["eager_crossover"]
        if row["mode"] == "graph_loop" and cross is not None and cross.status == "at":
            text += f", until eager catches up at {cross.describe()}"
        texts.append(text)
    if not texts:
        return None
    return "tf.function: " + "; ".join(texts) + "."


def _times(estimate, slower_word, faster_word):
    """'12.7x slower (12.1-13.4)' for an estimate of how many times faster."""
    value = estimate.value
    if value >= 1:
        text = f"{value:.3g}x {faster_word}"
        if estimate.has_range:
            text += f" ({estimate.low:.3g}-{estimate.high:.3g})"
    else:
        text = f"{1 / value:.3g}x {slower_word}"
        if estimate.has_range:
            text += f" ({1 / estimate.high:.3g}-{1 / estimate.low:.3g})"
    return text


def _case(case):
    return f"{case['size']}x{case['size']} {case['dtype']} {case['mode']}"


def _speedup_range(cases):
    """'0.76x at 2x2 to 4.9x at 4096x4096' for cases of one mode, smallest to largest."""
    first, last = cases[0], cases[-1]
    text = f"{first['speedup'].value:.2g}x at {first['size']}x{first['size']}"
    if last is not first:
        text += f" to {last['speedup'].value:.2g}x at {last['size']}x{last['size']}"
    return text


def seed_vs_real(report):
    """The seed's reported speedup against what a GPU measured for its question."""
    seed = report.seed
    reported = seed.get("reported")
    if reported is None:
        return None
    text = f"The seed's method reports a {reported:.3g}x GPU speedup"
    real, case = seed.get("real"), seed.get("real_case")
    seeds_own = {"size": SEED_SIZE, "dtype": SEED_DTYPE, "mode": SEED_MODE}
    if real is not None and case == seeds_own:
        text += (f"; measured with waits and blocks of ops, the real speedup for its case "
                 f"({_case(case)}) is {fmt.ratio(real)}")
    elif real is not None:
        text += (f"; its own case ({_case(seeds_own)}) never computes on the GPU, so it has no "
                 f"GPU number; the nearest case a GPU ran, {_case(case)}, measured with waits "
                 f"and blocks of ops, gives {fmt.ratio(real)}")
    else:
        on_gpu = seed.get("gpu_calls_on_a_gpu")
        why = "no GPU results on this machine"
        if on_gpu is not None and on_gpu < 1:
            why += (", and its GPU calls ran on the CPU: it compares the CPU with itself, "
                    "so any distance from 1x is noise")
        return text + f"; the real speedup cannot be measured here ({why})."
    int32 = {}
    for case in seed.get("int32_on_gpu", []):
        if case["speedup"] is not None:
            int32.setdefault(case["mode"], []).append(case)
    if int32:
        text += "; int32 did compute on the GPU under " + ", ".join(
            f"{mode} ({_speedup_range(cases)})" for mode, cases in int32.items())
    return text + "."


def gpu_speedup(report):
    """The best measured speedup and where the GPU overtakes, for float32 eager."""
    if not report.gpu_measured:
        return None
    rows = [r for r in report.speedups if r["from_times"] is not None]
    if not rows:
        return None
    best = max(rows, key=lambda r: r["from_times"].value)
    text = (
        f"Best measured GPU speedup: {fmt.ratio(best['from_times'])} at "
        f"{best['size']}x{best['size']} {best['dtype']} {best['mode']}"
    )
    cross = next(
        (r["crossover"] for r in report.crossovers
         if (r["dtype"], r["mode"]) == ("float32", "eager") and r["crossover"] is not None),
        None,
    )
    if cross is not None:
        text += f"; float32 eager: the GPU is faster from {cross.describe()}"
    return text + "."


def bandwidth(report):
    texts = []
    for row in report.bandwidth:
        if row["mode"] != "eager" or row["measured"] is None:
            continue
        texts.append(
            f"on the {row['device'].upper()} an eager {row['size']}x{row['size']} float32 "
            f"multiply streams {fmt.bandwidth(row['measured'])}, "
            f"{fmt.share(row['measured_share'])} of {fmt.bandwidth(row['reference'])} "
            f"({row['reference_source']})"
        )
    if not texts:
        return None
    return "Bandwidth: " + "; ".join(texts) + "."


def stack_verdicts(report, run):
    found = [
        gpu_placement(report, run),
        seed_placement(report),
        seed_vs_real(report),
        fixed_cost(report),
        function_vs_eager(report),
        gpu_speedup(report),
        bandwidth(report),
    ]
    return [text for text in found if text]


def headline_numbers(report):
    """Named numbers worth following across stacks (None where not measured)."""
    seed = report.seed
    own_case = seed.get("real_case") == {"size": SEED_SIZE, "dtype": SEED_DTYPE, "mode": SEED_MODE}
    numbers = {
        "seed_reported_speedup": seed.get("reported"),
        # Only the seed's own case: other cases have headlines of their own below.
        "seed_real_speedup": seed["real"].value if seed.get("real") and own_case else None,
    }
    for device, row in eager_fits(report).items():
        numbers[f"{device}_fixed_cost_seconds"] = row["fit"].fixed
    for row in report.modes:
        if row["dtype"] == SEED_DTYPE and row["mode"] == "function" and row["at_smallest"]:
            numbers[f"{row['device']}_function_slowdown_vs_eager"] = 1 / row["at_smallest"].value
    for row in report.bandwidth:
        if row["mode"] == "eager" and row["measured_share"] is not None:
            numbers[f"{row['device']}_bandwidth_share"] = row["measured_share"]
    for row in report.speedups:
        if (row["dtype"], row["mode"]) == ("float32", "eager") and row["from_times"]:
            numbers[f"gpu_speedup_float32_eager_{row['size']}"] = row["from_times"].value
    return numbers
