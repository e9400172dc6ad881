"""The report as tables of strings (terminal, markdown, HTML) and as data (JSON, CSV)."""

import csv
import io
import json
import math
from dataclasses import dataclass

from .. import format as fmt
from ..names import FRAMEWORK_MULTIPLY
from . import changes
from .analysis import Crossover, Estimate, LinearFit


@dataclass
class Table:
    title: str
    columns: list
    rows: list  # lists of strings, one per column
    note: str = ""


def _crossing_text(crossover):
    return crossover.describe() if crossover is not None else "n/a"


def mode_crossing_text(row):
    """Which side wins at each end of the size range, and where that flips."""
    small, large = row["at_smallest"], row["at_largest"]
    mode = row["mode"]
    if small.value >= 1 > large.value:
        return f"eager faster from {_crossing_text(row['eager_crossover'])}"
    if small.value < 1 <= large.value:
        return f"{mode} faster from {_crossing_text(row['crossover'])}"
    if small.value < 1:
        return "eager faster at both ends"
    if row["crossover"] is not None and row["crossover"].status == "always":
        return f"{mode} faster at every measured size"
    return f"{mode} faster at both ends, not at every size between"


def left_out(fit_row):
    """'512x512 (-24%)' for the sizes the fit left out; '-' when none."""
    out = [f"{fmt.side(size)} ({relative:+.0%})"
           for size, (_, relative, kept) in zip(fit_row["sizes"], fit_row["fit"].residuals)
           if not kept]
    return ", ".join(out) or "-"


def stack_tables(report):
    """The human tables of one StackReport, in reading order."""
    tables = []
    if report.gpu_checks:
        tables.append(Table(
            "GPU self-check, run before measuring (a gpu number is recorded only where every "
            "check that concerns it passed)",
            ["check", "result", "evidence"],
            [[c["name"], fmt.CHECK_MARKS[c["passed"]], c["evidence"]] for c in report.gpu_checks],
        ))
    if report.gpu_measured:
        tables.append(Table(
            "GPU/CPU speedup (CPU time / GPU time; above 1 the GPU is faster)",
            ["size", "dtype", "mode", "side by side", "from timings (99% CI)"],
            [[f"{r['size']}x{r['size']}", r["dtype"], r["mode"], fmt.ratio(r["measured"]),
              fmt.ratio(r["from_times"])] for r in report.speedups],
        ))
        tables.append(Table(
            "Crossover: the size from which the GPU is faster",
            ["dtype", "mode", "crossover"],
            [[r["dtype"], r["mode"], _crossing_text(r["crossover"])] for r in report.crossovers],
        ))
    tables.append(Table(
        "Time per op fitted as t = a + b*bytes over the sizes where it holds (a: fixed cost "
        "per op; 1/b: bandwidth; residual: (measured - fitted) / measured)",
        ["device", "dtype", "mode", "a (fixed)", "1/b", "a as share of smallest op",
         "measured at largest", "sizes left out (residual)", "worst residual used"],
        [[r["device"], r["dtype"], r["mode"],
          f"{fmt.seconds(r['fit'].fixed)} ± {fmt.seconds(r['fit'].fixed_error)}",
          fmt.bandwidth(r["fit"].bandwidth),
          f"{fmt.share(r['fixed_share_of_smallest'])} of "
          f"{fmt.seconds(r['smallest_seconds'])} at {r['smallest_size']}x{r['smallest_size']}",
          f"{fmt.bandwidth(r['largest_bandwidth'])} at {r['largest_size']}x{r['largest_size']}",
          left_out(r), fmt.share(r["fit"].worst_residual)]
         for r in report.fits],
    ))
    tables.append(Table(
        "Achieved float32 bandwidth as a share of the reference",
        ["device", "mode", "size", "measured", "share", "fit 1/b", "share", "reference", "note"],
        [[r["device"], r["mode"], f"{r['size']}x{r['size']}" if r["size"] else "n/a",
          fmt.bandwidth(r["measured"]), fmt.share(r["measured_share"]),
          fmt.bandwidth(r["fitted"]), fmt.share(r["fitted_share"]),
          f"{fmt.bandwidth(r['reference'])}: {r['reference_source']}",
          "; ".join(n for n in (r["note"], r["fit_note"]) if n) or "-"]
         for r in report.bandwidth],
    ))
    tables.append(Table(
        "Each mode against eager (how many times faster than eager, same device)",
        ["device", "dtype", "mode", "smallest size", "largest size", "crossover"],
        [[r["device"], r["dtype"], r["mode"],
          f"{r['smallest_size']}x{r['smallest_size']}: {fmt.ratio(r['at_smallest'])}",
          f"{r['largest_size']}x{r['largest_size']}: {fmt.ratio(r['at_largest'])}",
          mode_crossing_text(r)]
         for r in report.modes],
    ))
    if report.waits:
        tables.append(Table(
            "The wait that ends a timed block on a device that queues ops (read one element back)",
            ["device", "dtype", "seconds"],
            [[r["device"], r["dtype"], fmt.seconds(r["seconds"])] for r in report.waits],
        ))
    if not report.has_tensorflow:
        tables = []
    if report.comparison is not None:
        tables += comparison_tables(report.comparison)
    return tables


