"""Reading one run's cases: parameter axes in the suite's order, the GPU self-check's
reasons, and the GPU's speedup for one case. Pure functions of an asvresults.Run."""

from ..names import MULTIPLY, SPEEDUP
from . import analysis


def axis(run, name, key):
    """The sorted values of one parameter (sizes ascending, devices 'cpu' before 'gpu')."""
    return sorted({m.params[key] for m in run.benchmark(name) if key in m.params})


def in_suite_order(run, key, benchmark=MULTIPLY):
    """Values of one parameter in the order the suite declares them (asv stores
    combinations in that order, so: first appearance in the results)."""
    seen = []
    for m in run.benchmark(benchmark):
        value = m.params.get(key)
        if value not in seen:
            seen.append(value)
    return seen


def gpu_reasons(run):
    """{(dtype, mode): why a gpu multiply was not measured} from the recorded GPU
    self-check; "*" stands for every mode in records older than it."""
    return {
        (dtype, mode): reason
        for dtype, by_mode in run.skip_reasons.get("gpu", {}).items()
        for mode, reason in by_mode.items()
        if reason
    }


def gpu_speedup(run, size, dtype, mode):
    """The GPU's speedup for one case: measured side by side where it was, else the
    ratio of the two timings (with the range asv's confidence intervals allow); None
    unless both were measured."""
    side_by_side = run.get(SPEEDUP, size=size, dtype=dtype, mode=mode)
    if side_by_side is not None and side_by_side.measured:
        return analysis.Estimate(side_by_side.value)
    return analysis.ratio(
        run.get(MULTIPLY, device="cpu", size=size, dtype=dtype, mode=mode),
        run.get(MULTIPLY, device="gpu", size=size, dtype=dtype, mode=mode),
    )
