"""`python -m tfgpubench COMMAND`: one module per command, in tfgpubench/commands/."""

import argparse
import importlib
import signal
import sys

from .runner import Terminated

COMMANDS = {
    "doctor": "versions, devices and where a '/GPU:0' multiply really runs",
    "stacks": "the table of TensorFlow / tensorflow-metal stacks",
    "run": "run the suite on this machine's stacks, publish to html/",
    "fleet": "the CI fleet's steps: discover, measure (run and gate), merge, publish",
    "gate": "asv continuous from one stack to the next; regressions as JSON and Markdown",
    "publish": "publish html/ from results/: asv's site, working offline, and the report page",
    "report": "speedup, crossover, fits and verdicts from results/",
    "selfcheck": "fidelity, noise, sensitivity and cost of the suite",
}


class OneLineErrors(argparse.ArgumentParser):
    """An unusable argument is one line naming it (exit status 2), not the usage text."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser():
    parser = OneLineErrors(
        prog="tfgpubench",
        description="asv benchmarks of tf.multiply on CPU and GPU, across TensorFlow releases",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        module = importlib.import_module(f"tfgpubench.commands.{name}")
        command = sub.add_parser(name, help=help_text, description=module.__doc__)
        module.add_arguments(command)
        command.set_defaults(handler=module.run)
    return parser


def _raise_terminated(signum, frame):
    raise Terminated


def main(argv=None):
    args = build_parser().parse_args(argv)
    # SIGTERM (kill, a CI job's timeout) unwinds as Ctrl-C does: the selfcheck's load
    # process, asv, the TensorFlow engines and the scratch folders end with the command.
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        return args.handler(args)
    except KeyboardInterrupt as interrupt:
        terminated = isinstance(interrupt, Terminated)
        print("terminated" if terminated else "interrupted", file=sys.stderr)
        return 128 + (signal.SIGTERM if terminated else signal.SIGINT)
    finally:
        signal.signal(signal.SIGTERM, previous)
