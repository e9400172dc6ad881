"""`python -m tfgpubench.selfcheck`: the self-check command on its own."""

import sys

from ..cli import main

raise SystemExit(main(["selfcheck", *sys.argv[1:]]))
