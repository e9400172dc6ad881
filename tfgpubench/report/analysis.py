"""The report's numbers, as pure functions of measurements: no I/O, no asv, no plotting.

Ratios carry asv's own uncertainty: asv records, for every time_ benchmark,
a 99% confidence interval of the median (stats ci_99_a, ci_99_b), so a ratio
of two timings gets the range from the worst and best pairing of the two
intervals. track_ benchmarks record one value and give ratios without a range.
"""

import math
from dataclasses import dataclass

import numpy as np

from ..format import side


@dataclass(frozen=True)
class Estimate:
    """A value with the range asv's confidence intervals allow (None where it recorded none)."""

    value: float
    low: float = None
    high: float = None

    @property
    def has_range(self):
        return self.low is not None and self.high is not None


def ratio(numerator, denominator):
    """numerator / denominator for two Measurements, with the range their 99% confidence
    intervals allow.

    Returns None unless both were measured. The range pairs the numerator's
    lower bound with the denominator's upper one, and the other way round.
    """
    if numerator is None or denominator is None:
        return None
    if not (numerator.measured and denominator.measured) or denominator.value <= 0:
        return None
    low = high = None
    bounds = (numerator.ci_low, numerator.ci_high, denominator.ci_low, denominator.ci_high)
    if None not in bounds and all(math.isfinite(b) and b > 0 for b in bounds):
        low = numerator.ci_low / denominator.ci_high
        high = numerator.ci_high / denominator.ci_low
    return Estimate(numerator.value / denominator.value, low, high)


def invert(estimate):
    """The Estimate of 1/x: "how many times faster" seen from the other side."""
    if estimate is None or estimate.value <= 0:
        return None
    if estimate.has_range and estimate.low > 0:
        return Estimate(1 / estimate.value, 1 / estimate.high, 1 / estimate.low)
    return Estimate(1 / estimate.value)


# --- crossover ----------------------------------------------------------------

AT, ALWAYS, NEVER = "at", "always", "never"


def _crossing(sizes, ratios):
    """(status, size) for one curve of "how many times faster" against size.

    The crossover is the size from which the candidate stays faster (ratio
    >= 1) up to the largest measured size, interpolated linearly in
    log(size)-log(ratio) between the last slower and the first faster size.
    """
    if ratios[-1] < 1:
        return NEVER, None
    slower = [i for i, r in enumerate(ratios) if r < 1]
    if not slower:
        return ALWAYS, sizes[0]
    i = slower[-1]
    x0, x1 = math.log(sizes[i]), math.log(sizes[i + 1])
    y0, y1 = math.log(ratios[i]), math.log(ratios[i + 1])
    t = -y0 / (y1 - y0) if y1 != y0 else 0.5
    return AT, math.exp(x0 + t * (x1 - x0))


@dataclass(frozen=True)
class Crossover:
    """Where a candidate becomes faster than a baseline, along the size axis.

    status: "at" (crosses at `size`), "always" (faster at every measured
    size) or "never" (not faster at the largest measured size). low/high:
    the range of crossing sizes asv's 99% confidence intervals allow; None where that bound
    lies outside the measured sizes (below the smallest or beyond the
    largest), or where no interval was recorded (then `has_range` is False).
    """

    status: str
    size: float
    low: float
    high: float
    smallest: float
    largest: float
    has_range: bool = False

    def describe(self):
        span = f"{side(self.smallest)}..{side(self.largest)}"
        if self.status == NEVER:
            text = f"not within the measured sizes ({span})"
            if self.has_range and self.low is not None:
                text += f"; within the 99% confidence intervals it could be from ~{side(self.low)}"
            return text
        if self.status == ALWAYS:
            return f"faster at every measured size ({span})"
        text = f"~{side(self.size)}"
        if self.has_range:
            low = f"~{side(self.low)}" if self.low is not None else f"below {side(self.smallest)}"
            high = (
                f"~{side(self.high)}" if self.high is not None else f"beyond {side(self.largest)}"
            )
            text += f" (99% CI: {low} to {high})"
        return text

    def as_dict(self):
        return {
            "status": self.status,
            "size": self.size,
            "low": self.low,
            "high": self.high,
            "measured_sizes": [self.smallest, self.largest],
            "text": self.describe(),
        }


def crossover(sizes, estimates):
    """The Crossover of a series of "how many times faster" Estimates over sizes.

    sizes ascending; estimates[i] is the candidate's speedup over the
    baseline at sizes[i] (e.g. cpu_time / gpu_time). Points without an
    estimate are dropped. Returns None with fewer than two points.
    """
    points = [(s, e) for s, e in zip(sizes, estimates) if e is not None]
    if len(points) < 2:
        return None
    sizes = [s for s, _ in points]
    status, size = _crossing(sizes, [e.value for _, e in points])
    has_range = all(e.has_range for _, e in points)
    low = high = None
    if has_range:
        # The optimistic curve (candidate at its best quartile) crosses first.
        early, early_size = _crossing(sizes, [e.high for _, e in points])
        late, late_size = _crossing(sizes, [e.low for _, e in points])
        low = early_size if early == AT else None
        high = late_size if late == AT else None
        if early == ALWAYS:
            low = None
    return Crossover(status, size, low, high, sizes[0], sizes[-1], has_range)


