"""The suite's parameter grid and the arithmetic of a block: standard library only.

Everything that says *what* is measured (axes, bytes per op, block lengths)
and depends on nothing, so that the benchmarks, the comparator benchmarks and
the tooling (which loads this file by path) share one definition.
"""

import math

# The parameter grid. Identical on every machine so results stay comparable;
# combinations a machine cannot run are skipped in setup, with a reason.
DEVICES = ["cpu", "gpu"]
# Square matrices: the seed's 2x2, the 1000x1000 the usual advice names, and
# powers of two between them dense enough to locate a CPU/GPU crossover.
SIZES = [2, 32, 128, 256, 512, 1000, 2048, 4096]
DTYPES = ["int32", "float32"]
# eager: one Python call per op, as in the seed; function: one tf.function
# call per op; xla: the same compiled with XLA; graph_loop: the whole loop of
# ops inside one tf.function, so per-op Python dispatch disappears.
MODES = ["eager", "function", "xla", "graph_loop"]

# The comparators (torch_multiply.py, jax_multiply.py, numpy_multiply.py): the same
# sizes and dtypes, each framework's devices and modes under its own names.
# PyTorch: "mps" is Apple's Metal (Apple silicon and Intel Macs with AMD GPUs).
TORCH_DEVICES = ["cpu", "mps", "cuda"]
# eager only: torch.compile per op would be the analogue of `function`, but compiling
# costs 5-25 s in every benchmark process (asv starts one per case and round).
TORCH_MODES = ["eager"]
JAX_DEVICES = ["cpu", "gpu"]
# eager: op by op, one Python call per op; jit: one jax.jit call per op; fori_loop:
# the whole loop of ops in one jitted lax.fori_loop (the analogue of graph_loop).
JAX_MODES = ["eager", "jit", "fori_loop"]
NUMPY_DEVICES = ["cpu"]
NUMPY_MODES = ["eager"]

# What each framework's device and mode is, for comparing frameworks with each other.
DEVICE_KIND = {"cpu": "cpu", "gpu": "gpu", "cuda": "gpu", "mps": "gpu"}
MODE_KIND = {
    "eager": "eager",
    "function": "compiled per op", "xla": "compiled per op", "jit": "compiled per op",
    "graph_loop": "compiled loop", "fori_loop": "compiled loop",
}

# The factor of the seed's `tf.multiply(tensor, 2)`.
FACTOR = 2
ITEMSIZE = {"int32": 4, "float32": 4}

# Every timed call runs a block of ops and waits once at the end (GPU work
# is asynchronous); per-op time is the block's time divided by its length.
# Each sample carries a fixed cost (the wait, asv's bookkeeping between
# samples; measured by `tfgpubench selfcheck`), so a block is made long
# enough to bury it: at least ops_per_block(size) ops, lengthened at warm-up
# to last MIN_BLOCK_SECONDS.
MAX_OPS_PER_BLOCK = 100
ELEMENTS_PER_BLOCK = 1 << 22
MIN_BLOCK_SECONDS = 0.01
# A compiled loop of 2x2 multiplies runs ~3 ns per op (JAX's fori_loop on this CPU):
# 10 ms of it is ~3 million ops.
MAX_CALIBRATED_OPS = 10_000_000


def ops_per_block(size):
    """Number of multiplies timed together for a size x size tensor, before calibration."""
    return max(1, min(MAX_OPS_PER_BLOCK, ELEMENTS_PER_BLOCK // (size * size)))


def calibrated_ops(ops, seconds):
    """Block length lasting at least MIN_BLOCK_SECONDS, given `ops` took `seconds`."""
    if seconds >= MIN_BLOCK_SECONDS:
        return ops
    wanted = math.ceil(ops * MIN_BLOCK_SECONDS / max(seconds, 1e-9))
    return max(ops, min(MAX_CALIBRATED_OPS, wanted))


# The untimed warm-up each sample runs first (timing.calibrated_block), as a fraction
# 1/P of the block. asv leaves a gap before every sample, and a block right after one
# runs slow. Blocks timed with gaps of 2 ms between them ran 2-5% slower than back to
# back, 2-13% with 20 ms gaps (2x2 to 1000x1000, eager, xla, function and graph_loop;
# 120 blocks of each, alternated, this suite's 2-core VM, 2026-12-01); with an eighth of
# the block run just before, 0-3% (2 ms) and 0-4% (20 ms), and 2x2 to 256x256 read
# within 5% of a bare loop under asv. From 512x512 up an eighth was not enough: the
# engine's blocks after 3 ms gaps read 1.086x and 1.055x a bare loop with an eighth,
# 1.041x and 1.027x with half a block, 1.007x with a whole one, and 1.021x and 1.019x
# asked back to back (median of 24 cases, 512x512 to 2048x2048, three engines and three
# bare-loop processes pooled, every way interleaved; scripts/warm_up_length.py, twice,
# the README's second VM, 2026-12-06). A whole block costs a sample twice its time, so
# only the sizes that need it get one.
WARM_UP_PARTS = 8
WHOLE_BLOCK_WARM_UP_ELEMENTS = 512 * 512


def warm_up_parts(size):
    """P: the warm-up before a sample of a size x size case is 1/P of its block."""
    return 1 if size * size >= WHOLE_BLOCK_WARM_UP_ELEMENTS else WARM_UP_PARTS


# Where an input sits in memory changes what a mid-size op costs: on this suite's 2-core
# VM, one process timing tf.multiply on six copies of the same 512x512 float32 input
# (40 loops of each, alternated) read 0.93-1.24x its first copy's time, and four
# identical processes 1.00-1.16x one another (2026-12-01). One copy's figure is one
# draw of that spread, different in every process: the suite (and the self-check's
# bare loop) time each case on several copies in turn, one per sample, so a case's
# samples span placements. The copies' bytes are capped: a placement matters least
# where a tensor streams from memory, and the largest tensors would not fit twice.
INPUT_COPIES = 8
INPUT_COPIES_BYTES = 64 * 2**20


def input_copies(size, dtype):
    """How many copies of the size x size input a case is timed on, in turn."""
    return max(1, min(INPUT_COPIES, INPUT_COPIES_BYTES // (size * size * ITEMSIZE[dtype])))


def bytes_moved(size, dtype):
    """Bytes one multiply by a scalar reads and writes: size*size elements in, as many out."""
    return 2 * size * size * ITEMSIZE[dtype]
