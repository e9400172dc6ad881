"""`python -m tfgpubench COMMAND`: one module per command.

Each command module exposes `add_arguments(parser)` and `run(args) -> int`
and imports nothing heavy (TensorFlow, matplotlib) at module level, so
`--help` stays instant.
"""

import argparse
import importlib
import sys

COMMANDS = {
    "doctor": ("tfgpubench.doctor", "versions, devices and where a '/GPU:0' multiply really runs"),
    "stacks": ("tfgpubench.stacks.cli", "the table of TensorFlow / tensorflow-metal stacks"),
    "run": ("tfgpubench.runner", "run the suite on this machine's stacks, publish to html/"),
    "report": ("tfgpubench.report.cli", "speedup, crossover, fits and verdicts from results/"),
    "selfcheck": ("tfgpubench.selfcheck", "fidelity, noise, sensitivity and cost of the suite"),
}


def build_parser():
    parser = argparse.ArgumentParser(prog="tfgpubench", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        module = importlib.import_module(module_name)
        command = sub.add_parser(name, help=help_text, description=module.__doc__)
        module.add_arguments(command)
        command.set_defaults(handler=module.run)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
