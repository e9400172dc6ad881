"""The answer, from asv's own result files: speedup, crossover, fixed cost against
bandwidth, verdicts, figures and a page beside asv's site.

asvresults reads asv's files; build turns runs into tables (analysis: the
pure numbers; verdicts: the words); render, page and plots write them out.
Nothing here imports matplotlib or TensorFlow at import time.
"""

from pathlib import Path

from . import render  # noqa: F401  (the formats, for the command)
from .asvresults import load_results, stack_labels_from_repo
from .build import build_report
from .page import count_figures
from .page import write_page as write_page_files
from .progress import Progress


def load(results_dir, repo=None):
    """(ResultSet, report) for a results directory; repo: asv's stacks repo, for labels."""
    result_set = load_results(results_dir, stack_labels_from_repo(repo))
    return result_set, build_report(result_set)


def only_machine(result_set, report, machine):
    """Restrict a report to one machine (problems are kept: they name their files)."""
    report = dict(report)
    report["machines"] = {k: v for k, v in report["machines"].items() if k == machine}
    result_set.runs = [r for r in result_set.runs if r.machine == machine]
    return result_set, report


def write_page(result_set, report, html_dir, show_progress=True):
    """Draw the figures and write html_dir/report/index.html; returns its path."""
    runs = {(run.machine, run.label): run for run in result_set.runs}
    progress = Progress(count_figures(report, runs), "report page", enabled=show_progress)
    index = write_page_files(report, runs, html_dir, progress)
    progress.finish(f"wrote {index}")
    return index


def publish_page(config, show_progress=True):
    """Write the report page into the asv config's html_dir, beside what `asv publish` wrote.

    Called by `python -m tfgpubench run` after `asv publish`; returns the
    page's path.
    """
    result_set, report = load(config.results_dir, getattr(config, "repo", None))
    return write_page(result_set, report, Path(config.html_dir), show_progress)
