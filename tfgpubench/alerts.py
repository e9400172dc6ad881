"""Regressions a machine can read: which cases got slower from one stack to the next on a
machine, by asv's own rule, as JSON (for scripts) and Markdown (for a CI job summary).

A case regressed when it got slower by more than the factor and asv's significance test
says the two differ (report/changes.py's `compare_cases`, the rule `asv compare` and
`asv continuous` apply: Mann-Whitney U on the kept samples where there are enough of
them, else non-overlapping 99% confidence intervals; one sample, the factor alone), or
when it failed on the new stack after running on the previous one (asv's "!"). Only
time_ benchmarks are judged: lower is better there, which is what asv assumes; a track_
value (a speedup, a bandwidth) is better higher.

Controls: numpy's multiply runs in a TensorFlow stack's environment without TensorFlow,
so between two stacks with the same numpy it measures the same code on both sides
(report/changes.py's control_benchmarks). asv's rule is applied to it as to every case,
but what it flags is the machine's speed moving during the comparison, never the
upgrade: it is reported as such and is no regression.

Pure functions of asvresults.Run objects and plain data, then, at the bottom, the
edge: which result files asv judged, reading them, writing the summary.
"""

import itertools
import json
import math
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from asv import _stats as asv_stats  # asv's own test, to name which one decided
from asv import environment as asv_environment
from asv.benchmarks import Benchmarks
from asv.config import Config

from . import format as fmt
from .names import case_id
from .report.analysis import Estimate
from .report.asvresults import load_benchmarks, load_run
from .report.changes import FACTOR, compare_cases, largest_change
from .stacks.ledger import result_files

SLOWER, FAILED, FASTER, FIXED = "slower", "failed", "faster", "fixed"
REGRESSIONS = (SLOWER, FAILED)
# asv's significance threshold for Mann-Whitney U (asv/_stats.py is_different).
P_THRESHOLD = 0.002
MANN_WHITNEY, CI_APART, FACTOR_ONLY = ("Mann-Whitney U", "99% confidence intervals apart",
                                       "factor only (one sample)")
# Written into every summary: what a reader (or a script) must know to trust it.
# 2: "controls" added, and a control's change of speed left out of "regressions" and
# "improvements" (1: every case judged alike).
FORMAT_VERSION = 2


def screening_factor(factor):
    """How far past 1 the gate's first pass must put a case (significant by asv's test)
    for it to be measured again: half the factor's step on a log scale (x1.049 for 1.1).

    A verdict still needs the factor, in the second pass. A real x1.15 slowdown whose first
    pass read x1.07 gets its second pass instead of none: on the second VM's A/A data
    (scripts/aa_by_round.py, 8 rounds of Multiply.time_multiply, rounds 1-4 as the first
    pass and 5-8 as the second; two runs, each quiet and loaded; B's samples scaled to
    make known slowdowns of the cases of 100 us or more) screening at the factor itself
    caught 18 / 53 / 105 of 174 at x1.10 / x1.15 / x1.25, and at its square root
    29 / 58 / 107, with no false flag either way in the 256 A/A case pairs; the screen
    measured 34 cases again where the factor measured 29 (0-2 more per pair; 2026-12-07).
    """
    return math.sqrt(factor)


def is_time_benchmark(name):
    """Whether asv's benchmark `name` (module.Class.method) is a time_ benchmark."""
    return name.rsplit(".", 1)[-1].startswith("time_")


@dataclass(frozen=True)
class Verdict:
    """One case judged between two stacks."""

    case: str  # asv's id: benchmark('cpu', 2, 'int32', 'eager')
    benchmark: str
    params: dict
    kind: str  # SLOWER, FAILED, FASTER, FIXED
    before: float = None  # seconds (None: failed)
    after: float = None
    ratio: float = None  # after / before
    ratio_low: float = None  # the range the two 99% confidence intervals allow
    ratio_high: float = None
    test: str = ""  # which of asv's tests decided: MANN_WHITNEY, CI_APART, FACTOR_ONLY
    p_value: float = None  # Mann-Whitney U's, where it decided

    @property
    def regressed(self):
        return self.kind in REGRESSIONS

    def as_data(self):
        return {"case": self.case, "benchmark": self.benchmark, "params": self.params,
                "kind": self.kind, "before_s": self.before, "after_s": self.after,
                "ratio": self.ratio,
                "ratio_99ci": ([self.ratio_low, self.ratio_high]
                               if self.ratio_low is not None else None),
                "test": self.test or None, "p_value": self.p_value}


