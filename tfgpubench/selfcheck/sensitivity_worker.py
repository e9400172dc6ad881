"""A worker that times the suite's blocks with a bare clock: the sensitivity check's truth.

`python -m tfgpubench.selfcheck.sensitivity_worker BENCHMARK_DIR` reads one case per line
on stdin ("device size dtype mode") and answers one JSON line: the median
per-op time of the suite's own block, timed back to back with
`time.perf_counter`, or the reason the case is skipped. The driver keeps two
workers (one per environment, e.g. TF_NUM_INTRAOP_THREADS=1) and asks them
in turn, so they never run at the same time and drift hits both alike.
"""

import json
import os
import sys

from ..suite import suite_module

# Enough samples per case that the median is steady, few enough to stay cheap.
MIN_SECONDS = 0.15
MIN_BLOCKS = 7


def time_case(suite, device, size, dtype, mode):
    common, checks, timing = suite
    reason = checks.skip_reason(device, size, dtype, mode)
    if reason:
        return {"skip": reason}
    block = common.block_runner(device, size, dtype, mode, checks.wait_op(device))
    # The suite's own side-by-side timer: the reference is plain perf_counter
    # around the same blocks, no asv.
    median = timing.per_op_seconds(block, min_time=MIN_SECONDS, min_blocks=MIN_BLOCKS)
    return {"median": median}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    benchmark_dir = os.path.abspath(argv[0])
    suite = tuple(suite_module(name, benchmark_dir) for name in ("common", "checks", "timing"))
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        device, size, dtype, mode = line.split()
        try:
            answer = time_case(suite, device, int(size), dtype, mode)
        except Exception as error:  # a case that fails must not stop the others
            answer = {"skip": f"{type(error).__name__}: {error}"}
        print(json.dumps(answer), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
