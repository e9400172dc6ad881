"""Gate an upgrade: `asv continuous` from the previous stack to the new one on this machine.

Both stacks are installed and their time_ benchmarks measured side by side (asv's
continuous: one run, the two commits; arguments after `--` go to it, e.g.
`-- --quick -b Wait.time_wait`, whose -b replace the time_ selection). The exit status
is asv continuous's: 0 no regression, 1 a regression ("PERFORMANCE DECREASED"), 2 a
benchmark failed (asv then compares nothing). A bad input stops the gate before
anything runs: one line, exit status 2, no summary.

Every case the first pass finds slower or faster by asv's test past the screening factor
(the factor's square root: alerts.screening_factor), is measured again, both stacks, in an
`asv continuous` of those cases alone (its results replace the first's), and is flagged
only where that second pass flags it the same way, past the factor; the exit status is
then 1 where a slowdown stays, else 0, or 2 where a benchmark failed (asv's own on each
pass is in the JSON summary). On a shared machine a case's rounds can differ by more than
the factor, and a round that ran slow flags a case as surely as a change does; two passes
rarely both do, the same way (the README, "How good are these numbers"). Screening below
the factor gives a real change that read low in the first pass its second pass.
--no-confirm judges the first pass alone, at the factor.

--json and --markdown write the regressions (machine, stacks and commits, each case,
its ratio with the 99% CI range, and the test that decided) from the very result files
asv continuous saved and judged, by asv's own rule (tfgpubench/alerts.py); the
Markdown is made for a CI job summary ($GITHUB_STEP_SUMMARY).
"""

import argparse
import sys
from pathlib import Path

from .. import alerts
from ..config import add_config_argument
from ..names import GATED_BENCHMARKS, TABLE_FILE
from ..runner import (
    RunRefused,
    asv_command,
    check_results,
    choose_machine,
    launch_method_args,
    run_asv,
    split_bench_args,
    stack_asv_args,
    stack_controls,
    start,
)
from ..stacks import ledger
from ..stacks import repo as stacks_repo
from ..stacks.table import TableError, load_table
from .run import open_session, refuse


def add_arguments(parser):
    add_config_argument(parser)
    parser.add_argument("--previous", required=True, metavar="LABEL",
                        help="the stack upgraded from (a label of stacks.toml)")
    parser.add_argument("--new", required=True, metavar="LABEL",
                        help="the stack upgraded to, of the same section")
    parser.add_argument("--machine", help="name of this machine in results/ (default: asv's, "
                                          "the host name)")
    parser.add_argument("--factor", type=float, default=alerts.FACTOR,
                        help="how much slower counts, with asv's significance test "
                             "(default: %(default)s)")
    parser.add_argument("--confirm", action=argparse.BooleanOptionalAction, default=True,
                        help="measure again the cases the first pass finds changed past the "
                             "factor's square root, and judge them on that second pass "
                             "(default: on)")
    parser.add_argument("--json", metavar="FILE", help="write the regressions as JSON here")
    parser.add_argument("--markdown", metavar="FILE",
                        help="write them as Markdown here (e.g. $GITHUB_STEP_SUMMARY)")
    parser.add_argument("asv_args", nargs=argparse.REMAINDER,
                        help="after --: arguments for asv continuous, e.g. -- --quick")


def gate_asv_args(stack, asv_args):
    """The arguments that pick `stack`'s time benchmarks for asv continuous: the user's
    -b if any, else every time_ benchmark; a comparator stack's, the comparators' (all
    time_ benchmarks; the others need TensorFlow, which it has not)."""
    if stack.is_comparators:
        return stack_asv_args(stack, asv_args)
    patterns, rest = split_bench_args(asv_args)
    return rest + [arg for pattern in patterns or [GATED_BENCHMARKS] for arg in ("-b", pattern)]


def judge_twice(continuous, asv_args, confirm=True, selected_cases=None, screen=None):
    """(exit status, Alert or None, note) of the gate. `continuous(asv_args)` runs asv
    continuous and judges the files it saved at the factor; `screen()` judges the same
    files at the screening factor (alerts.screening_factor; None: at the factor). The cases
    the screen finds faster or slower are measured again by a second `continuous`
    selecting them alone, and a case is flagged where that pass flags it the same way
    (alerts.confirmed); the exit status is then 1 where a slowdown that is no control
    stays, else 0, or asv's 2 where a benchmark failed. Where the first pass flagged only
    controls, there is no second pass. selected_cases(patterns): the cases asv's -b would
    select; where they are not the screened ones, the first pass decides (measuring
    others again would confirm nothing)."""
    code, alert, note = continuous(asv_args)
    if not (confirm and alert and code in (0, 1)):
        return code, alert, note
    # Judged now: the second pass's results will replace these files.
    screened = screen() if screen else alert
    if screened is None:
        print("warning: the first pass could not be judged at the screening factor: only "
              "its cases past the factor are measured again", file=sys.stderr)
        screened = alert
    changed = (alerts.SLOWER, alerts.FASTER)
    first_pass = [v for v in screened.verdicts if v.kind in changed]
    # A case past the factor is past its square root too; should the two ever disagree,
    # no case the first pass flagged goes unmeasured.
    picked = {v.case for v in first_pass}
    first_pass += [v for v in alert.verdicts if v.kind in changed and v.case not in picked]
    again = alerts.to_measure_again(first_pass)
    if not again or all(alert.is_control(v) for v in first_pass):
        # Nothing, or only controls, to measure again: a second pass could flag no
        # regression of the upgrade.
        return code, alert, note
    if selected_cases is not None and selected_cases(again) != {v.case for v in first_pass}:
        why = ("the flagged cases could not be selected alone for a second pass: judged on "
               "the first")
        print(f"warning: {why}", file=sys.stderr)
        return code, alert, f"{note}; {why}" if note else why
    past = sum(v.kind in changed for v in alert.verdicts)
    print(f"\nasv continuous flagged {past} case(s) past x{alert.factor:g}, and "
          f"{len(again) - past} more past x{alerts.screening_factor(alert.factor):.4g} by "
          "asv's test; measuring them again, both stacks, before the verdict (--no-confirm: "
          "judge the first pass alone)", flush=True)
    # The second pass on its own: its samples replace the first's, never join them.
    rest = [arg for arg in split_bench_args(asv_args)[1] if arg != "--append-samples"]
    second_code, second, note = continuous(
        rest + [arg for pattern in again for arg in ("-b", pattern)])
    if second is None:
        return second_code, second, note
    kept = alerts.confirmed(first_pass, second, first_pass_asv_exit=code)
    if second_code not in (0, 1):
        return second_code, kept, note
    return (1 if kept.regressions else 0), kept, note


