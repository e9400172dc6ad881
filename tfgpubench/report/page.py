"""The report as a static page beside asv's site: html/report/index.html and its PNGs.

Every string that reaches the HTML (machine names, stack labels from git
tags, parameters, file names in problems) passes through `esc`; URLs are
percent-encoded first and then escaped as attribute values.
"""

import html
import shutil
from pathlib import Path
from urllib.parse import quote

from ..names import FRAMEWORK_MULTIPLY, MULTIPLY, SEED_SPEEDUP, SPEEDUP, TENSORFLOW
from . import plots
from .cases import in_suite_order
from .render import (
    CHANGES_NOTE,
    CHANGES_TITLE,
    across_stacks_table,
    headline_title,
    stack_heading,
    stack_tables,
)

PAGE_DIR = "report"
ASV_INDEX = "../index.html"

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; padding: 0 1em;
       color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; }
table { border-collapse: collapse; margin: .5em 0 1.5em; font-size: .9em; }
th, td { border: 1px solid #ddd; padding: .25em .6em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
.verdicts li { margin: .3em 0; }
.note { background: #fff6dd; border-left: 4px solid #e0b000; padding: .5em 1em; }
.problems { background: #fdecec; border-left: 4px solid #c33; padding: .5em 1em; }
.figures { display: flex; flex-wrap: wrap; gap: 1em; }
.figures figure { margin: 0; } .figures img { max-width: 100%; width: 34em; }
.details { color: #666; font-size: .9em; }
"""


def esc(value):
    return html.escape(str(value), quote=True)


def asv_graph_link(benchmark, machine, params=None):
    """A link into asv's site: the benchmark's graph, filtered to one machine.

    asv's page reads `#<benchmark>?machine=<m>&p-<param>=<value>` from the
    URL fragment.
    """
    query = [("machine", machine)] + [(f"p-{k}", v) for k, v in (params or {}).items()]
    fragment = benchmark + "?" + "&".join(
        f"{quote(str(k), safe='')}={quote(str(v), safe='')}" for k, v in query
    )
    return f"{ASV_INDEX}#{fragment}"


def _table_html(table):
    head = "".join(f"<th>{esc(c)}</th>" for c in table.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(cell)}</td>" for cell in row) + "</tr>" for row in table.rows
    )
    if not table.rows:
        body = f'<tr><td colspan="{len(table.columns)}">nothing measured</td></tr>'
    return f"<h4>{esc(table.title)}</h4>\n<table><tr>{head}</tr>{body}</table>\n"


def _figure(name, caption):
    return (
        f'<figure><img src="{esc(quote(name))}" alt="{esc(caption)}">'
        f"<figcaption>{esc(caption)}</figcaption></figure>"
    )


def _stack_figures(stack, run, out_dir, progress):
    """Draw one stack's figures; returns [(file name, caption)]."""
    figures = []
    for dtype in in_suite_order(run, "dtype"):
        name = plots.safe_name(stack.machine, stack.label, stack.env_name, "time", dtype)
        progress.step(f"time vs size, {stack.machine} / {stack.label} / {dtype}")
        plots.time_vs_size(stack, run, dtype, out_dir / name)
        figures.append((name, f"time per op vs size, {dtype}, log-log"))
        if stack.gpu_measured:
            name = plots.safe_name(stack.machine, stack.label, stack.env_name, "speedup", dtype)
            plots.speedup_vs_size(stack, dtype, out_dir / name)
            figures.append((name, f"GPU/CPU speedup vs size, {dtype}"))
        name = plots.safe_name(stack.machine, stack.label, stack.env_name, "modes", dtype)
        plots.mode_vs_eager(stack, dtype, out_dir / name)
        figures.append((name, f"CPU: each mode against eager, {dtype}"))
    return figures


def _links(stack):
    links = [
        ("time per op (asv graph)", asv_graph_link(MULTIPLY, stack.machine)),
        ("GPU/CPU speedup (asv graph)", asv_graph_link(SPEEDUP, stack.machine)),
        ("seed's reported speedup (asv graph)",
         asv_graph_link(SEED_SPEEDUP, stack.machine)),
    ]
    if stack.comparison is not None:
        links += [(f"{name} time per op (asv graph)", asv_graph_link(benchmark, stack.machine))
                  for name, benchmark in FRAMEWORK_MULTIPLY.items() if name != TENSORFLOW]
    return " · ".join(f'<a href="{esc(url)}">{esc(text)}</a>' for text, url in links)


def _changes_html(report):
    """The version story first: per machine, what moved between adjacent stacks."""
    stories = {m: story for m, story in report.get("changes", {}).items() if story["steps"]}
    if not stories:
        return []
    parts = [f'<h2 id="changes">{esc(CHANGES_TITLE)}</h2>', f"<p>{esc(CHANGES_NOTE)}</p>"]
    for machine, story in stories.items():
        steps = story["steps"] + ([story["overall"]] if story["overall"] else [])
        rows = []
        for step in steps:
            moved = "<br>".join(esc(g.describe()) for g in step.moved) or (
                f"nothing beyond noise ({step.compared} cases compared)")
            if step.controls:
                moved += f"<br><em>{esc(step.controls.describe())}</em>"
            rows.append(f"<tr><td>{esc(step.before)} &rarr; {esc(step.after)}</td>"
                        f"<td>{moved}</td></tr>")
        parts.append(f"<h3>{esc(machine)}</h3><table class=\"changes\"><tr><th>stacks</th>"
                     f"<th>what moved</th></tr>{''.join(rows)}</table>")
    return parts


def write_page(report, runs_by_key, html_dir, progress):
    """Write html_dir/report/ (index.html and PNGs); returns the index path.

    runs_by_key: (machine, label) -> Run, for the figures that need every
    measurement, not only the report's tables.
    """
    out_dir = Path(html_dir) / PAGE_DIR
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    machines = report["machines"]
    parts = [
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<title>tfgpubench report: why tf.multiply gives 1x on a GPU</title>",
        # asv's icon, published beside the page; without a link browsers ask for
        # /favicon.ico and log a 404.
        '<link rel="icon" href="../swallow.ico">',
        f"<style>{STYLE}</style></head><body>",
        "<h1>Why does my GPU give only 1x on tf.multiply? The measured answer</h1>",
        f'<p>Computed from asv\'s result files. Timings over commits: <a href="{esc(ASV_INDEX)}">'
        "asv's benchmark site</a>.</p>",
    ]
    if report["problems"]:
        parts.append('<div class="problems" id="problems"><strong>Left out</strong>'
                     " (the report carried on with the rest):<ul>")
        parts += [f"<li>{esc(p.path)}: {esc(p.message)}</li>" for p in report["problems"]]
        parts.append("</ul></div>")
    parts += _changes_html(report)
    if not machines:
        parts.append("<p>No results to report.</p>")
    for machine, stacks in machines.items():
        for stack in stacks:
            heading, details = stack_heading(stack)
            parts.append(f"<h2>{esc(heading)}</h2>")
            parts.append(f'<p class="details">{esc(details)}<br>{_links(stack)}</p>')
            if not stack.gpu_measured:
                parts.append(f'<p class="note">{esc(stack.gpu_note)}</p>')
            parts.append('<ul class="verdicts">')
            parts += [f"<li>{esc(v)}</li>" for v in stack.verdicts]
            parts.append("</ul>")
            run = runs_by_key[(machine, stack.label)]
            figures = _stack_figures(stack, run, out_dir, progress)
            parts.append('<div class="figures">')
            parts += [_figure(name, caption) for name, caption in figures]
            parts.append("</div>")
            parts += [_table_html(t) for t in stack_tables(stack)]
    if machines:
        parts.append("<h2>Across stacks</h2>")
        parts.append("<p>Each headline number against the stack (TensorFlow / tensorflow-metal "
                     "release) it was measured with, one line per machine.</p>")
        keys = headline_keys(machines)
        parts.append('<div class="figures">')
        for key in keys:
            name = plots.safe_name("across", key)
            progress.step(f"across stacks: {headline_title(key)}")
            plots.across_stacks(key, headline_title(key), machines, out_dir / name)
            parts.append(_figure(name, headline_title(key)))
        parts.append("</div>")
        for machine, stacks in machines.items():
            table = across_stacks_table(stacks)
            table.title = f"{machine}: across stacks"
            parts.append(_table_html(table))
    parts.append("</body></html>\n")
    index = out_dir / "index.html"
    index.write_text("\n".join(parts), encoding="utf-8")
    return index


def headline_keys(machines):
    """Headline numbers measured in at least one stack (an empty figure says nothing)."""
    keys = []
    for stacks in machines.values():
        for stack in stacks:
            keys += [k for k, v in stack.headline.items() if v is not None and k not in keys]
    return keys


def count_figures(report, runs_by_key):
    """How many figures write_page will draw, for the progress line."""
    total = 0
    for machine, stacks in report["machines"].items():
        for stack in stacks:
            run = runs_by_key[(machine, stack.label)]
            total += len({m.params.get("dtype") for m in run.benchmark(MULTIPLY)})
    return total + len(headline_keys(report["machines"]))

