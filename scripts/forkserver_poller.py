"""What asv's forkserver costs a TensorFlow multiply while it waits for its benchmark process.

Under asv's forkserver launch method (what `tfgpubench run` uses on Linux) the process
that forked a benchmark process polls for its end all the while it runs: os.waitpid
(WNOHANG), then a sleep of up to 1 ms (asv_runner/server.py), ~1,000 wake-ups a second
on one of the cores, while the TensorFlow engine's threads use every core. The bare loop
the self-check holds the suite to has no such neighbour. This script measures what one
costs, paired: one process imports TensorFlow and times `tf.multiply(x, 2)` of one size
in loops; a poller process beside it polls as asv_runner's does, and each turn times the
multiply once while it polls and once while it is stopped (SIGSTOP), the order
alternating turn by turn, so the machine's drift falls on both alike. Prints the paired
ratio (polling / stopped) per size.

    python scripts/forkserver_poller.py [--sizes 512 1000 2048] [--dtype float32] [--turns 24]

It shares no code with the suite and runs under the suite's malloc settings
(benchmarks/allocator.py), as the engine does. What it found is in
docs/selfcheck-runs.md ("Is it asv's forkserver?"): not enough to hold the forkserver
still for.
"""

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time

ALLOCATOR_ENV = {"MALLOC_ARENA_MAX": "1", "MALLOC_MMAP_THRESHOLD_": str(32 * 2**20),
                 "MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": str(2**30)}

# asv_runner's wait loop, as it runs in the forkserver while a benchmark process lives.
POLLER = """
import time
pause = 1e-15
while True:
    pause *= 10
    time.sleep(min(pause, 0.001))
"""

# One TensorFlow process: a line in, a time out (median of 7 loops of ~20 ms, per op,
# after one untimed).
TIMER = """
import sys, time
import numpy as np
import tensorflow as tf

size, dtype = int(sys.argv[1]), sys.argv[2]
with tf.device("/CPU:0"):
    x = tf.constant(np.ones((size, size), dtype=dtype))

    def loop(n):
        start = time.perf_counter()
        for _ in range(n):
            y = tf.multiply(x, 2)
        y.numpy()
        return (time.perf_counter() - start) / n

    loop(100)  # warm: the first ops of a process run slower
    n = 1
    while loop(n) * n < 0.02:
        n *= 2
    print("ready", flush=True)
    for _ in sys.stdin:
        loop(n)  # untimed: TensorFlow's threads wake up after the wait for the line
        print(sorted(loop(n) for _ in range(7))[3], flush=True)
"""


def paired(size, dtype, turns):
    """(times with the poller polling, times with it stopped), one of each per turn, in
    seconds per op: the poller is started once and stopped (SIGSTOP) or continued
    (SIGCONT) for each time, as benchmarks/engine.py holds asv's forkserver."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", **{
        name: value for name, value in ALLOCATOR_ENV.items() if name not in os.environ})
    timer = subprocess.Popen([sys.executable, "-c", TIMER, str(size), dtype], env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    poller = subprocess.Popen([sys.executable, "-c", POLLER])
    polling, stopped = [], []
    try:
        if timer.stdout.readline().strip() != "ready":
            raise SystemExit(f"the TensorFlow timer for {size}x{size} did not start")
        for turn in range(turns):
            for poll in ((True, False) if turn % 2 == 0 else (False, True)):
                os.kill(poller.pid, signal.SIGCONT if poll else signal.SIGSTOP)
                time.sleep(0.02)
                timer.stdin.write("time\n")
                timer.stdin.flush()
                (polling if poll else stopped).append(float(timer.stdout.readline()))
    finally:
        poller.kill()
        poller.wait()
        timer.stdin.close()
        timer.wait()
    return polling, stopped


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[512, 1000, 2048])
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--turns", type=int, default=24)
    args = parser.parse_args(argv)
    print(f"{os.cpu_count()} CPUs; {args.turns} turns per size, each with the poller polling "
          "and stopped")
    for size in args.sizes:
        polling, stopped = paired(size, args.dtype, args.turns)
        ratios = [a / b for a, b in zip(polling, stopped)]
        print(f"{size}x{size} {args.dtype} eager: poller polling "
              f"{statistics.median(polling) * 1e6:.1f} us, stopped "
              f"{statistics.median(stopped) * 1e6:.1f} us; paired ratio median "
              f"x{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})",
              flush=True)


if __name__ == "__main__":
    main()
