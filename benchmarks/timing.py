"""How the suite times a block of ops, whatever the framework: standard library only.

A timed call is a block of ops followed by one wait where the device queues them; asv is
handed a clock that divides by the block's length, so it records seconds per op.
"""

import glob
import os
import tempfile
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


# A sample taken after even a short idle gap runs slow: the CPU, its caches and the
# framework's threads wake up during its first ops. asv leaves such a gap before every
# sample, so each runs an untimed warm-up first: the same block, 1/P as long, P from
# grid.warm_up_parts (which says what was measured).


def calibrated_block(make_block, ops, warm_up_parts, attempts=10):
    """A warmed-up block lasting at least grid.MIN_BLOCK_SECONDS.

    make_block(ops) returns a zero-argument callable running `ops` ops and
    waiting for the last, with an `ops` attribute saying so; it is called
    once to trace, compile and allocate outside any timed region, then timed
    and lengthened until it lasts long enough (at most `attempts` times: where
    a call's fixed cost dwarfs its ops, as for a compiled loop of ~3 ns ops,
    one estimate from a short block falls short by orders of magnitude).

    The block's `warm_up` is the same block 1/`warm_up_parts` as long, run untimed
    right before each sample (the engine's `run`; the comparators' `setup`).
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
    block.warm_up = make_block(max(1, block.ops // warm_up_parts))
    block.warm_up()
    return block


class InTurn:
    """Blocks alike but for the copy of the input each runs on (grid.input_copies), timed
    one per sample in turn: `current` is the block the next sample times, its warm-up
    and before_sample's extra run included; `advance()` moves on once it was timed.
    The turn is taken outside the timed call, so it costs the sample nothing.
    """

    def __init__(self, blocks):
        blocks = list(blocks)
        if not blocks or len({block.ops for block in blocks}) != 1:
            raise ValueError("blocks in turn must be one or more, of the same length")
        self.blocks = blocks
        self.ops = self.blocks[0].ops
        self.turn = 0

    @property
    def current(self):
        return self.blocks[self.turn]

    def advance(self):
        self.turn = (self.turn + 1) % len(self.blocks)


def in_turn(make_block, ops, copies, warm_up_parts):
    """InTurn of `copies` blocks: make_block(ops, copy) for copy 0..copies-1, each a
    zero-argument callable as calibrated_block's (with a warm-up 1/`warm_up_parts` as
    long). The first copy is calibrated; the others get its length, their warm-up and
    one untimed call."""
    first = calibrated_block(lambda n: make_block(n, 0), ops, warm_up_parts)
    blocks = [first]
    for copy in range(1, copies):
        block = make_block(first.ops, copy)
        block.warm_up = make_block(first.warm_up.ops, copy)
        block()
        blocks.append(block)
    return InTurn(blocks)


def per_op_seconds(block, min_time=0.2, min_blocks=5, gate=None):
    """Median per-op time of `block` (or of an InTurn's blocks, in turn) timed back to
    back for at least `min_time`.

    Used by track_ benchmarks that compare two devices side by side in one
    process; the time_ benchmarks leave sampling to asv.
    """
    samples = []
    spent = 0.0
    while len(samples) < min_blocks or spent < min_time:
        before_sample(block, gate or quiet_gate)
        timed = getattr(block, "current", block)
        start = time.perf_counter()
        timed()
        elapsed = time.perf_counter() - start
        if timed is not block:
            block.advance()
        samples.append(elapsed / timed.ops)
        spent += elapsed
    samples.sort()
    middle = len(samples) // 2
    return samples[middle] if len(samples) % 2 else (samples[middle - 1] + samples[middle]) / 2


# --- waiting for a quiet machine -------------------------------------------------------
#
# Passing load from another process (a build, a browser tab) slows a multi-threaded
# op for as long as it lasts; a sample taken then is not the op's time. Before each
# sample the suite waits, up to QUIET_MAX_WAIT_SECONDS, until no other process is
# runnable, so a case's samples come from the quiet moments of the run. Where the
# load does not pass (a machine always busy), waiting would only make the run
# longer: once a wait gives up, every benchmark process of the same asv run skips
# waiting for QUIET_BACKOFF_SECONDS (a file named after asv's process says so).
# Linux only (/proc); elsewhere `other_runnable` is None and nothing waits.

QUIET_READS = 3  # reads of the run queue per look; busy when most see another task
QUIET_POLL_SECONDS = 0.02
QUIET_MAX_WAIT_SECONDS = 3.5  # longer than the bursts selfcheck's load makes
QUIET_BACKOFF_SECONDS = 20.0


def _procs_running():
    with open("/proc/stat") as stat:
        for line in stat:
            if line.startswith("procs_running"):
                return int(line.split()[1])
    return None


def _own_running():
    running = 0
    for path in glob.glob("/proc/self/task/*/stat"):
        try:
            with open(path) as stat:
                fields = stat.read()
        except OSError:  # a thread that just ended
            continue
        running += fields[fields.rindex(")") + 2] == "R"
    return running


def other_runnable():
    """Tasks of other processes runnable right now, or None where the OS won't say."""
    try:
        total = _procs_running()
    except OSError:
        return None
    return None if total is None else max(0, total - _own_running())


def busy(reads):
    """Whether most reads of other_runnable saw another task running."""
    seen = [r for r in reads if r is not None]
    return bool(seen) and sum(r > 0 for r in seen) * 2 > len(seen)


def _gave_up_file():
    # asv's process (the forkserver, or asv itself under spawn) is the parent of
    # every benchmark process of one run.
    return os.path.join(tempfile.gettempdir(), f"tfgpubench-busy-{os.getppid()}")


class QuietGate:
    """wait() returns once no other process is runnable, or after QUIET_MAX_WAIT_SECONDS;
    it counts what it waited and how often it gave up, for the record."""

    def __init__(self, read=other_runnable, sleep=time.sleep, clock=time.perf_counter,
                 max_wait=QUIET_MAX_WAIT_SECONDS, gave_up_file=None):
        self.read, self.sleep, self.clock = read, sleep, clock
        self.max_wait = max_wait
        self.gave_up_file = gave_up_file
        self.waited = 0.0
        self.gave_up = 0

    def look(self):
        return busy([self.read() for _ in range(QUIET_READS)])

    def _backing_off(self):
        path = self.gave_up_file or _gave_up_file()
        try:
            return time.time() - os.path.getmtime(path) < QUIET_BACKOFF_SECONDS
        except OSError:
            return False

    def wait(self):
        """Seconds waited for a quiet moment (0.0 where the machine was quiet)."""
        if not self.look() or self._backing_off():
            return 0.0
        start = self.clock()
        while True:
            self.sleep(QUIET_POLL_SECONDS)
            if not self.look():
                break
            if self.clock() - start >= self.max_wait:
                self.gave_up += 1
                with open(self.gave_up_file or _gave_up_file(), "w"):
                    pass
                break
        waited = self.clock() - start
        self.waited += waited
        return waited


quiet_gate = QuietGate()


def before_sample(block, gate=quiet_gate):
    """Wait for a quiet moment; where that meant idling, run `block` (an InTurn's
    current block) once more, untimed.

    A sample taken right after the process slept runs cold: on this suite's 2-core
    VM a 2x2 multiply took 3-5% longer after a 20 ms sleep and 4-10% after 200 ms
    than back to back (paired, 60 of each, 2026-12-01), as the vCPU and
    TensorFlow's threads wake up. The extra block makes the sample start as warm
    as the blocks before it; it costs one block, and only when the gate waited.
    """
    if gate.wait():
        getattr(block, "current", block)()
