"""Named points where a kill test may stop the tooling: off unless asked.

With TFGPUBENCH_PAUSE_AT=NAME in the environment, the process prints
"tfgpubench: paused at NAME" and sleeps when it reaches `pause_point(NAME)`,
so a test can send SIGKILL at exactly that step of a write (what a crash or
a closed laptop does at a random one). The points:

    stacks-swap    .stacks/ moved aside, the newly generated one not yet in place
    ledger-append  a stack's result saved, its line in installed-versions.jsonl not yet

Unset (the default), `pause_point` returns at once.
"""

import os
import time

from .names import PAUSE_AT_ENV

# Long enough for any test to send its signal; a forgotten variable is noticed.
PAUSE_SECONDS = 600


def pause_point(name):
    if os.environ.get(PAUSE_AT_ENV) == name:
        print(f"tfgpubench: paused at {name}", flush=True)
        time.sleep(PAUSE_SECONDS)
