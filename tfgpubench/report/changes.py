"""What changed from one release to the next: the version story the report begins with.

For each adjacent pair of stacks measured on a machine, every Multiply time
case is compared with asv's own rule (as `asv compare` applies it): a change
counts when the ratio is past the factor AND asv's significance test says the
two differ (Mann-Whitney on the samples where asv kept them, else its 99%
confidence intervals must not overlap). Changes are grouped by what moved:
per device and mode, the sizes where an op is mostly fixed cost (dispatch,
launch, the call) apart from those where it is mostly moving data. The GPU
speedup track is one value per case, so it is compared on the factor alone,
and says so.

Pure functions of asvresults.Run objects; asv's significance test is imported
from asv itself, so the verdicts match `asv compare` and `asv continuous`.
"""

import math
from dataclasses import dataclass, field

from asv import _stats as asv_stats  # asv's own test, as `asv compare` applies it

from ..names import CONTROL_DISTRIBUTIONS, MULTIPLY, SPEEDUP
from . import analysis

FACTOR = 1.1
FIXED_COST, DATA = "fixed cost per op", "moving data"
# An op is "mostly fixed cost" where the fit's intercept is at least this share of it.
FIXED_SHARE = 0.5


@dataclass
class CaseChange:
    params: dict
    ratio: analysis.Estimate  # after / before, with the range of the two 99% CIs
    changed: bool  # past the factor and significant


@dataclass
class GroupChange:
    """One thing that moved between two stacks: a device, a mode and a regime."""

    device: str
    mode: str
    regime: str  # FIXED_COST, DATA, or "speedup" for the GPU speedup track
    cases: list = field(default_factory=list)

    @property
    def changed(self):
        return [c for c in self.cases if c.changed]

    @property
    def ratio(self):
        """Geometric mean of after / before over the cases that changed (all, if none)."""
        chosen = self.changed or self.cases
        return math.exp(sum(math.log(c.ratio.value) for c in chosen) / len(chosen))

    @property
    def span(self):
        values = [c.ratio.value for c in (self.changed or self.cases)]
        return min(values), max(values)

    @property
    def what(self):
        if self.regime == "speedup":
            return f"GPU speedup, {self.mode}"
        return f"{self.device} {self.mode}, {self.regime}"

    def describe(self):
        low, high = self.span
        spread = f", {low:.2f}-{high:.2f}x" if len(self.changed) > 1 else ""
        untested = "; one value per case, no significance test" if self.regime == "speedup" else ""
        return (f"{self.what}: {self.ratio:.2f}x ({len(self.changed)} of {len(self.cases)} "
                f"cases changed{spread}{untested})")


def control_benchmarks(previous_versions, new_versions, distributions=CONTROL_DISTRIBUTIONS):
    """{benchmark: why it is a control} of the benchmarks whose code is the same on both
    stacks: their distribution at one version in both (versions: {distribution: version},
    as the installer records them in "also"). One not known on either side is no control."""
    controls = {}
    for benchmark, distribution in distributions.items():
        before, after = previous_versions.get(distribution), new_versions.get(distribution)
        if before is not None and before == after:
            controls[benchmark] = f"{distribution} {before} in both stacks"
    return controls


def recorded_versions(also):
    """The {distribution: version} of a record's "also" (what the installer found besides
    a stack's pins); {} for anything else, and versions that are not strings left out."""
    if not isinstance(also, dict):
        return {}
    return {str(name): version for name, version in also.items() if isinstance(version, str)}


def largest_change(ratios):
    """The largest of some after / before ratios, either way, as a factor >= 1; None for
    none."""
    factors = [max(ratio, 1 / ratio) for ratio in ratios]
    return max(factors) if factors else None


