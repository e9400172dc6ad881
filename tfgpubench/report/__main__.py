"""`python -m tfgpubench.report`: the report command on its own (same as `tfgpubench report`)."""

import argparse

from . import cli

parser = argparse.ArgumentParser(prog="tfgpubench report", description=cli.__doc__.splitlines()[0])
cli.add_arguments(parser)
raise SystemExit(cli.run(parser.parse_args()))