def comparison_tables(comparison):
    """TensorFlow against PyTorch, JAX and numpy: times, fixed costs, GPU crossovers."""
    source = f" (comparators from {comparison.partner})" if comparison.partner else ""
    frameworks = list(FRAMEWORK_MULTIPLY)
    return [
        Table(
            "TensorFlow against the fastest comparator, seconds per op (each framework's "
            "fastest case of that device and mode kind)" + source,
            ["device", "dtype", "mode", "size", *frameworks, "fastest comparator",
             "TensorFlow / fastest (99% CI)"],
            [[r["device"], r["dtype"], r["mode"], fmt.side(r["size"]),
              *[fmt.seconds(r.get(name)) for name in frameworks], r["fastest"],
              fmt.ratio(r["tensorflow_vs_fastest"])] for r in comparison.times],
        ),
        Table(
            "Fixed cost per op by framework (t = a + b*bytes)" + source,
            ["framework", "device", "dtype", "case", "a (fixed)", "1/b",
             "a as share of smallest op", "measured at largest"],
            [[r["framework"], r["device"], r["dtype"], r["case"],
              f"{fmt.seconds(r['fit'].fixed)} ± {fmt.seconds(r['fit'].fixed_error)}",
              fmt.bandwidth(r["fit"].bandwidth),
              f"{fmt.share(r['fixed_share_of_smallest'])} of "
              f"{fmt.seconds(r['smallest_seconds'])} at {fmt.side(r['smallest_size'])}",
              f"{fmt.bandwidth(r['largest_bandwidth'])} at {fmt.side(r['largest_size'])}"]
             for r in comparison.fits],
        ),
        Table(
            "GPU crossover by framework: the size from which its GPU beats its CPU" + source,
            ["framework", "dtype", "case", "crossover"],
            [[r["framework"], r["dtype"], r["case"], _crossing_text(r["crossover"])]
             for r in comparison.crossovers],
        ),
    ]


HEADLINES = {
    "seed_reported_speedup": ("speedup the seed's method reports", "x"),
    "seed_real_speedup": ("real GPU speedup for the seed's case", "x"),
    "cpu_fixed_cost_seconds": ("CPU fixed cost per eager op (int32)", "s"),
    "gpu_fixed_cost_seconds": ("GPU fixed cost per eager op (float32: int32 never runs there)",
                               "s"),
    "cpu_function_slowdown_vs_eager": ("per-op tf.function slowdown vs eager (CPU, 2x2)", "x"),
    "gpu_function_slowdown_vs_eager": ("per-op tf.function slowdown vs eager (GPU, 2x2)", "x"),
    "cpu_bandwidth_share": ("CPU eager bandwidth share of all-core STREAM scale", "share"),
    "gpu_bandwidth_share": ("GPU eager bandwidth share of its reference", "share"),
    "cpu_eager_fixed_cost_vs_cheapest_comparator": (
        "CPU eager fixed cost: TensorFlow / cheapest comparator", "x"),
    "gpu_eager_fixed_cost_vs_cheapest_comparator": (
        "GPU eager fixed cost: TensorFlow / cheapest comparator", "x"),
}


def headline_title(key):
    if key in HEADLINES:
        return HEADLINES[key][0]
    if key.startswith("gpu_speedup_float32_eager_"):
        size = key.rsplit("_", 1)[1]
        return f"GPU speedup, float32 eager {size}x{size}"
    return key.replace("_", " ")


def format_headline(key, value):
    if value is None or not math.isfinite(value):
        return "n/a"
    unit = HEADLINES.get(key, ("", "x"))[1]
    if unit == "s":
        return fmt.seconds(value)
    if unit == "share":
        return fmt.share(value)
    return f"{value:.3g}x"


