"""Where a result lands in memory: the malloc settings every benchmark here runs under.

glibc's malloc adapts as a process runs: it serves a large block from fresh pages (mmap)
until a block that size was freed, hands the top of its heap back to the kernel once
enough of it is free, and gives each thread that allocates an arena of its own, whose
heaps it unmaps once they are empty. So whether a 2048x2048 result lands on memory the
process already touched, or on new pages the kernel faults in 4 KiB at a time, depends
on what the process and its threads allocated before. Counted with getrusage (the
README's second VM, a 2-core AMD EPYC, tensorflow-cpu 2.21.0, 2026-12-02): every cpu
case built in one process as in the engine, 512x512 to 2048x2048 samples averaged 364
faults per op, 2048x2048 int32 xla 2,720-4,096 in 5 of 6 samples (18.8 ms per op where
it faulted every sample, 2.6-3.1 ms where it did not); with the settings below, 45, all
but one in the first round, as the heap grows. Fixed thresholds alone made it worse
where TensorFlow's threads allocate (1,301 faults per op on average for 2048x2048
float32 function in a process of the eight 2048x2048 cases): one arena for every thread
keeps their blocks in the one heap that is never handed back. A block above the largest
mmap threshold glibc accepts (32 MiB on 64-bit: a 4096x4096 result) was still mapped
afresh each op (16,385 faults, 41-45 ms per op, in every sample of the engine) unless
the heap happened to have room free (the self-check's bare loop: 2,276-14,044 faults per
op on average, 9.5-43 ms); with mmap off (MALLOC_MMAP_MAX_=0) every block comes from
that heap: 0-1,338 faults per op, 10.1-12.2 ms in the engine and 8.8-12.3 ms in the
bare loop (selfcheck, 2026-12-02).

The settings, where the environment does not set them itself (a user's own win):
  ALLOCATOR_ENV       as environment variables, for a process about to start: the
                      TensorFlow engine (engine.engine_environ), selfcheck's bare loop;
  reuse_freed_memory  the same through mallopt(3), for a process already running: the
                      comparators' benchmark processes, which asv starts. mallopt's arena
                      limit holds for arenas made after it: a thread that already has
                      one keeps it. So a comparator applies it first thing in setup,
                      before a skip check starts the framework's threads: JAX's
                      4096x4096 results were mapped afresh every op otherwise.
No effect where malloc is not glibc's (macOS). Python 3.8 syntax: the oldest stacks run it.
"""

import ctypes
import os
import sys

ALLOCATOR_ENV = {
    "MALLOC_ARENA_MAX": "1",
    "MALLOC_MMAP_THRESHOLD_": str(32 * 2**20),
    "MALLOC_MMAP_MAX_": "0",
    "MALLOC_TRIM_THRESHOLD_": str(2**30),
}
# mallopt(3)'s parameter for each (glibc's malloc.h).
MALLOPT_PARAMETERS = {
    "MALLOC_ARENA_MAX": -8,  # M_ARENA_MAX
    "MALLOC_MMAP_THRESHOLD_": -3,  # M_MMAP_THRESHOLD
    "MALLOC_MMAP_MAX_": -4,  # M_MMAP_MAX
    "MALLOC_TRIM_THRESHOLD_": -1,  # M_TRIM_THRESHOLD
}


def glibc_malloc():
    """Whether this process's malloc is glibc's."""
    try:
        return sys.platform.startswith("linux") and bool(os.confstr("CS_GNU_LIBC_VERSION"))
    except (ValueError, OSError):  # a libc that does not know the name (musl)
        return False


_applied = None


def reuse_freed_memory(environ=os.environ, mallopt=None):
    """Apply ALLOCATOR_ENV to this running process with mallopt, each setting the
    environment does not set itself (glibc read those at the process's start); once per
    process, as mallopt also tidies the heap. Returns {name: value} applied: nothing
    where malloc is not glibc's. A value glibc refuses (a 32-bit glibc's mmap threshold
    is at most 512 KiB) is left at glibc's own, as glibc does with such an environment
    variable, and left out of the answer."""
    global _applied
    if _applied is not None:
        return _applied
    applied = {}
    if mallopt is not None or glibc_malloc():
        mallopt = mallopt or ctypes.CDLL(None).mallopt
        for name, value in ALLOCATOR_ENV.items():
            if name not in environ and mallopt(MALLOPT_PARAMETERS[name], int(value)) == 1:
                applied[name] = value
    _applied = applied
    return applied
