"""Experiment: does this machine's speed step for seconds at a time, where nothing inside
it can see why? The case for the gate's controls (tfgpubench/alerts.py).

One forked process after another, each times numpy's multiply of a 2x2 array (what
numpy_multiply.NumpyMultiply times at 2x2: known code, the same in every stack with one
numpy) in BLOCKS blocks of CALLS calls, and prints its fastest and median block per call,
beside the share of the machine's CPU time the hypervisor says it took away while that
process ran (steal, /proc/stat) and how many other processes were runnable as it ended
its blocks. A steady
machine reads the same in every process; a VM whose neighbours take its cores reads two
speeds, in runs of processes, with steal at 0.

    python scripts/speed_by_process.py [--processes 30]      # ~10 s per 30 processes

Not part of the self-check (`selfcheck --only stability` measures the same thing its
own way, within one process); this one shows it process by process, as asv's rounds
see it.
"""

import argparse
import os
import statistics
import time

import numpy as np

BLOCKS, CALLS = 15, 20_000


def per_call_ns():
    """Each block's time per call of np.multiply(x, 2), x a 2x2 int32 array, and last
    the processes runnable besides this one as its last block ended."""
    x = np.ones((2, 2), dtype=np.int32)
    blocks = []
    for _ in range(BLOCKS):
        start = time.perf_counter()
        for _ in range(CALLS):
            np.multiply(x, 2)
        blocks.append((time.perf_counter() - start) / CALLS * 1e9)
    return blocks + [others_runnable()]


def in_a_fork(work):
    """work()'s list of floats, computed in a forked process."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.write(write, " ".join(map(repr, work())).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        values = [float(v) for v in pipe.read().split()]
    os.waitpid(pid, 0)
    return values


def cpu_times():
    """(steal, total) jiffies of the whole machine, from /proc/stat's first line."""
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    return fields[7], sum(fields)


def others_runnable():
    """Runnable processes besides the caller, from /proc/loadavg's running count."""
    with open("/proc/loadavg") as f:
        return int(f.read().split()[3].split("/")[0]) - 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=30)
    args = parser.parse_args()
    fastest, medians = [], []
    for index in range(args.processes):
        steal_before, total_before = cpu_times()
        *blocks, others = in_a_fork(per_call_ns)
        steal_after, total_after = cpu_times()
        steal = (steal_after - steal_before) / max(1, total_after - total_before)
        fastest.append(min(blocks))
        medians.append(statistics.median(blocks))
        print(f"process {index:3d}: fastest {fastest[-1]:6.0f} ns, median {medians[-1]:6.0f} "
              f"ns per call; steal {steal:5.1%}; others runnable {others:.0f}",
              flush=True)
    print(f"fastest block per process: {min(fastest):.0f}-{max(fastest):.0f} ns "
          f"(x{max(fastest) / min(fastest):.2f}); median block: {min(medians):.0f}-"
          f"{max(medians):.0f} ns (x{max(medians) / min(medians):.2f})")


if __name__ == "__main__":
    main()
