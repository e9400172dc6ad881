"""Is it TensorFlow or the device? TensorFlow's multiply against the same multiply in
PyTorch, JAX and numpy, on the same machine. Pure functions of asvresults.Runs.

Frameworks name devices and modes their own way (TensorFlow's and JAX's "gpu" is
PyTorch's "cuda" or "mps"; JAX's "jit" is TensorFlow's "function"): rows compare by
kind (grid.DEVICE_KIND, grid.MODE_KIND), and each row says which case was fastest.

Each comparator's results come from the same run as TensorFlow's where its environment
had that framework (numpy is in every TensorFlow environment); otherwise from the newest
run on the same machine that measured it (the comparators' own stack), named as the
partner.
"""

from dataclasses import dataclass, field

from .. import format as fmt
from ..names import FRAMEWORK_MULTIPLY, TENSORFLOW
from ..suite import grid
from . import analysis

COMPARATORS = [name for name in FRAMEWORK_MULTIPLY if name != TENSORFLOW]
# The verdicts compare float32: every framework runs it on every device (TensorFlow's
# int32 multiply never computes on a GPU).
VERDICT_DTYPE = "float32"
VERDICT_MODE = "eager"
# TensorFlow's fixed cost this many times the fastest comparator's is TensorFlow's own.
OWN_COST_FACTOR = 2.0


@dataclass
class Comparison:
    """The comparison of one run: rows, verdicts and the comparator run they used."""

    partner: str = ""  # label of the run the comparators' numbers came from
    times: list = field(default_factory=list)
    fits: list = field(default_factory=list)
    crossovers: list = field(default_factory=list)
    verdicts: list = field(default_factory=list)
    headline: dict = field(default_factory=dict)


def measured(run, framework):
    return any(m.measured for m in run.benchmark(FRAMEWORK_MULTIPLY[framework]))


def has_comparators(run):
    return any(measured(run, name) for name in COMPARATORS)


def has_tensorflow(run):
    return any(m.measured for m in run.benchmark(FRAMEWORK_MULTIPLY[TENSORFLOW]))


def partner_runs(run, runs):
    """{comparator: the run its numbers come from}, for every comparator measured on
    `run`'s machine: `run` itself where it measured that framework (numpy is in every
    TensorFlow environment), else the newest run of the same machine that did (the
    comparators' own stack). Empty when there is none."""
    found = {}
    for name in COMPARATORS:
        if measured(run, name):
            found[name] = run
            continue
        candidates = [r for r in runs if r.machine == run.machine and measured(r, name)]
        if candidates:
            found[name] = max(candidates, key=lambda r: r.date)
    return found


def measured_cases(run, framework):
    """{(device kind, dtype, mode kind): {(device, mode): {size: Measurement}}}."""
    cases = {}
    for m in run.benchmark(FRAMEWORK_MULTIPLY[framework]):
        device, mode = m.params.get("device"), m.params.get("mode")
        if not m.measured or device not in grid.DEVICE_KIND or mode not in grid.MODE_KIND:
            continue
        key = (grid.DEVICE_KIND[device], m.params["dtype"], grid.MODE_KIND[mode])
        cases.setdefault(key, {}).setdefault((device, mode), {})[m.params["size"]] = m
    return cases


def fastest(by_case, size):
    """(case, Measurement) of the fastest case at `size`, or None."""
    found = [(case, sizes[size]) for case, sizes in by_case.items() if size in sizes]
    return min(found, key=lambda item: item[1].value) if found else None


def _case_text(framework, case):
    device, mode = case
    return f"{framework} {device} {mode}"


