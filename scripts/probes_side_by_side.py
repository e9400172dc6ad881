"""Experiment: does an op split over every core see the same machine as the 2x2 probe?

The self-check's stability part once timed only the 2x2 int32 eager multiply, which runs
as on one thread, and passed at hours when the large cases' bare loop disagreed with
itself by more than the targets. This script times, in turn, the same eager multiply at
several sizes, with TensorFlow's default threads and with TF_NUM_INTRAOP_THREADS=1 (two
reference workers, no suite code), SECONDS of ~10 ms loops each, and prints every
probe's p90 / fast and median / fast (selfcheck.stability.summarize) and its fast time,
one line per pass over them, for MINUTES:

    python scripts/probes_side_by_side.py [--minutes 10] [--seconds 6]

At moments when the 2x2 probe is steady, a probe that is not is what the machine does to
ops of that kind, not what a harness adds.
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tfgpubench.selfcheck.reference import ReferenceWorker  # noqa: E402
from tfgpubench.selfcheck.stability import summarize  # noqa: E402

ONE_THREAD = {"TF_NUM_INTRAOP_THREADS": "1"}
# (threads, size): every one float32 eager but the seed's 2x2 int32.
PROBES = [("default", 2), ("default", 256), ("one", 256), ("default", 512), ("one", 512),
          ("default", 2048), ("one", 2048)]


def case(size):
    return (size, "int32" if size == 2 else "float32", "eager")


def describe(threads, size, got):
    """One probe's figures, short: 'default 512: 85 us 1.33/1.09' (p90 / fast, then
    median / fast)."""
    return (f"{threads} {size}: {got['fast'] * 1e6:.0f} us "
            f"{got['p90_over_fast']:.2f}/{got['median_over_fast']:.2f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seconds", type=float, default=6.0, help="of loops per probe")
    args = parser.parse_args(argv)
    workers = {"default": ReferenceWorker(), "one": ReferenceWorker(ONE_THREAD)}
    end = time.time() + args.minutes * 60
    print("each probe: fast (10th percentile) per op, p90 / fast, median / fast", flush=True)
    try:
        while time.time() < end:
            row = [describe(threads, size,
                            summarize(workers[threads].loops(*case(size), args.seconds)))
                   for threads, size in PROBES]
            print(time.strftime("%H:%M:%S"), " | ".join(row), flush=True)
    finally:
        for worker in workers.values():
            worker.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
