"""Speedup, crossover size, fixed cost against bandwidth, and verdicts, from asv's results.

Reads every result file under the configuration's results_dir (one per
machine, stack and environment); files that cannot be used are named and
left out. Prints the report (terminal text by default) and, with --page,
writes html/report/index.html with figures beside asv's published site.
"""

import sys
from pathlib import Path

from ..config import add_config_argument, load_config
from ..report import load, only_machine, render, write_page

FORMATS = ["text", "markdown", "json", "csv"]


def add_arguments(parser):
    add_config_argument(parser)
    parser.add_argument("--format", choices=FORMATS, default="text",
                        help="output format (default: %(default)s)")
    parser.add_argument("--machine", help="report only this asv machine")
    parser.add_argument("--results", type=Path,
                        help="results directory (default: the configuration's results_dir)")
    parser.add_argument("--output", "-o", type=Path, help="write the report here, not to stdout")
    parser.add_argument("--page", action="store_true",
                        help="also write the page with figures into the configuration's html_dir"
                             " (after `asv publish`, to link to its graphs)")
    parser.add_argument("--html-dir", type=Path,
                        help="where --page writes report/ (default: the configuration's html_dir)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def render_as(report, fmt):
    if fmt == "json":
        return render.render_json(report)
    if fmt == "csv":
        return render.render_csv(report)
    return render.render_text(report, markdown=(fmt == "markdown"))


def run(args):
    config = load_config(args.config)
    results_dir = args.results or Path(config.results_dir)
    result_set, report = load(results_dir, getattr(config, "repo", None))
    if args.machine:
        known = sorted(report["machines"])
        if args.machine not in known:
            print(f"no results for machine {args.machine!r} in {results_dir}; "
                  f"machines with results: {', '.join(known) or 'none'}", file=sys.stderr)
            return 2
        result_set, report = only_machine(result_set, report, args.machine)
    for problem in report["problems"]:
        print(f"warning: {problem}", file=sys.stderr)

    text = render_as(report, args.format)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)

    if args.page:
        html_dir = args.html_dir or Path(config.html_dir)
        if not (html_dir / "index.html").is_file():
            print(f"note: {html_dir} has no asv site yet (run `asv publish`); "
                  "the page's links to asv's graphs will not resolve", file=sys.stderr)
        index = write_page(result_set, report, html_dir, show_progress=not args.quiet)
        print(f"page: {index}", file=sys.stderr)
    return 0 if report["machines"] else 1
