"""The truth the self-check holds the suite to: the same TensorFlow call in a bare loop.

    python -c "from tfgpubench.selfcheck.reference_worker import main; raise SystemExit(main())"

(reference.WORKER_CODE; not `-m`: see below) reads one cpu case per line on
stdin ("size dtype mode copies") and answers one JSON line: the median per-op
time of the call timed with nothing but time.perf_counter around a loop of it,
and its fast time (the 10th percentile of the loops: the op while the machine
ran at full speed), or why it could not
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
"size dtype mode copies SECONDS" asks instead for every loop's per-op time, loops
run back to back for SECONDS (the machine's own steadiness: selfcheck's
stability part), and every loop's minor page faults per op (getrusage, outside
the timed call), which fidelity prints beside the engine's.

Where an input sits in memory changes a mid-size op's time by up to ~25% (see
the suite's grid.input_copies): x is made `copies` times, and each loop runs on
the next copy in turn, as each of the suite's samples does; one loop, one x.

The loop calls the op through as many Python frames as the suite's engine does
(TensorFlow records the calling frames with every eager op): started with
`python -c` (reference.WORKER_CODE), main -> _answer -> loop_times -> _loop_times
-> the loop, as the engine's serve -> _answer -> run -> block -> _multiply_block,
every one short with its call near its top (the cost of a frame grows with the
offset of its call: the suite's engine.py).
tests/selfcheck/test_fidelity.py holds the two alike.

The driver starts it under the malloc settings the suite's engine runs under
(reference.worker_environ, the suite's allocator.py): process settings, not the
suite's code. Under glibc's own, whether a 2048x2048 result lands on fresh pages
(4,096 page faults: several milliseconds on this suite's 2-core VM, on a 2-5 ms op)
changes from loop to loop, and differently in every process.

Several workers (the default environment and a slowed one, for sensitivity)
are asked in turn by the driver, never at the same time.
"""

import json
import os
import resource
import statistics
import sys
import time

TARGET_SECONDS = 0.01
SAMPLES = 30


def build(tf, size, dtype, mode, copies=1):
    """call(n) running n multiplies of one case, each call on the next of `copies`
    copies of x."""
    with tf.device("/CPU:0"):
        xs = [tf.ones([size, size], dtype=dtype) for _ in range(copies)]
    turn = [0]

    def next_x():
        turn[0] = (turn[0] + 1) % copies
        return xs[turn[0]]

    if mode == "eager":
        def call(n):
            x = next_x()
            for _ in range(n):
                tf.multiply(x, 2)
        return call
    if mode in ("function", "xla"):
        f = tf.function(lambda t: tf.multiply(t, 2), jit_compile=(mode == "xla"))

        def call(n):
            x = next_x()
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
            chain(next_x(), counts.setdefault(n, tf.constant(n)))
        return call
    raise ValueError(f"unknown mode {mode!r}")


def per_op_times(call, device):
    """(median, fast, n): per-op seconds of `call(n)` under `device`, n calibrated to
    ~TARGET_SECONDS; fast is the loops' 10th percentile (numpy's linear one)."""
    with device:
        n = _calibrated(call)
        samples = _loop_times(call, n, count=SAMPLES)[0]
    tenth = statistics.quantiles(samples, n=10, method="inclusive")[0]
    return statistics.median(samples), tenth, n


def loop_times(call, device, seconds):
    """(per-op seconds, per-op page faults, of every ~TARGET_SECONDS loop in `seconds`; n)
    under `device`."""
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
    """(per-op seconds, per-op minor page faults) of each of `count` loops of call(n), or
    of as many as fit in `seconds`. The faults: getrusage, every thread, outside the
    timed call."""
    samples, faults, more = [], [], _more(count, seconds)
    while more(samples):
        before, begin = _minor_faults(), time.perf_counter()
        call(n)
        samples.append((time.perf_counter() - begin) / n)
        faults.append((_minor_faults() - before) / n)
    return samples, faults


def _more(count, seconds):
    """Whether to run another loop, given the loops so far: until `count` of them, or
    for `seconds` from now. (A function of its own: the loop's call stays near the top
    of its frame: see the module docstring.)"""
    if count:
        return lambda samples: len(samples) < count
    end = time.perf_counter() + seconds
    return lambda samples: time.perf_counter() < end


def _minor_faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _requests(lines):
    """((size, dtype, mode, copies), seconds or None) of each request line."""
    for line in lines:
        size, dtype, mode, copies, *seconds = line.split()
        yield (int(size), dtype, mode, int(copies)), (float(seconds[0]) if seconds else None)


def _answer(tf, built, key, seconds):
    try:
        if key not in built:
            built[key] = build(tf, *key)
        if seconds is not None:
            (loops, faults), n = loop_times(built[key], tf.device("/CPU:0"), seconds)
            return {"loops": loops, "faults": faults, "n": n}
        median, fast, n = per_op_times(built[key], tf.device("/CPU:0"))
        return {"median": median, "fast": fast, "n": n}
    except Exception as error:  # a case that fails must not stop the others
        return {"error": f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"}


def _start():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    print(json.dumps({"ready": True, "tensorflow": tf.__version__}), flush=True)
    return tf


def main():
    # Short, with the call near the top, as every function above the loop: TensorFlow
    # looks up each calling frame's line with every eager op (the suite's engine.py).
    tf, built = _start(), {}
    for key, seconds in _requests(sys.stdin):
        print(json.dumps(_answer(tf, built, key, seconds)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