def across_stacks_table(stacks):
    keys = []
    for stack in stacks:
        keys += [k for k in stack.headline if k not in keys]
    return Table(
        "Across stacks",
        ["number"] + [s.label for s in stacks],
        [[headline_title(k)] + [format_headline(k, s.headline.get(k)) for s in stacks]
         for k in keys],
    )


def stack_heading(stack):
    versions = ", ".join(f"{k} {v}" for k, v in sorted(stack.installed.items()))
    heading = f"{stack.machine} / {stack.label}"
    details = f"commit {stack.commit_hash[:8]}, env {stack.env_name}, {stack.path}"
    if versions:
        details += f"; installed: {versions}"
    return heading, details


# --- terminal and markdown ---------------------------------------------------------


def _text_table(table):
    widths = [len(c) for c in table.columns]
    for row in table.rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row)]
    lines = [table.title]
    lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(table.columns, widths)).rstrip())
    lines.append("  " + "  ".join("-" * w for w in widths))
    for row in table.rows:
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    if not table.rows:
        lines.append("  (nothing measured)")
    return "\n".join(lines)


def _md_cell(text):
    return str(text).replace("|", "\\|")


def _markdown_table(table):
    lines = [f"#### {table.title}", ""]
    if not table.rows:
        return "\n".join(lines + ["(nothing measured)"])
    lines.append("| " + " | ".join(_md_cell(c) for c in table.columns) + " |")
    lines.append("|" + "---|" * len(table.columns))
    for row in table.rows:
        lines.append("| " + " | ".join(_md_cell(c) for c in row) + " |")
    return "\n".join(lines)


CHANGES_TITLE = "What changed from release to release"
CHANGES_NOTE = (f"A case changed when asv's own rule says so: past the factor {changes.FACTOR} "
                "and significant at 99% (Mann-Whitney on the samples, else non-overlapping "
                "confidence intervals). Grouped per device and mode into the sizes that are "
                "mostly fixed cost per op and those mostly moving data; after / before. "
                "Controls: numpy's multiply where both stacks have the same numpy, the same "
                "code measured twice; what moved there is the machine between the two runs.")


def changes_lines(report):
    """The version story, one line per step between adjacent stacks, per machine."""
    lines = []
    for machine, story in report.get("changes", {}).items():
        if not story["steps"]:
            continue
        lines.append(f"{machine}:")
        lines += [f"  {step.describe()}" for step in story["steps"]]
        if story["overall"] is not None:
            lines.append(f"  from first to last, {story['overall'].describe()}")
    return lines


def render_text(report, markdown=False):
    out = []
    table = _markdown_table if markdown else _text_table
    story = changes_lines(report)
    if story:
        heading = f"## {CHANGES_TITLE}" if markdown else CHANGES_TITLE
        note = CHANGES_NOTE
        body = [f"- {_md_cell(line.strip())}" if markdown else line for line in story]
        out += [heading, note, ""] + body + [""]
    if not report["machines"]:
        out.append("No results to report.")
    for machine, stacks in report["machines"].items():
        for stack in stacks:
            heading, details = stack_heading(stack)
            if markdown:
                out += [f"## {_md_cell(heading)}", "", _md_cell(details), ""]
            else:
                out += ["=" * 78, heading, details, ""]
            if not stack.gpu_measured:
                out += [stack.gpu_note, ""]
            out.append("### Verdicts" if markdown else "Verdicts")
            if markdown:
                out.append("")
            out += [f"- {v}" if markdown else f"  - {v}" for v in stack.verdicts]
            out.append("")
            for t in stack_tables(stack):
                out += [table(t), ""]
        if len(stacks) > 1:
            if markdown:
                out += [f"## {_md_cell(machine)}: across stacks", ""]
            out += [table(across_stacks_table(stacks)), ""]
    if report["problems"]:
        out.append("### Left out" if markdown else "Left out (the report carried on without):")
        if markdown:
            out.append("")
        out += [f"- {_md_cell(p)}" if markdown else f"  - {p}" for p in report["problems"]]
    return "\n".join(out).rstrip() + "\n"


# --- JSON and CSV ---------------------------------------------------------------------


def jsonable(value):
    if isinstance(value, (Estimate,)):
        return {"value": value.value, "low": value.low, "high": value.high}
    if isinstance(value, (Crossover, LinearFit)):
        return value.as_dict()
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