def significance(before, after):
    """(test, p-value or None): which of asv's tests decides for these two Measurements,
    as asv's is_different chooses, and Mann-Whitney's p where it is that one."""
    a, b = before.stats(), after.stats()
    if not (a and b) or a["repeat"] == 1 or b["repeat"] == 1:
        return FACTOR_ONLY, None
    first = [x for x in before.samples if not math.isnan(x)]
    second = [x for x in after.samples if not math.isnan(x)]
    if first and second and 1 / math.comb(len(first) + len(second),
                                          min(len(first), len(second))) < P_THRESHOLD:
        return MANN_WHITNEY, asv_stats.mann_whitney_u(first, second)[1]
    return CI_APART, None


def judge_case(before, after, factor=FACTOR):
    """The Verdict on one case (asvresults.Measurement before and after), or None when
    nothing changed by asv's rule, or the case cannot be compared (skipped, n/a)."""
    case = case_id(before.benchmark, [repr(v) for v in before.params.values()])
    common = {"case": case, "benchmark": before.benchmark, "params": dict(before.params)}
    if before.measured and after.failed:
        return Verdict(kind=FAILED, before=before.value, **common)
    if before.failed and after.measured:
        return Verdict(kind=FIXED, after=after.value, **common)
    change = compare_cases(before, after, factor)
    if change is None or not change.changed:
        return None
    test, p_value = significance(before, after)
    return Verdict(kind=SLOWER if change.ratio.value > 1 else FASTER, before=before.value,
                   after=after.value, ratio=change.ratio.value, ratio_low=change.ratio.low,
                   ratio_high=change.ratio.high, test=test, p_value=p_value, **common)


def judge(before, after, benchmarks=None, factor=FACTOR):
    """([Verdict] of every case that changed, number of cases compared) from run `before`
    to run `after` (asvresults.Run), over the time_ benchmarks of `benchmarks` (default:
    every time_ benchmark `before` has)."""
    names = [n for n in (benchmarks if benchmarks is not None else before.measurements)
             if is_time_benchmark(n)]
    verdicts, compared = [], 0
    for name in sorted(names):
        for old in before.benchmark(name):
            new = after.get(name, **old.params)
            if new is None:
                continue
            compared += ((old.measured and new.measured) or (old.measured and new.failed)
                         or (old.failed and new.measured))
            verdict = judge_case(old, new, factor)
            if verdict is not None:
                verdicts.append(verdict)
    # Biggest slowdown first; failures before everything.
    verdicts.sort(key=lambda v: (v.kind != FAILED, -abs(math.log(v.ratio)) if v.ratio else 0))
    return verdicts, compared


