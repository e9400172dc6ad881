"""How the suite times a block of ops, whatever the framework: standard library only.

A timed call is a block of ops followed by one wait; asv is handed a clock
that divides by the block's length, so it records seconds per op.
"""

import time

from .grid import calibrated_ops


def per_op_timer(ops):
    """A clock whose differences are per-op times for a block of `ops` ops.

    asv divides a sample by the number of calls it made, not by the ops
    inside one call; handing it this clock makes the recorded time per op.
    """
    if ops == 1:
        return time.perf_counter

    def clock():
        return time.perf_counter() / ops

    return clock


def calibrated_block(make_block, ops, attempts=10):
    """A warmed-up block lasting at least grid.MIN_BLOCK_SECONDS.

    make_block(ops) returns a zero-argument callable running `ops` ops and
    waiting for the last, with an `ops` attribute saying so; it is called
    once to trace, compile and allocate outside any timed region, then timed
    and lengthened until it lasts long enough (at most `attempts` times: where
    a call's fixed cost dwarfs its ops, as for a compiled loop of ~3 ns ops,
    one estimate from a short block falls short by orders of magnitude).
    """
    block = make_block(ops)
    block()
    for _ in range(attempts):
        start = time.perf_counter()
        block()
        longer = calibrated_ops(block.ops, time.perf_counter() - start)
        if longer == block.ops:
            break
        block = make_block(longer)
        block()
    return block


def per_op_seconds(block, min_time=0.2, min_blocks=5):
    """Median per-op time of `block` timed back to back for at least `min_time`.

    Used by track_ benchmarks that compare two devices side by side in one
    process; the time_ benchmarks leave sampling to asv.
    """
    samples = []
    spent = 0.0
    while len(samples) < min_blocks or spent < min_time:
        start = time.perf_counter()
        block()
        elapsed = time.perf_counter() - start
        samples.append(elapsed / block.ops)
        spent += elapsed
    samples.sort()
    middle = len(samples) // 2
    return samples[middle] if len(samples) % 2 else (samples[middle - 1] + samples[middle]) / 2
