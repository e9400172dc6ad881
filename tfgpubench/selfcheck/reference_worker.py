"""The truth the self-check holds the suite to: the same TensorFlow call in a bare loop.

    python -m tfgpubench.selfcheck.reference_worker

reads one cpu case per line on stdin ("size dtype mode") and answers one JSON
line: the median per-op time of the call timed with nothing but
time.perf_counter around a loop of it, or why it could not be timed. It shares
no code with the suite (benchmarks/): it is what a user would write.

  eager       tf.multiply(x, 2), called `n` times in a loop under tf.device('/CPU:0')
  function    the same call wrapped in tf.function, called `n` times
  xla         the same with jit_compile=True
  graph_loop  one tf.function that chains y = y * 2 `n` times in a tf.range loop,
              called once; its time divided by n

n is chosen so a timed loop lasts ~10 ms, as the suite's blocks do; eager and
graph ops on the CPU have finished when the call returns, so no wait is timed.
Several workers (the default environment and a slowed one, for sensitivity)
are asked in turn by the driver, never at the same time.
"""

import json
import os
import sys
import time

TARGET_SECONDS = 0.01
SAMPLES = 15


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


def per_op_median(call):
    """Median per-op seconds of `call(n)` with n calibrated to ~TARGET_SECONDS."""
    call(1)
    call(1)
    n = 1
    while True:
        start = time.perf_counter()
        call(n)
        elapsed = time.perf_counter() - start
        if elapsed >= TARGET_SECONDS or n >= 100_000:
            break
        n = min(100_000, max(n + 1, int(n * TARGET_SECONDS / max(elapsed, 1e-7) * 1.2)))
    samples = []
    for _ in range(SAMPLES):
        start = time.perf_counter()
        call(n)
        samples.append((time.perf_counter() - start) / n)
    samples.sort()
    return samples[len(samples) // 2], n


def main():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    built = {}
    print(json.dumps({"ready": True, "tensorflow": tf.__version__}), flush=True)
    for line in sys.stdin:
        size, dtype, mode = line.split()
        key = (int(size), dtype, mode)
        try:
            if key not in built:
                built[key] = build(tf, *key)
            median, n = per_op_median(built[key])
            answer = {"median": median, "n": n}
        except Exception as error:  # a case that fails must not stop the others
            answer = {"error": f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"}
        print(json.dumps(answer), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