@dataclass
class Alert:
    """What changed between two stacks on one machine, for scripts and people."""

    machine: str
    previous: dict  # {"label", "commit"}
    new: dict
    factor: float
    verdicts: list = field(default_factory=list)
    compared: int = 0
    source: str = ""  # what measured it: "asv continuous", "run"
    env: str = ""  # asv's environment name
    asv_exit: int = None  # asv continuous's exit status, where it was the judge
    # The gate's first pass, where the cases it flagged were measured again: its Verdicts
    # on them, judged at screening_factor(factor) (those the second pass did not flag again
    # the same way: `not_confirmed`), and asv continuous's exit status on it (asv_exit is
    # then the second pass's).
    first_pass: list = None
    first_pass_asv_exit: int = None
    # {benchmark: why}: control_benchmarks, the same code on both stacks.
    controls: dict = field(default_factory=dict)

    def is_control(self, verdict):
        """A control's change of speed: the machine's, not the upgrade's (a failure stays
        a failure)."""
        return verdict.benchmark in self.controls and verdict.kind in (SLOWER, FASTER)

    @property
    def regressions(self):
        """Slower or failed cases, the controls' changes of speed left out."""
        return [v for v in self.verdicts if v.regressed and not self.is_control(v)]

    @property
    def improvements(self):
        """Faster or fixed cases, the controls' changes of speed left out."""
        return [v for v in self.verdicts if not v.regressed and not self.is_control(v)]

    @property
    def control_changes(self):
        """The controls asv's rule flagged: how far the machine's speed moved."""
        return [v for v in self.verdicts if self.is_control(v)]

    @property
    def asv_regressions(self):
        """What asv continuous calls a regression: every slower or failed case, controls
        included (it knows none)."""
        return [v for v in self.verdicts if v.regressed]

    def drift(self):
        """The largest change asv's rule found on a control, as a factor >= 1 (None: no
        control flagged)."""
        return largest_change(v.ratio for v in self.control_changes if v.ratio)

    @property
    def not_confirmed(self):
        """The first pass's verdicts that the second, measuring those cases again, did
        not repeat (same case, same kind)."""
        repeated = {(v.case, v.kind) for v in self.verdicts}
        return [v for v in self.first_pass or () if (v.case, v.kind) not in repeated]

    def as_data(self):
        data = {"machine": self.machine, "previous": self.previous, "new": self.new,
                "env": self.env, "source": self.source, "asv_exit": self.asv_exit,
                "factor": self.factor, "compared": self.compared,
                "regressed": bool(self.regressions),
                "regressions": [v.as_data() for v in self.regressions],
                "improvements": [v.as_data() for v in self.improvements],
                "controls": {"benchmarks": dict(self.controls),
                             "changed": [v.as_data() for v in self.control_changes]}}
        if self.first_pass is not None:
            # The first pass's verdicts are at this factor, not the one above.
            data["screening_factor"] = screening_factor(self.factor)
            data["first_pass"] = [v.as_data() for v in self.first_pass]
            data["first_pass_asv_exit"] = self.first_pass_asv_exit
            data["not_confirmed"] = [v.as_data() for v in self.not_confirmed]
        return data


def make_alert(machine, before, after, previous, new, benchmarks=None, factor=FACTOR,
               **details):
    """The Alert from run `before` (stack `previous`: {"label", "commit"}) to run `after`."""
    verdicts, compared = judge(before, after, benchmarks, factor)
    return Alert(machine, previous, new, factor, verdicts, compared, env=after.env_name,
                 **details)


def case_patterns(cases):
    """asv -b patterns that select exactly these cases (ids, as asv names them): asv
    matches each pattern against `name(param, ...)` of every combination."""
    return ["^" + re.escape(case) + "$" for case in cases]


def to_measure_again(verdicts):
    """asv -b patterns of the cases of `verdicts` that asv's test found faster or slower:
    what the gate measures again, of its first pass's verdicts at the screening factor (a
    failure, or a fix, is no draw of the machine)."""
    return case_patterns(v.case for v in verdicts if v.kind in (SLOWER, FASTER))


def confirmed(first_pass, second, first_pass_asv_exit=None):
    """The Alert `second` (a second pass over the cases of `first_pass`, the first pass's
    Verdicts on them) keeping only what both passes flagged the same way, and failures;
    it records the first pass (Alert.first_pass, and the verdicts not repeated)."""
    first = {(v.case, v.kind) for v in first_pass}
    kept = [v for v in second.verdicts
            if v.kind not in (SLOWER, FASTER) or (v.case, v.kind) in first]
    return replace(second, verdicts=kept, first_pass=list(first_pass),
                   first_pass_asv_exit=first_pass_asv_exit)


def summary_data(alerts, notes=()):
    """The JSON document of a list of Alerts; notes: what could not be compared, and why."""
    return {"format": FORMAT_VERSION, "rule": _rule_of(alerts),
            "regressed": any(a.regressions for a in alerts),
            "comparisons": [a.as_data() for a in alerts], "notes": list(notes)}


def rule(factor, second_pass=False):
    return (f"slower by more than {factor:g}x and significant by asv's test ({MANN_WHITNEY} "
            f"p < {P_THRESHOLD} on the samples, else {CI_APART}; one sample: the factor "
            "alone)" + (f" in a second pass of the cases the first flagged slower by more "
                        f"than {screening_factor(factor):.4g}x" if second_pass else "")
            + ", or failed after running before")


