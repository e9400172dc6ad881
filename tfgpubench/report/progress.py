"""Progress lines on stderr for the report's slower steps (drawing figures)."""

import sys
import time


class Progress:
    """Counts steps of a known total and says which one runs, on stderr.

    On a terminal the line is rewritten in place; elsewhere (CI logs) each
    step gets its own line so the log shows where time went.
    """

    def __init__(self, total, what, stream=None, enabled=True):
        self.total = max(total, 1)
        self.what = what
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.done = 0
        self.started = time.monotonic()
        self._inline = bool(getattr(self.stream, "isatty", lambda: False)())

    def step(self, detail):
        self.done += 1
        if not self.enabled:
            return
        line = f"{self.what} [{self.done}/{self.total}] {detail}"
        if self._inline:
            self.stream.write("\r\x1b[K" + line[:150])
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def finish(self, summary):
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.started
        prefix = "\r\x1b[K" if self._inline else ""
        self.stream.write(f"{prefix}{self.what}: {summary} ({elapsed:.1f} s)\n")
        self.stream.flush()
