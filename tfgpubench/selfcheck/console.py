"""How the self-check talks while it works: figures on stdout, progress on stderr."""

import sys


def progress(message):
    print(message, file=sys.stderr, flush=True)


def section(title):
    print(f"\n== {title}", flush=True)