def _rule_of(alerts):
    return rule(alerts[0].factor if alerts else FACTOR,
                any(a.first_pass is not None for a in alerts))


def _stack(stack):
    return f"{stack['label']} ({stack['commit'][:8]})"


def _confidence(verdict):
    if verdict.kind == FAILED:
        return "failed on the new stack"
    if verdict.p_value is not None:
        return f"{verdict.test}, p = {verdict.p_value:.2g}"
    return verdict.test


def _ratio(verdict):
    if verdict.ratio is None:
        return "n/a"
    return fmt.ratio(Estimate(verdict.ratio, verdict.ratio_low, verdict.ratio_high))


def _second_pass(alert):
    dropped = alert.not_confirmed
    screen = screening_factor(alert.factor)
    past = [v for v in alert.first_pass
            if v.ratio is not None and not 1 / alert.factor <= v.ratio <= alert.factor]
    line = (f"The first pass flagged {len(alert.first_pass)} case(s) past x{screen:.4g} "
            f"({len(past)} past x{alert.factor:g}); each was measured again, and only what "
            "the second pass flagged the same way, past the factor, counts here.")
    if dropped:
        line += " Not flagged again the same way: " + ", ".join(
            f"`{v.case}` ({v.kind}, {_ratio(v)})" for v in dropped) + "."
    return line


def _controls(alert):
    """What the controls say of the machine during the comparison; None without any."""
    if not alert.controls:
        return None
    what = "; ".join(f"`{name}` ({why})" for name, why in sorted(alert.controls.items()))
    line = f"Controls, the same code on both stacks: {what}."
    changed = alert.control_changes
    passes = " the same way in both passes" if alert.first_pass is not None else ""
    first = [v for v in alert.first_pass or () if alert.is_control(v) and v.ratio]
    if first:
        drift = largest_change(v.ratio for v in first)
        line += (f" The first pass flagged {len(first)} of their cases past "
                 f"x{screening_factor(alert.factor):.4g}, by up to x{drift:.2f}.")
    if not changed:
        return line + (f" asv's rule flagged none of their cases{passes}: the machine held "
                       "its speed to the factor there.")
    return line + (
        f" asv's rule flagged {len(changed)} of their cases{passes}: " + ", ".join(
            f"`{v.case}` ({v.kind}, {_ratio(v)})" for v in changed)
        + f". That is the machine's speed moving during the comparison, by up to "
        f"x{alert.drift():.2f}, not a change of the stacks, and none of it counts as a "
        "regression; a change of the other cases within that much may be the machine's too.")


def gate_command(alert):
    """The command that measures the two stacks of an Alert interleaved, for a verdict."""
    return (f"python -m tfgpubench gate --previous {alert.previous['label']} "
            f"--new {alert.new['label']}")


def sequential_caveat(alert):
    """What a comparison of two sequential runs (`run`'s) cannot tell, and what can; None
    for one measured interleaved (the gate's `asv continuous`) or with nothing flagged."""
    if alert.source != "run" or not alert.regressions:
        return None
    return ("Measured one stack after the other, minutes apart: what the machine's speed "
            "did between the two runs reads here as a change of the release, often of many "
            "cases alike. Before acting on it, measure the two interleaved, which puts the "
            f"machine's drift on both alike: `{gate_command(alert)}`.")


def markdown(alerts, heading="Benchmark regressions", notes=()):
    """A Markdown summary of the Alerts: one table of regressions per comparison."""
    lines = [f"## {heading}", "", f"A regression: {_rule_of(alerts)}.",
             ""]
    lines += [f"- {note}" for note in notes] + ([""] if notes else [])
    if not alerts:
        lines.append("Nothing was compared.")
    for alert in alerts:
        head = (f"### {alert.machine}: {_stack(alert.previous)} -> {_stack(alert.new)}")
        source = f" by {alert.source}" if alert.source else ""
        lines += [head, ""]
        if alert.first_pass:
            lines += [_second_pass(alert), ""]
        controls = _controls(alert)
        lines += [controls, ""] if controls else []
        if not alert.regressions:
            lines.append(f"No regressions: {alert.compared} cases compared{source}, "
                         f"{len(alert.improvements)} faster or fixed.")
            lines.append("")
            continue
        lines.append(f"**{len(alert.regressions)} regression(s)** of {alert.compared} cases "
                     f"compared{source}:")
        caveat = sequential_caveat(alert)
        lines += ["", caveat] if caveat else []
        lines += ["", "| Case | Before | After | Ratio (99% CI range) | Confidence |",
                  "|---|---|---|---|---|"]
        for verdict in alert.regressions:
            lines.append(f"| `{verdict.case}` | {fmt.seconds(verdict.before)} | "
                         f"{fmt.seconds(verdict.after)} | {_ratio(verdict)} | "
                         f"{_confidence(verdict)} |")
        lines.append("")
    return "\n".join(lines)