def exit_status_without_controls(code, alert):
    """The gate's exit status once the controls are set apart: asv's 1 where every case it
    flagged slower is a control (the machine, not the upgrade) is 0. The controls' drift
    is printed whenever they moved."""
    if alert is not None and alert.control_changes:
        print(f"the controls, the same code on both stacks, moved by up to "
              f"x{alert.drift():.2f} during the gate: the machine's speed, not the "
              "upgrade's", flush=True)
    if alert is None or code != 1 or alert.regressions or not alert.asv_regressions:
        return code
    print("asv continuous flagged only controls: no regression of the upgrade", flush=True)
    return 0


def run(args):
    if not Path(args.config).is_file():
        return refuse(f"--config {args.config}: no asv configuration here")
    if not args.factor > 1:
        return refuse(f"--factor {args.factor}: must be more than 1")
    try:
        session = open_session(args)
    except RunRefused as exc:
        return refuse(str(exc))
    try:
        stacks = {stack.label: stack for stack in load_table(session.root / TABLE_FILE)}
        for option, label in (("--previous", args.previous), ("--new", args.new)):
            if label not in stacks:
                raise RunRefused(f"{option} {label}: no stack of {TABLE_FILE} has that label")
        previous, new = stacks[args.previous], stacks[args.new]
        if previous.os != new.os:
            raise RunRefused(f"{previous.label} is a {previous.os} stack, {new.label} a "
                             f"{new.os} one: a gate compares two stacks of one section")
        check_results(session)
        session.machine, session.here = choose_machine(args.machine, session.results_dir)
    except (TableError, RunRefused) as exc:
        return refuse(exc)

    try:
        hashes = stacks_repo.build(list(stacks.values()), session.root / session.conf["repo"],
                                   ledger.own_stacks(session.results_dir))
    except stacks_repo.RepoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    start(session)
    asv_args = gate_asv_args(new, session.asv_args)
    stacks_compared = ({"label": previous.label, "commit": hashes[previous.label]},
                       {"label": new.label, "commit": hashes[new.label]})
    selected = alerts.selected_benchmarks(session.config_path, split_bench_args(asv_args)[0])

    def judged(factor, code=None):
        # asv continuous saved both stacks' results and judged them from those files: read
        # the same files, for the benchmarks it selected, in the environments it used.
        return alerts.compare_stacks(
            session.results_dir, session.machine, *stacks_compared,
            alerts.environment_names(session.config_path), selected, factor,
            source="asv continuous", asv_exit=code,
            controls=stack_controls(session, *(s["commit"] for s in stacks_compared)))

    def continuous(args_for_asv):
        code = run_asv(asv_command(
            ["continuous", hashes[previous.label], hashes[new.label], "--machine",
             session.machine, "--factor", str(args.factor), *launch_method_args(args_for_asv),
             *args_for_asv], session.config_path))
        for message in ledger.repair(session.results_dir, session.snapshot_dir):
            print(message)
        alert, note = judged(args.factor, code)
        if alert is not None and code in (0, 1) and bool(alert.asv_regressions) != (code == 1):
            # One rule, two readers of the same files: they must agree; say so if not.
            print(f"warning: asv continuous exited {code} but the summary finds "
                  f"{len(alert.asv_regressions)} regression(s)", file=sys.stderr)
        return code, alert, note

    code, alert, note = judge_twice(
        continuous, asv_args, args.confirm,
        lambda patterns: alerts.selected_cases(session.config_path, patterns),
        screen=lambda: judged(alerts.screening_factor(args.factor))[0])
    code = exit_status_without_controls(code, alert)
    found = [alert] if alert else []
    notes = [note] if note else []
    if code == 2:
        notes.append("asv continuous exited 2: a benchmark failed, and asv compared nothing; "
                     "the cases below are from the results it saved")
    alerts.write_summary(found, args.json, args.markdown, notes,
                         heading=f"Gate {previous.label} -> {new.label} on {session.machine}")
    for path in filter(None, (args.json, args.markdown)):
        print(f"regressions summary: {path}")
    return code