SECTIONS = ["speedups", "crossovers", "fits", "bandwidth", "modes", "waits"]
# Sections of report_data that are not tables of numbers (left out of the CSV).
RECORDS = ["gpu_checks"]
COMPARISON_SECTIONS = ["times", "fits", "crossovers"]


def report_data(report):
    machines = {}
    for machine, stacks in report["machines"].items():
        machines[machine] = [
            {
                "label": s.label, "commit_hash": s.commit_hash, "env_name": s.env_name,
                "path": s.path, "installed": s.installed,
                "gpu_measured": s.gpu_measured, "gpu_note": s.gpu_note,
                "verdicts": s.verdicts, "seed": jsonable(s.seed),
                "headline": jsonable(s.headline),
                **{section: jsonable(getattr(s, section)) for section in SECTIONS + RECORDS},
                "comparison": comparison_data(s.comparison),
            }
            for s in stacks
        ]
    return {
        "machines": machines,
        "changes": {machine: {"steps": [step_data(s) for s in story["steps"]],
                              "overall": step_data(story["overall"]) if story["overall"] else None}
                    for machine, story in report.get("changes", {}).items()},
        "problems": [{"path": p.path, "message": p.message} for p in report["problems"]],
    }


def step_data(step):
    return {"before": step.before, "after": step.after, "compared": step.compared,
            "text": step.describe(),
            "moved": [{"device": g.device, "mode": g.mode, "regime": g.regime,
                       "ratio": g.ratio, "changed": len(g.changed), "cases": len(g.cases),
                       "text": g.describe()} for g in step.moved],
            "controls": ({"why": step.controls.why, "changed": len(step.controls.changed),
                          "cases": len(step.controls.cases), "drift": step.controls.drift(),
                          "text": step.controls.describe()} if step.controls else None)}


def comparison_data(comparison):
    if comparison is None:
        return None
    return {"partner": comparison.partner, "verdicts": comparison.verdicts,
            **{name: jsonable(getattr(comparison, name)) for name in COMPARISON_SECTIONS}}


def render_json(report):
    return json.dumps(report_data(report), indent=2, allow_nan=False) + "\n"


CSV_DIMENSIONS = ["device", "dtype", "mode", "size"]
CSV_COLUMNS = ["machine", "stack", "commit", "table", *CSV_DIMENSIONS,
               "quantity", "value", "low", "high"]


def _csv_values(name, value):
    """(quantity, value, low, high) rows for one field of a report row."""
    if isinstance(value, Estimate):
        yield name, value.value, value.low, value.high
    elif isinstance(value, Crossover):
        yield name + "_size", value.size, value.low, value.high
    elif isinstance(value, LinearFit):
        yield "fixed_seconds", value.fixed, None, None
        yield "fixed_seconds_error", value.fixed_error, None, None
        yield "bandwidth_bytes_per_second", value.bandwidth, None, None
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield name, value, None, None


def render_csv(report):
    """Long format: one number per line, with its dimensions; for spreadsheets and scripts."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for machine, stacks in report["machines"].items():
        for stack in stacks:
            head = [machine, stack.label, stack.commit_hash]
            for section in SECTIONS:
                for row in getattr(stack, section):
                    dims = [row.get(d, "") for d in CSV_DIMENSIONS]
                    for key, value in row.items():
                        if key in CSV_DIMENSIONS:
                            continue
                        for quantity, number, low, high in _csv_values(key, value):
                            writer.writerow(head + [section] + dims + [
                                quantity, _csv_number(number), _csv_number(low),
                                _csv_number(high)])
            for section in COMPARISON_SECTIONS if stack.comparison is not None else []:
                for row in getattr(stack.comparison, section):
                    dims = [row.get(d, "") for d in CSV_DIMENSIONS]
                    # A row of one framework names it in each quantity.
                    prefix = f"{row['framework']} " if "framework" in row else ""
                    for key, value in row.items():
                        if key in CSV_DIMENSIONS:
                            continue
                        for quantity, number, low, high in _csv_values(key, value):
                            writer.writerow(head + [f"comparison_{section}"] + dims + [
                                prefix + quantity, _csv_number(number), _csv_number(low),
                                _csv_number(high)])
            for key, value in stack.headline.items():
                writer.writerow(head + ["headline", "", "", "", "", key, _csv_number(value),
                                        "", ""])
    return buffer.getvalue()


def _csv_number(value):
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return repr(value) if isinstance(value, float) else str(value)