def time_rows(cases):
    """Per device kind, dtype, mode kind and size: TensorFlow's fastest case against the
    fastest comparator's, and each framework's fastest time.

    cases: {framework: measured_cases(...)}.
    """
    keys = sorted({key for by_key in cases.values() for key in by_key},
                  key=lambda k: (k[0], grid.DTYPES.index(k[1]) if k[1] in grid.DTYPES else 99,
                                 list(dict.fromkeys(grid.MODE_KIND.values())).index(k[2])))
    rows = []
    for key in keys:
        device, dtype, mode = key
        sizes = sorted({s for by_key in cases.values() for case in by_key.get(key, {}).values()
                        for s in case})
        for size in sizes:
            best = {name: fastest(by_key.get(key, {}), size) for name, by_key in cases.items()}
            best = {name: found for name, found in best.items() if found}
            comparators = {n: f for n, f in best.items() if n != TENSORFLOW}
            if not comparators:
                continue
            winner = min(comparators, key=lambda n: comparators[n][1].value)
            tf = best.get(TENSORFLOW)
            rows.append({
                "device": device, "dtype": dtype, "mode": mode, "size": size,
                **{name: found[1].value for name, found in best.items()},
                "fastest": _case_text(winner, comparators[winner][0]),
                "tensorflow_case": _case_text(TENSORFLOW, tf[0]) if tf else None,
                # How many times TensorFlow's time the fastest comparator's is.
                "tensorflow_vs_fastest": analysis.ratio(tf[1], comparators[winner][1])
                if tf else None,
            })
    return rows


def fit_rows(cases):
    """t = a + b*bytes for every framework, device and mode measured at 3 sizes or more."""
    rows = []
    for framework, by_key in cases.items():
        for (kind, dtype, mode_kind), by_case in by_key.items():
            for (device, mode), sizes in by_case.items():
                points = sorted(sizes.items())
                fit = analysis.fit_time_vs_bytes(
                    [grid.bytes_moved(s, dtype) for s, _ in points], [m.value for _, m in points])
                if fit is None:
                    continue
                smallest, m = points[0]
                largest, at_largest = points[-1]
                rows.append({
                    "framework": framework, "device": kind, "dtype": dtype, "mode": mode_kind,
                    "case": f"{device} {mode}", "fit": fit, "smallest_size": smallest,
                    "smallest_seconds": m.value,
                    "fixed_share_of_smallest": fit.fixed_share(m.value),
                    # Beside 1/b, what the largest size did move: on a GPU, which runs one
                    # op while the next is launched, 1/b can exceed any size's figure.
                    "largest_size": largest,
                    "largest_bandwidth": grid.bytes_moved(largest, dtype) / at_largest.value,
                })
    return rows


def crossover_rows(cases):
    """Per framework, dtype and mode: the size from which its GPU beats its CPU."""
    rows = []
    for framework, by_key in cases.items():
        for (kind, dtype, mode_kind), by_case in by_key.items():
            if kind != "gpu":
                continue
            for (device, mode), gpu in by_case.items():
                cpu = by_key.get(("cpu", dtype, mode_kind), {}).get(("cpu", mode))
                if not cpu:
                    continue
                sizes = sorted(set(gpu) & set(cpu))
                found = analysis.crossover(
                    sizes, [analysis.ratio(cpu[s], gpu[s]) for s in sizes])
                if found is not None:
                    rows.append({"framework": framework, "device": kind, "dtype": dtype,
                                 "mode": mode_kind, "case": f"{device} {mode}",
                                 "crossover": found})
    return rows


# --- the words -------------------------------------------------------------------------


def _eager_fits(fits, device):
    """{framework: fit row} of the eager float32 multiply on a device kind."""
    return {r["framework"]: r for r in fits
            if (r["device"], r["dtype"], r["mode"]) == (device, VERDICT_DTYPE, VERDICT_MODE)}


