"""From loaded runs to the report's tables, one StackReport per (machine, stack, env).

Everything here is computed from the Run's measurements; nothing runs a
benchmark or reads a file.
"""

from dataclasses import dataclass, field

from ..names import (
    BANDWIDTH,
    BASELINE_MODE,
    IN_PLACE_MODES,
    MULTIPLY,
    SEED_DTYPE,
    SEED_MODE,
    SEED_ON_GPU,
    SEED_SIZE,
    SEED_SPEEDUP,
    SPEEDUP,
    WAIT,
)
from ..suite import grid
from . import analysis, changes, comparison, references
from .cases import axis, gpu_reasons, gpu_speedup, in_suite_order
from .verdicts import headline_numbers, stack_verdicts

COMPARATORS_ONLY_NOTE = (
    "no TensorFlow results in this run: the comparators (PyTorch, JAX, numpy) alone"
)
OLDER_TENSORFLOW_NOTE = (
    "no TensorFlow results shown for this run: they were recorded by an older version of "
    "the suite's benchmarks and are left out (see the end of the report); "
    "`python -m tfgpubench run` on that machine measures them again"
)
NO_GPU_NOTE = (
    "no GPU results: every gpu combination was skipped on this machine "
    "(for the reason, run `python -m tfgpubench doctor` there)"
)


def no_gpu_note(reasons):
    """The banner for a run without GPU results, quoting the recorded reasons if any."""
    distinct = sorted(set(reasons.values()))
    if not distinct:
        return NO_GPU_NOTE
    return "no GPU results: every gpu combination was skipped: " + "; ".join(distinct)


def bytes_moved(size, dtype):
    """The suite's own count (benchmarks/grid.py); None for a dtype it does not know
    (results from a suite with other dtypes)."""
    try:
        return grid.bytes_moved(size, dtype)
    except KeyError:
        return None


@dataclass
class StackReport:
    machine: str
    label: str
    commit_hash: str
    env_name: str
    path: str
    installed: dict
    gpu_measured: bool
    gpu_note: str = ""
    speedups: list = field(default_factory=list)
    crossovers: list = field(default_factory=list)
    fits: list = field(default_factory=list)
    bandwidth: list = field(default_factory=list)
    modes: list = field(default_factory=list)
    waits: list = field(default_factory=list)
    gpu_checks: list = field(default_factory=list)
    seed: dict = field(default_factory=dict)
    verdicts: list = field(default_factory=list)
    headline: dict = field(default_factory=dict)
    # TensorFlow against PyTorch, JAX and numpy (comparison.Comparison), or None.
    comparison: object = None
    # False for a run of the comparators alone: TensorFlow's tables would be empty.
    has_tensorflow: bool = True


def _modes(run):
    return in_suite_order(run, "mode")


def _dtypes(run):
    return in_suite_order(run, "dtype")


def speedup_rows(run):
    """GPU/CPU speedup per size, dtype and mode: measured side by side, and from the timings."""
    rows = []
    for size in axis(run, MULTIPLY, "size"):
        for dtype in _dtypes(run):
            for mode in _modes(run):
                side_by_side = run.get(SPEEDUP, size=size, dtype=dtype, mode=mode)
                measured = (
                    analysis.Estimate(side_by_side.value)
                    if side_by_side is not None and side_by_side.measured
                    else None
                )
                from_times = analysis.ratio(
                    run.get(MULTIPLY, device="cpu", size=size, dtype=dtype, mode=mode),
                    run.get(MULTIPLY, device="gpu", size=size, dtype=dtype, mode=mode),
                )
                rows.append(
                    {"size": size, "dtype": dtype, "mode": mode,
                     "measured": measured, "from_times": from_times}
                )
    return rows


def crossover_rows(run, candidate="gpu", baseline="cpu"):
    """Per dtype and mode, the size from which `candidate` is faster than `baseline`."""
    rows = []
    sizes = axis(run, MULTIPLY, "size")
    for dtype in _dtypes(run):
        for mode in _modes(run):
            estimates = [
                analysis.ratio(
                    run.get(MULTIPLY, device=baseline, size=s, dtype=dtype, mode=mode),
                    run.get(MULTIPLY, device=candidate, size=s, dtype=dtype, mode=mode),
                )
                for s in sizes
            ]
            rows.append(
                {"dtype": dtype, "mode": mode,
                 "crossover": analysis.crossover(sizes, estimates)}
            )
    return rows


