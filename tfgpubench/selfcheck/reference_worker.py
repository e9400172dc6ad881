"""The truth the self-check holds the suite to: the same TensorFlow call in a bare loop.

    python -m tfgpubench.selfcheck.reference_worker

reads one cpu case per line on stdin ("size dtype mode") and answers one JSON
line: the median per-op time of the call timed with nothing but
time.perf_counter around a loop of it, and its fast time (the 10th percentile
of the loops: the op while the machine ran at full speed), or why it could not
be timed. It shares no code with the suite (benchmarks/): it is what a user
would write. Every loop runs under one tf.device('/CPU:0'), as a user choosing
a device must write it (the scope costs ~3% of a 2x2 eager op here).

  eager       tf.multiply(x, 2), called `n` times in a loop
  function    the same call wrapped in tf.function, called `n` times
  xla         the same with jit_compile=True
  graph_loop  one tf.function that chains y = y * 2 `n` times in a tf.range loop,
              called once; its time divided by n

n is chosen so a timed loop lasts ~10 ms, as the suite's blocks do; eager and
graph ops on the CPU have finished when the call returns, so no wait is timed.
"size dtype mode SECONDS" asks instead for every loop's per-op time, loops
run back to back for SECONDS (the machine's own steadiness: selfcheck's
stability part).

Several workers (the default environment and a slowed one, for sensitivity)
are asked in turn by the driver, never at the same time.
"""

import json
import os
import statistics
import sys
import time

TARGET_SECONDS = 0.01
SAMPLES = 30


def build(tf, size, dtype, mode):
    """(call(n) running n multiplies, label) for one case."""
    with tf.device("/CPU:0"):
        x = tf.ones([size, size], dtype=dtype)
    if mode == "eager":
        def call(n):
            for _ in range(n):
                tf.multiply(x, 2)
        return call
    if mode in ("function", "xla"):
        f = tf.function(lambda t: tf.multiply(t, 2), jit_compile=(mode == "xla"))

        def call(n):
            for _ in range(n):
                f(x)
        return call
    if mode == "graph_loop":
        @tf.function
        def chain(t, count):
            y = t
            for _ in tf.range(count):
                y = tf.multiply(y, 2)
            return y

        counts = {}

        def call(n):
            chain(x, counts.setdefault(n, tf.constant(n)))
        return call
    raise ValueError(f"unknown mode {mode!r}")


def per_op_times(call, device):
    """(median, fast, n): per-op seconds of `call(n)` under `device`, n calibrated to
    ~TARGET_SECONDS; fast is the loops' 10th percentile (numpy's linear one)."""
    with device:
        n = _calibrated(call)
        samples = _loop_times(call, n, count=SAMPLES)
    tenth = statistics.quantiles(samples, n=10, method="inclusive")[0]
    return statistics.median(samples), tenth, n


def loop_times(call, device, seconds):
    """(per-op seconds of every ~TARGET_SECONDS loop in `seconds`, n) under `device`."""
    with device:
        n = _calibrated(call)
        return _loop_times(call, n, seconds=seconds), n


def _calibrated(call):
    """n such that call(n) lasts ~TARGET_SECONDS, after two warm-up calls."""
    call(1)
    call(1)
    n = 1
    while True:
        start = time.perf_counter()
        call(n)
        elapsed = time.perf_counter() - start
        if elapsed >= TARGET_SECONDS or n >= 100_000:
            return n
        n = min(100_000, max(n + 1, int(n * TARGET_SECONDS / max(elapsed, 1e-7) * 1.2)))


def _loop_times(call, n, count=None, seconds=None):
    """Per-op seconds of `count` loops of call(n), or of as many as fit in `seconds`."""
    samples = []
    start = time.perf_counter()
    while len(samples) < count if count else time.perf_counter() - start < seconds:
        begin = time.perf_counter()
        call(n)
        samples.append((time.perf_counter() - begin) / n)
    return samples


def main():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    built = {}
    print(json.dumps({"ready": True, "tensorflow": tf.__version__}), flush=True)
    for line in sys.stdin:
        size, dtype, mode, *seconds = line.split()
        key = (int(size), dtype, mode)
        try:
            if key not in built:
                built[key] = build(tf, *key)
            if seconds:
                loops, n = loop_times(built[key], tf.device("/CPU:0"), float(seconds[0]))
                answer = {"loops": loops, "n": n}
            else:
                median, fast, n = per_op_times(built[key], tf.device("/CPU:0"))
                answer = {"median": median, "fast": fast, "n": n}
        except Exception as error:  # a case that fails must not stop the others
            answer = {"error": f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"}
        print(json.dumps(answer), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
