"""How numbers are written for people: seconds, ratios, shares, bandwidths.

A leaf module like `names`: pure functions of plain numbers (a ratio may be
any object with `value` and, when it has a range, `low` and `high`), used by
the report, the self-check and the doctor alike.
"""

import math


def seconds(value):
    """'14.7 us', '3.92 ms', '1.2 s'; 'n/a' for a missing or non-finite value."""
    if value is None or not math.isfinite(value):
        return "n/a"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value / 1e-9:.3g} ns"


def ratio(estimate):
    """'1.23x (1.1-1.4)' for an estimate with a range, '1.23x' without; 'n/a' for None."""
    if estimate is None:
        return "n/a"
    text = f"{estimate.value:.3g}x"
    if getattr(estimate, "low", None) is not None and getattr(estimate, "high", None) is not None:
        text += f" ({estimate.low:.3g}-{estimate.high:.3g})"
    return text


def share(value):
    return "n/a" if value is None else f"{100 * value:.0f}%"


def bandwidth(bytes_per_second):
    return "n/a" if bytes_per_second is None else f"{bytes_per_second / 1e9:.3g} GB/s"


def side(size):
    """'1000x1000' for the side of a square tensor (sizes may be interpolated floats)."""
    text = f"{size:.0f}"
    return f"{text}x{text}"


def verdict(ok):
    return "PASS" if ok else "FAIL"


CHECK_MARKS = {True: "PASS", False: "FAIL", None: "----"}


def check_line(check):
    """'PASS  wait waits: <evidence>' for one check of the GPU self-check (as recorded)."""
    return f"{CHECK_MARKS[check['passed']]}  {check['name']}: {check['evidence']}"