def fit_rows(run):
    """t = a + b*bytes per device, dtype and mode, over the sizes where it holds; with the
    measured figures at both ends (the verdicts quote those, not the fit)."""
    rows = []
    for device in axis(run, MULTIPLY, "device"):
        for dtype in _dtypes(run):
            for mode in _modes(run):
                measured = [
                    m for m in run.select(MULTIPLY, device=device, dtype=dtype, mode=mode)
                    if m.measured
                ]
                if bytes_moved(1, dtype) is None:
                    continue
                fit = analysis.fit_time_vs_bytes(
                    [bytes_moved(m.params["size"], dtype) for m in measured],
                    [m.value for m in measured],
                )
                if fit is None:
                    continue
                smallest = min(measured, key=lambda m: m.params["size"])
                largest = max(measured, key=lambda m: m.params["size"])
                rows.append({
                    "device": device, "dtype": dtype, "mode": mode, "fit": fit,
                    # The fit's points are in ascending bytes: ascending sizes.
                    "sizes": sorted(m.params["size"] for m in measured),
                    "smallest_size": smallest.params["size"],
                    "smallest_seconds": smallest.value,
                    "fixed_share_of_smallest": fit.fixed_share(smallest.value),
                    "largest_size": largest.params["size"],
                    "largest_seconds": largest.value,
                    "largest_bandwidth": bytes_moved(largest.params["size"], dtype)
                    / largest.value,
                })
    return rows


def bandwidth_rows(run, fits, machine_info):
    """Achieved float32 bandwidth per device and mode, as a share of the device's reference."""
    rows = []
    refs = {
        "cpu": references.cpu_reference(run),
        "gpu": references.gpu_reference(run, machine_info),
    }
    sizes = axis(run, BANDWIDTH, "size")
    largest = sizes[-1] if sizes else None
    for device in axis(run, MULTIPLY, "device"):
        for mode in _modes(run):
            fit_row = next(
                (r for r in fits
                 if (r["device"], r["dtype"], r["mode"]) == (device, "float32", mode)),
                None,
            )
            fit = fit_row["fit"] if fit_row else None
            at_largest = run.get(BANDWIDTH, device=device, size=largest, mode=mode)
            measured = at_largest.value * 1e9 if at_largest and at_largest.measured else None
            fitted = fit.bandwidth if fit else None
            if measured is None and fitted is None:
                continue
            reference = refs.get(device)
            reference_bps = reference.bytes_per_second if reference else None
            measured_share = analysis.share(measured, reference_bps)
            fitted_share = analysis.share(fitted, reference_bps)
            rows.append({
                "device": device, "mode": mode, "size": largest,
                "measured": measured, "fitted": fitted,
                "reference": reference_bps,
                "reference_source": reference.source if reference else "no reference recorded",
                # The same kernel written over its input, at the case's size (or None).
                "in_place_reference": reference.in_place_at(largest) if reference else None,
                "measured_share": measured_share,
                "fitted_share": fitted_share,
                "note": above_reference_note(measured_share, largest, reference, mode),
                "fit_note": fit_above_reference_note(fitted_share, fit_row, reference),
            })
    return rows


def above_reference_note(share, size, reference, mode=None):
    """Why a measured bandwidth of `mode` reads above its reference, or "" where it does not."""
    if share is None or share <= 1 or reference is None:
        return ""
    if not reference.ceiling:
        return "above: the reference runs on one thread, TensorFlow's kernels on every core"
    measured = share * reference.bytes_per_second
    same = reference.at(size) if size != reference.size else None
    # The reference at the case's own size moves the same bytes through the same caches:
    # it tells whether the caches explain the excess, on this machine.
    if same and measured <= same:
        return (f"above: at {size}x{size} part of the data stays in the caches: the "
                f"reference itself read {same / 1e9:.3g} GB/s at that size "
                f"({measured / same:.0%} of it)")
    # A mode that writes each product over the one before skips the read a CPU makes of
    # each line of a new array before writing it: the reference written in place moves
    # the bytes the same way.
    in_place = reference.in_place_at(size) if mode in IN_PLACE_MODES else None
    if in_place and measured <= in_place:
        return (f"above: {mode} writes each product over the one before, which spares the "
                "CPU the read of each line of a new array before writing it; STREAM scale "
                f"written over its input read {in_place / 1e9:.3g} GB/s at {size}x{size} "
                f"in the same run ({measured / in_place:.0%} of it)")
    if same:
        return (f"above the all-core reference at {size}x{size} too ({same / 1e9:.3g} GB/s, "
                f"{measured / same:.0%}), so not the caches alone; whether the two were timed "
                "at moments of different speed, or the op moved fewer bytes than counted, "
                "this run cannot tell (`selfcheck` shows how far this machine's speed moves)")
    if reference.size and size and size < reference.size:
        return (f"above: at {size}x{size} part of the data may stay in the caches, which the "
                f"reference at {reference.size}x{reference.size} does not fit")
    return "above the all-core reference: the two were measured under different load"