@dataclass
class Controls:
    """The controls of a step: code the same in both runs, compared by the same rule. What
    changed there is the machine's speed between the two runs."""

    why: str  # "numpy 2.4.6 in both stacks"
    cases: list = field(default_factory=list)  # CaseChange

    @property
    def changed(self):
        return [c for c in self.cases if c.changed]

    def drift(self):
        """The largest change among the cases that changed, as a factor >= 1, or None."""
        return largest_change(c.ratio.value for c in self.changed)

    def describe(self):
        if not self.changed:
            return f"controls ({self.why}): none of {len(self.cases)} cases moved"
        return (f"controls ({self.why}): {len(self.changed)} of {len(self.cases)} cases moved, "
                f"up to x{self.drift():.2f}, the machine's own drift")


@dataclass
class StepChange:
    """Everything that changed from one stack to the next on one machine."""

    machine: str
    before: str
    after: str
    groups: list = field(default_factory=list)
    controls: Controls = None  # where the two runs have code in common

    @property
    def moved(self):
        """The groups where at least one case changed, biggest change first."""
        moved = [g for g in self.groups if g.changed]
        return sorted(moved, key=lambda g: -abs(math.log(g.ratio)))

    @property
    def compared(self):
        return sum(len(g.cases) for g in self.groups)

    def describe(self):
        head = f"{self.before} -> {self.after}"
        controls = f"; {self.controls.describe()}" if self.controls else ""
        if not self.moved:
            return f"{head}: nothing beyond noise ({self.compared} cases compared){controls}"
        return f"{head}: " + "; ".join(g.describe() for g in self.moved) + controls


def compare_cases(before, after, factor=FACTOR):
    """CaseChange of two Measurements of one case, or None unless both were measured.

    asv's rule: the ratio past the factor either way, and, where both have a
    confidence interval from more than one sample, asv's is_different.
    """
    estimate = analysis.ratio(after, before)
    if estimate is None:
        return None
    past = estimate.value > factor or estimate.value < 1 / factor
    a, b = before.stats(), after.stats()
    if past and a and b and a["repeat"] != 1 and b["repeat"] != 1:
        past = asv_stats.is_different(list(before.samples) or None, list(after.samples) or None,
                                      a, b)
    return CaseChange(dict(after.params), estimate, past)


def regime(fits, device, dtype, mode, size, seconds):
    """FIXED_COST where the fitted intercept is most of the op's time, else DATA."""
    fit = fits.get((device, dtype, mode))
    if fit is None or seconds <= 0:
        return DATA
    return FIXED_COST if fit.fixed / seconds >= FIXED_SHARE else DATA


def step_change(machine, before, after, before_fits, factor=FACTOR):
    """The StepChange from run `before` to run `after` (asvresults.Run) on one machine.

    before_fits: {(device, dtype, mode): LinearFit} of the earlier stack, which
    decides whether a size is fixed-cost or data bound.
    """
    groups = {}
    for old in before.benchmark(MULTIPLY):
        p = old.params
        change = _compared(old, after.get(MULTIPLY, **p), factor)
        if change is None:
            continue
        kind = regime(before_fits, p["device"], p["dtype"], p["mode"], p["size"], old.value)
        key = (p["device"], p["mode"], kind)
        groups.setdefault(key, GroupChange(*key)).cases.append(change)
    for old in before.benchmark(SPEEDUP):
        change = _compared(old, after.get(SPEEDUP, **old.params), factor)
        if change is not None:
            key = ("gpu", old.params["mode"], "speedup")
            groups.setdefault(key, GroupChange(*key)).cases.append(change)
    return StepChange(machine, before.label, after.label, list(groups.values()),
                      step_controls(before, after, factor))


def step_controls(before, after, factor=FACTOR):
    """The Controls of two runs (their recorded versions decide which), or None."""
    found = control_benchmarks(before.also, after.also)
    changes = (_compared(old, after.get(benchmark, **old.params), factor)
               for benchmark in found for old in before.benchmark(benchmark))
    cases = [change for change in changes if change is not None]
    return Controls("; ".join(found.values()), cases) if cases else None


def _compared(old, new, factor):
    """compare_cases where the case has a measurement in the later run, else None."""
    return compare_cases(old, new, factor) if new is not None else None
