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

from ..suite import load_suite_common

# Enough samples per case that the median is steady, few enough to stay cheap.
MIN_SECONDS = 0.15
MIN_BLOCKS = 7


def time_case(common, device, size, dtype, mode):
    reason = common.skip_reason(device, size, dtype)
    if reason:
        return {"skip": reason}
    block = common.block_runner(device, size, dtype, mode)
    # The suite's own side-by-side timer: the reference is plain perf_counter
    # around the same blocks, no asv.
    median = common.per_op_seconds(block, block.ops, min_time=MIN_SECONDS, min_blocks=MIN_BLOCKS)
    return {"median": median}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    common = load_suite_common(os.path.abspath(argv[0]))
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        device, size, dtype, mode = line.split()
        try:
            answer = time_case(common, device, int(size), dtype, mode)
        except Exception as error:  # a case that fails must not stop the others
            answer = {"skip": f"{type(error).__name__}: {error}"}
        print(json.dumps(answer), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