def fit_above_reference_note(share, fit_row, reference):
    """Why a fitted bandwidth (1/b) reads above the reference, where the fit says so: it
    left out the largest sizes it was offered, so its slope comes from smaller ones
    (on a CPU, often those a cache can hold); else ""."""
    if share is None or share <= 1 or fit_row is None or reference is None:
        return ""
    # The fit's points are in ascending bytes: ascending sizes (fit_rows).
    kept = [size for size, (_, _, used) in zip(fit_row["sizes"], fit_row["fit"].residuals)
            if used]
    largest = max(fit_row["sizes"])
    if not kept or max(kept) == largest:
        return ""
    return (f"fit 1/b above: its slope comes from sizes up to {max(kept)}x{max(kept)} "
            f"({bytes_moved(max(kept), 'float32') / 2**20:.3g} MiB per op); the larger ones "
            f"measured, up to {largest}x{largest} "
            f"({bytes_moved(largest, 'float32') / 2**20:.3g} MiB per op), were left out of "
            "the fit (their residuals above)")


def mode_rows(run):
    """Each mode against eager on the same device: how many times faster, and where that flips."""
    rows = []
    sizes = axis(run, MULTIPLY, "size")
    for device in axis(run, MULTIPLY, "device"):
        for dtype in _dtypes(run):
            for mode in _modes(run):
                if mode == BASELINE_MODE:
                    continue
                estimates = [
                    analysis.ratio(
                        run.get(MULTIPLY, device=device, size=s, dtype=dtype, mode=BASELINE_MODE),
                        run.get(MULTIPLY, device=device, size=s, dtype=dtype, mode=mode),
                    )
                    for s in sizes
                ]
                points = [(s, e) for s, e in zip(sizes, estimates) if e is not None]
                if not points:
                    continue
                rows.append({
                    "device": device, "dtype": dtype, "mode": mode,
                    "smallest_size": points[0][0], "at_smallest": points[0][1],
                    "largest_size": points[-1][0], "at_largest": points[-1][1],
                    "points": points,
                    # From which size the mode beats eager, and from which eager
                    # beats the mode (graph_loop wins small and loses large).
                    "crossover": analysis.crossover(sizes, estimates),
                    "eager_crossover": analysis.crossover(
                        sizes, [analysis.invert(e) for e in estimates]
                    ),
                })
    return rows


def wait_rows(run):
    return [
        {"device": m.params.get("device"), "dtype": m.params.get("dtype"), "seconds": m.value}
        for m in run.benchmark(WAIT)
        if m.measured
    ]


def seed_summary(run):
    """What the seed's method reported, where its GPU calls ran, and what a GPU measured
    for the seed's question: its own case (2x2 int32 eager) where a GPU ran it; else the
    same 2x2 multiply in the nearest case a GPU did run (float32 eager first), saying
    which; and every int32 case that really ran on a GPU (XLA on CUDA, for one)."""
    reported = run.get(SEED_SPEEDUP)
    on_gpu = run.get(SEED_ON_GPU)
    other_modes = [m for m in in_suite_order(run, "mode") if m != SEED_MODE]
    candidates = [(SEED_DTYPE, SEED_MODE), ("float32", SEED_MODE)] + [
        (dtype, mode) for dtype in (SEED_DTYPE, "float32") for mode in other_modes
    ]
    real, case = None, None
    for dtype, mode in candidates:
        real = gpu_speedup(run, SEED_SIZE, dtype, mode)
        if real is not None:
            case = {"size": SEED_SIZE, "dtype": dtype, "mode": mode}
            break
    int32_on_gpu = [
        {"size": m.params["size"], "mode": m.params["mode"],
         "speedup": gpu_speedup(run, m.params["size"], SEED_DTYPE, m.params["mode"])}
        for m in run.select(MULTIPLY, device="gpu", dtype=SEED_DTYPE) if m.measured
    ]
    return {
        "reported": reported.value if reported and reported.measured else None,
        "gpu_calls_on_a_gpu": on_gpu.value if on_gpu and on_gpu.measured else None,
        "real": real,
        "real_case": case,
        "int32_on_gpu": int32_on_gpu,
    }


