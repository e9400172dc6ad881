"""For tests/stacks/test_kill.py only: stop asv while it writes a result file.

With this directory on PYTHONPATH and TFGPUBENCH_TEST_PAUSE_RESULT=PREFIX set,
asv's write of a result file whose name starts with PREFIX leaves the file cut
in half, prints "paused in asv's write of PATH" and sleeps, so the test can
SIGKILL asv at that moment. asv's util.write_json opens the file for writing
(truncating it) and then writes; a kill in between leaves exactly such a file.
Without the variable, or in a Python without asv (a benchmark environment),
nothing changes.
"""

import os
import time

PREFIX = os.environ.get("TFGPUBENCH_TEST_PAUSE_RESULT")

if PREFIX:
    try:
        from asv import util
    except ImportError:
        util = None

    if util is not None:
        _write_json = util.write_json

        def write_json(path, *args, **kwargs):
            _write_json(path, *args, **kwargs)
            if os.path.basename(path).startswith(PREFIX):
                with open(path, "rb") as f:
                    content = f.read()
                with open(path, "wb") as f:
                    f.write(content[: len(content) // 2])
                print(f"paused in asv's write of {path}", flush=True)
                time.sleep(600)

        util.write_json = write_json