# --- time against bytes ---------------------------------------------------------


@dataclass(frozen=True)
class LinearFit:
    """t = fixed + per_byte * bytes, with standard errors, over the sizes where it holds.

    fixed is the per-op cost no data size avoids (dispatch, launch, the
    Python call); 1/per_byte is the bandwidth the op streams data at.
    residuals: (bytes, (measured - fitted) / measured, used in the fit) for
    every point offered; points the model did not hold for (sizes that stay
    in a cache stream faster than memory) were left out.
    """

    fixed: float
    per_byte: float
    fixed_error: float
    per_byte_error: float
    points: int
    residuals: tuple = ()

    @property
    def bandwidth(self):
        """Bytes per second, or None when the slope is not positive or not told apart
        from zero (under twice its standard error): an op whose time does not grow with
        its data over the sizes fitted (a GPU's launch-bound multiply) has no bandwidth
        to read off them, and 1/b of its noise would be any figure at all."""
        if self.per_byte <= 0 or self.per_byte < 2 * self.per_byte_error:
            return None
        return 1.0 / self.per_byte

    def predict(self, nbytes):
        return self.fixed + self.per_byte * nbytes

    def fixed_share(self, seconds):
        """The share of a measured op time that is fixed cost, capped at 1."""
        if seconds <= 0:
            return None
        return min(1.0, max(0.0, self.fixed / seconds))

    @property
    def worst_residual(self):
        """The largest |relative residual| among the points used."""
        used = [abs(r) for _, r, kept in self.residuals if kept]
        return max(used) if used else None

    def as_dict(self):
        return {
            "fixed_seconds": self.fixed,
            "fixed_seconds_error": self.fixed_error,
            "seconds_per_byte": self.per_byte,
            "seconds_per_byte_error": self.per_byte_error,
            "bandwidth_bytes_per_second": self.bandwidth,
            "points": self.points,
            "residuals": [{"bytes": n, "relative": r, "used": kept}
                          for n, r, kept in self.residuals],
        }


# The model holds where it predicts each time used within this share.
FIT_TOLERANCE = 0.10
MIN_FIT_POINTS = 3


def _weighted_fit(x, t):
    """Least squares of t = a + b*x, residuals relative to t; (coefficients, errors)."""
    # x in units of its largest value: bytes run to 1e8 and times on a GPU stay near
    # 1e-4 s, so the normal matrix of the raw columns spans more than 1e15 and pinv
    # drops the intercept's share of it (its error came out 1e-22 s).
    scale = float(np.max(np.abs(x))) or 1.0
    weight = 1.0 / t
    design = np.column_stack([np.ones_like(x), x / scale]) * weight[:, None]
    target = t * weight
    coefficients, _, _, _ = np.linalg.lstsq(design, target, rcond=None)
    residuals = target - design @ coefficients
    dof = len(t) - 2
    variance = float(residuals @ residuals) / dof if dof > 0 else 0.0
    covariance = variance * np.linalg.pinv(design.T @ design)
    errors = np.sqrt(np.clip(np.diag(covariance), 0, None))
    unscale = np.array([1.0, 1.0 / scale])
    return coefficients * unscale, errors * unscale


def fit_time_vs_bytes(nbytes, seconds, tolerance=FIT_TOLERANCE):
    """Fit t = a + b * bytes over the sizes where it holds; None with fewer than three points.

    Residuals are weighted relative to t: op times span three orders of
    magnitude, and an unweighted fit would let the largest sizes' noise
    swamp the microsecond intercept it is meant to measure. The point the
    model misses most is left out, in turn, until it predicts every point
    left within `tolerance` (or three points remain): mid sizes that fit in
    a cache stream faster than memory and would otherwise pull 1/b up to a
    bandwidth no size reached.
    """
    points = sorted((float(n), float(t)) for n, t in zip(nbytes, seconds)
                    if t > 0 and math.isfinite(t))
    if len(points) < MIN_FIT_POINTS or len({n for n, _ in points}) < 2:
        return None
    x_all = np.array([n for n, _ in points])
    t_all = np.array([t for _, t in points])
    used = list(range(len(points)))
    while True:
        coefficients, errors = _weighted_fit(x_all[used], t_all[used])
        relative = (t_all - (coefficients[0] + coefficients[1] * x_all)) / t_all
        worst = max(used, key=lambda i: abs(relative[i]))
        if abs(relative[worst]) <= tolerance or len(used) <= MIN_FIT_POINTS:
            break
        trial = [i for i in used if i != worst]
        if len({x_all[i] for i in trial}) < 2:
            break
        used = trial
    return LinearFit(
        fixed=float(coefficients[0]),
        per_byte=float(coefficients[1]),
        fixed_error=float(errors[0]),
        per_byte_error=float(errors[1]),
        points=len(used),
        residuals=tuple((float(x_all[i]), float(relative[i]), i in used)
                        for i in range(len(points))),
    )


def share(achieved, reference):
    """achieved / reference, or None when either is missing or the reference is not positive."""
    if achieved is None or reference is None or reference <= 0:
        return None
    return achieved / reference