def build_stack_report(run, machine_info=None):
    gpu_measured = any(
        m.measured for m in run.benchmark(MULTIPLY) if m.params.get("device") == "gpu"
    )
    fits = fit_rows(run)
    tensorflow = comparison.has_tensorflow(run)
    gpu_note = "" if gpu_measured else no_gpu_note(gpu_reasons(run))
    if not tensorflow:
        gpu_note = (OLDER_TENSORFLOW_NOTE if MULTIPLY in run.older_versions
                    else COMPARATORS_ONLY_NOTE)
    report = StackReport(
        machine=run.machine, label=run.label, commit_hash=run.commit_hash,
        env_name=run.env_name, path=run.path, installed=dict(run.installed),
        gpu_measured=gpu_measured,
        gpu_note=gpu_note,
        has_tensorflow=tensorflow,
        speedups=speedup_rows(run) if gpu_measured else [],
        crossovers=crossover_rows(run) if gpu_measured else [],
        fits=fits,
        bandwidth=bandwidth_rows(run, fits, machine_info),
        modes=mode_rows(run),
        waits=wait_rows(run),
        gpu_checks=list(run.gpu_checks),
        seed=seed_summary(run),
    )
    report.verdicts = stack_verdicts(report, run) if tensorflow else []
    report.headline = headline_numbers(report) if tensorflow else {}
    return report


def with_comparison(report, run, runs):
    """Add the comparison with PyTorch, JAX and numpy (from `run` or the newest comparator
    run of its machine among `runs`) to a StackReport: its tables, verdicts, headline."""
    report.comparison = comparison.compare(run, comparison.partner_runs(run, runs))
    if report.comparison is not None:
        report.verdicts += report.comparison.verdicts
        report.headline.update(report.comparison.headline)
    return report


def release_changes(machine, runs, stacks):
    """{"steps": [StepChange per adjacent pair of stacks], "overall": first -> last or None}.

    runs and stacks in stack order; the earlier stack's fits decide, per size,
    whether an op is fixed-cost or data bound.
    """
    fits = [{(r["device"], r["dtype"], r["mode"]): r["fit"] for r in stack.fits}
            for stack in stacks]
    steps = [changes.step_change(machine, runs[i], runs[i + 1], fits[i])
             for i in range(len(runs) - 1)]
    overall = (changes.step_change(machine, runs[0], runs[-1], fits[0])
               if len(runs) > 2 else None)
    return {"steps": steps, "overall": overall}


def build_report(result_set):
    """Every run's StackReport, grouped by machine, what changed from stack to stack,
    and the problems met on the way."""
    machines, story = {}, {}
    for machine, runs in result_set.by_machine().items():
        info = result_set.machines.get(machine, {})
        labels = [r.label for r in runs]
        stacks = []
        for run in runs:
            if labels.count(run.label) > 1:
                # Two environments for one commit: keep them apart by name.
                run.label = f"{run.label} [{run.env_name}]"
            stacks.append(with_comparison(build_stack_report(run, info), run, runs))
        machines[machine] = stacks
        # The story is TensorFlow's: a run of the comparators alone (a stack of their
        # own chain, or an installation without TensorFlow) has no step in it.
        tensorflow = [i for i, run in enumerate(runs) if run.benchmark(MULTIPLY)]
        story[machine] = release_changes(machine, [runs[i] for i in tensorflow],
                                         [stacks[i] for i in tensorflow])
    return {"machines": machines, "changes": story, "problems": list(result_set.problems)}