# --- the edge: which result files asv judged; reading them; writing the summary ----------

def environment_names(config_path, env_spec=()):
    """The names of the asv environments `asv run` and `asv continuous` use with this
    configuration (their result files are COMMIT-NAME.json)."""
    conf = Config.load(str(config_path))
    return [env.name for env in asv_environment.get_environments(conf, list(env_spec),
                                                                 verbose=False)]


def selected_benchmarks(config_path, patterns):
    """The benchmarks asv selects with these -b patterns (all for none), by asv's own
    matching, from the suite's benchmarks.json."""
    return list(Benchmarks.load(Config.load(str(config_path)), regex=list(patterns) or None))


def selected_cases(config_path, patterns):
    """The case ids (`name(param, ...)`) asv selects with these -b patterns, by asv's own
    matching, from the suite's benchmarks.json."""
    benchmarks = Benchmarks.load(Config.load(str(config_path)), regex=list(patterns))
    cases = set()
    for name, benchmark in benchmarks.items():
        combinations = list(itertools.product(*benchmark["params"]))
        chosen = benchmarks.benchmark_selection.get(name)
        if chosen is None:  # not parameterized: the benchmark itself
            cases.add(name)
            continue
        cases.update(case_id(name, combinations[index]) for index in chosen)
    return cases


def load_stack_run(results_dir, machine, commit, env_names):
    """The asvresults.Run of `commit` on `machine` in the first of `env_names` that has a
    result file, or None."""
    benchmarks = load_benchmarks(results_dir)
    files = {path.name: path for path in result_files(results_dir, machine, commit)}
    for env_name in env_names:
        path = files.get(f"{commit[:8]}-{env_name}.json")
        if path is not None:
            run, _ = load_run(path, machine, benchmarks, results_dir)
            if run is not None:
                return run
    return None


def compare_stacks(results_dir, machine, previous, new, env_names, benchmarks=None,
                   factor=FACTOR, **details):
    """(Alert or None, note) from stack `previous` to stack `new` ({"label", "commit"}) on
    `machine`, from their result files in the first environment both have."""
    for env_name in env_names:
        before = load_stack_run(results_dir, machine, previous["commit"], [env_name])
        after = load_stack_run(results_dir, machine, new["commit"], [env_name])
        if before is not None and after is not None:
            return make_alert(machine, before, after, previous, new, benchmarks, factor,
                              **details), None
    return None, (f"{previous['label']} -> {new['label']} on {machine}: not compared, no "
                  f"result files of both in {' or '.join(env_names) or 'any environment'}")


def write_summary(alerts, json_path=None, markdown_path=None, notes=(), as_lines=False,
                  heading="Benchmark regressions"):
    """Write the summary's JSON (or JSON Lines, one comparison a line) and Markdown, each
    replaced whole (written beside, then renamed: a kill leaves the old or the new)."""
    if json_path:
        data = summary_data(alerts, notes)
        if as_lines:
            text = "".join(json.dumps({"format": data["format"], "rule": data["rule"], **c},
                                      sort_keys=True) + "\n" for c in data["comparisons"])
        else:
            text = json.dumps(data, indent=1, sort_keys=True) + "\n"
        _replace(json_path, text)
    if markdown_path:
        _replace(markdown_path, markdown(alerts, heading, notes) + "\n")


def _replace(path, text):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(path.name + ".tmp")
    scratch.write_text(text, encoding="utf-8")
    os.replace(scratch, path)
