"""The report's figures as PNG files (matplotlib, imported only when drawing)."""

import hashlib
import math
import re

from ..names import MULTIPLY
from .cases import in_suite_order

MODE_COLORS = {"eager": "C0", "function": "C1", "xla": "C2", "graph_loop": "C3"}
DEVICE_STYLES = {"cpu": "-", "gpu": "--"}
DEVICE_MARKERS = {"cpu": "o", "gpu": "s"}


def _pyplot():
    import matplotlib

    # Files only: no display is needed, or wanted on a build machine.
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def safe_name(*parts):
    """A file name from arbitrary labels: readable where it can be, unique always.

    Labels come from git tags and machine names, which may hold anything;
    the hash keeps two labels that slug alike apart.
    """
    text = "-".join(str(p) for p in parts)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._")[:60] or "figure"
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]
    return f"{slug}-{digest}.png"


def _save(fig, path):
    fig.savefig(path, dpi=100, bbox_inches="tight")
    _pyplot().close(fig)


def _color(mode):
    return MODE_COLORS.get(mode, "C7")


def time_vs_size(stack, run, dtype, path):
    """Seconds per op against size, log-log, per device and mode; crossovers marked."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    devices = in_suite_order(run, "device")
    modes = in_suite_order(run, "mode")
    drawn = False
    for device in devices:
        for mode in modes:
            points = sorted(
                (m for m in run.select(MULTIPLY, device=device, dtype=dtype, mode=mode)
                 if m.measured),
                key=lambda m: m.params["size"],
            )
            if not points:
                continue
            sizes = [m.params["size"] for m in points]
            values = [m.value for m in points]
            # Clamped: a one-sample (--quick) result can carry quartiles that
            # do not bracket its value, and matplotlib rejects negative bars.
            lower = [max(0.0, m.value - (m.q25 if m.q25 is not None else m.value)) for m in points]
            upper = [max(0.0, (m.q75 if m.q75 is not None else m.value) - m.value) for m in points]
            ax.errorbar(sizes, values, yerr=[lower, upper], color=_color(mode),
                        linestyle=DEVICE_STYLES.get(device, ":"),
                        marker=DEVICE_MARKERS.get(device, "."), markersize=4, capsize=2,
                        label=f"{device} {mode}")
            drawn = True
    marked = _mark_crossovers(ax, stack, dtype)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("size (size x size tensor)")
    ax.set_ylabel("seconds per multiply")
    title = f"tf.multiply {dtype}: time per op"
    if not stack.gpu_measured:
        title += " (no GPU results: CPU only)"
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    if drawn or marked:
        ax.legend(fontsize=8, loc="upper left")
    _save(fig, path)


def _mark_crossovers(ax, stack, dtype):
    """Lines where the GPU overtakes; on a CPU-only run, where eager overtakes graph_loop."""
    marked = False
    if stack.gpu_measured:
        for row in stack.crossovers:
            cross = row["crossover"]
            if row["dtype"] == dtype and cross is not None and cross.status == "at":
                _vline(ax, cross, _color(row["mode"]), f"GPU faster from ({row['mode']})")
                marked = True
        return marked
    for row in stack.modes:
        cross = row["eager_crossover"]
        if (row["device"], row["dtype"], row["mode"]) == ("cpu", dtype, "graph_loop") and (
            cross is not None and cross.status == "at"
        ):
            _vline(ax, cross, _color("graph_loop"), "CPU: eager faster than graph_loop from")
            marked = True
    return marked


def _vline(ax, cross, color, label):
    ax.axvline(cross.size, color=color, linestyle=":", linewidth=1.5, label=label)
    if cross.has_range:
        low = cross.low if cross.low is not None else cross.smallest
        high = cross.high if cross.high is not None else cross.largest
        ax.axvspan(low, high, color=color, alpha=0.08)


def speedup_vs_size(stack, dtype, path):
    """GPU/CPU speedup against size per mode, with the range of asv's 99% confidence
    intervals; 1x marked."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    by_mode = {}
    for row in stack.speedups:
        if row["dtype"] == dtype and row["from_times"] is not None:
            by_mode.setdefault(row["mode"], []).append((row["size"], row["from_times"]))
    for mode, points in by_mode.items():
        _speedup_line(ax, points, _color(mode), mode)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_title(f"GPU/CPU speedup, {dtype} (above 1: the GPU is faster)")
    ax.set_ylabel("CPU time / GPU time")
    _finish_speedup_axes(ax)
    _save(fig, path)


def mode_vs_eager(stack, dtype, path, device="cpu"):
    """How many times faster than eager each mode is, against size, on one device."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    run_rows = [r for r in stack.modes if (r["device"], r["dtype"]) == (device, dtype)]
    for row in run_rows:
        points = row["points"]
        _speedup_line(ax, points, _color(row["mode"]), row["mode"])
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_title(f"{device.upper()} {dtype}: each mode against eager (above 1: faster)")
    ax.set_ylabel("eager time / mode time")
    _finish_speedup_axes(ax)
    _save(fig, path)


def _speedup_line(ax, points, color, label):
    sizes = [s for s, _ in points]
    values = [e.value for _, e in points]
    ax.plot(sizes, values, marker="o", markersize=4, color=color, label=label)
    if all(e.has_range for _, e in points):
        ax.fill_between(sizes, [e.low for _, e in points], [e.high for _, e in points],
                        color=color, alpha=0.15)


def _finish_speedup_axes(ax):
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("size (size x size tensor)")
    ax.grid(True, which="both", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)


def across_stacks(key, title, machines, path):
    """One headline number against stack (release), one line per machine."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.8))
    # Seconds read better as microseconds; shares as percent.
    scale, unit = (1e6, "us") if key.endswith("_seconds") else (
        (100.0, "%") if key.endswith("_share") else (1.0, "x"))
    labels = []
    for stacks in machines.values():
        for stack in stacks:
            if stack.label not in labels:
                labels.append(stack.label)
    for machine, stacks in machines.items():
        xs, ys = [], []
        for stack in stacks:
            value = stack.headline.get(key)
            if value is not None and math.isfinite(value):
                xs.append(labels.index(stack.label))
                ys.append(value * scale)
        if xs:
            ax.plot(xs, ys, marker="o", label=machine)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    ax.set_xlim(-0.5, len(labels) - 0.5)
    ax.set_title(title)
    ax.set_ylabel(unit)
    # From zero: two close values on a free axis look like a cliff.
    ax.set_ylim(bottom=0, top=max(ax.get_ylim()[1], 1e-12))
    ax.set_xlabel("stack (asv commit tag)")
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    _save(fig, path)
