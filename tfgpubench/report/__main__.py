"""`python -m tfgpubench.report`: the report command on its own (same as `tfgpubench report`)."""

import sys

from ..cli import main

raise SystemExit(main(["report", *sys.argv[1:]]))