def fixed_cost_verdict(fits, device):
    """Whose is the fixed cost of a small eager op on `device`: TensorFlow's or anyone's."""
    rows = _eager_fits(fits, device)
    comparators = {n: r for n, r in rows.items() if n != TENSORFLOW}
    if not comparators:
        return None
    place = f"this {device.upper()}"
    parts = [f"{n} {fmt.seconds(r['fit'].fixed)} ({fmt.share(r['fixed_share_of_smallest'])} of "
             f"its {fmt.seconds(r['smallest_seconds'])} at {fmt.side(r['smallest_size'])})"
             for n, r in comparators.items()]
    cheapest = min(comparators, key=lambda n: comparators[n]["fit"].fixed)
    tf = rows.get(TENSORFLOW)
    lead = (f"Fixed cost per {VERDICT_DTYPE} {VERDICT_MODE} multiply on {place} (intercept of "
            "t = a + b*bytes): ")
    if tf is None:
        return (lead + "; ".join(parts) + f"; no TensorFlow results to set against them. "
                f"The cheapest framework, {cheapest}, is the floor for this device.")
    tf_fixed = tf["fit"].fixed
    times = [f"{tf_fixed / r['fit'].fixed:.3g}x {n}'s" for n, r in comparators.items()
             if r["fit"].fixed > 0]
    text = (f"Is it TensorFlow or {place}? TensorFlow's eager dispatch costs "
            f"{fmt.seconds(tf_fixed)} per op, " + ", ".join(times) + ". " + lead
            + "; ".join(parts) + ".")
    factor = tf_fixed / comparators[cheapest]["fit"].fixed if comparators[cheapest]["fit"].fixed \
        > 0 else None
    if factor is not None and factor >= OWN_COST_FACTOR:
        text += (f" The same multiply costs {cheapest} {factor:.3g}x less on the same device: "
                 "most of TensorFlow's fixed cost is TensorFlow's own, not the device's.")
    elif factor is not None:
        text += (f" {cheapest} pays nearly as much ({factor:.3g}x less): the cost is the "
                 "device's and Python's, not TensorFlow's alone.")
    return text


def crossover_verdict(crossovers):
    """Where each framework's GPU overtakes its CPU, for the float32 eager multiply."""
    rows = [r for r in crossovers if (r["dtype"], r["mode"]) == (VERDICT_DTYPE, VERDICT_MODE)]
    if not rows:
        return None
    parts = [f"{r['crossover'].describe()} in {r['framework']} ({r['case'].split()[0]})"
             for r in rows]
    if not any(r["framework"] == TENSORFLOW for r in rows):
        parts.append("not measured in TensorFlow (no TensorFlow GPU results here)")
    return f"The GPU's crossover ({VERDICT_DTYPE} {VERDICT_MODE}): " + "; ".join(parts) + "."


def compare(run, partners):
    """The Comparison of `run` with the comparators, each from its run in `partners`
    ({comparator: run}, as partner_runs gives); None without any."""
    if not partners:
        return None
    cases = {TENSORFLOW: measured_cases(run, TENSORFLOW)}
    for name, partner in partners.items():
        cases[name] = measured_cases(partner, name)
    fits = fit_rows(cases)
    crossovers = crossover_rows(cases)
    verdicts = [fixed_cost_verdict(fits, device) for device in ("cpu", "gpu")]
    verdicts.append(crossover_verdict(crossovers))
    elsewhere = {}
    for name, partner in partners.items():
        if partner is not run:
            elsewhere.setdefault(partner.label, []).append(name)
    for label, names in elsewhere.items():
        verdicts.append(f"The {' and '.join(names)} numbers come from {label} on the same "
                        "machine.")
    headline = {}
    for device in ("cpu", "gpu"):
        rows = _eager_fits(fits, device)
        others = [r["fit"].fixed for n, r in rows.items() if n != TENSORFLOW]
        if TENSORFLOW in rows and others and min(others) > 0:
            headline[f"{device}_eager_fixed_cost_vs_cheapest_comparator"] = (
                rows[TENSORFLOW]["fit"].fixed / min(others))
    return Comparison(
        partner=", ".join(elsewhere),
        times=time_rows(cases), fits=fits, crossovers=crossovers,
        verdicts=[v for v in verdicts if v], headline=headline,
    )
