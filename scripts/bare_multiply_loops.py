"""The comparators' multiply timed in bare loops, sharing no code with the suite.

The reference for the comparator benchmarks' figures on a machine where the suite's own
timing cannot be checked otherwise (a GPU): for each framework installed here (PyTorch,
JAX) and each device it sees, `multiply(x, 2)` of a size x size tensor made once, run n
times in a plain `for` loop timed with `time.perf_counter`, then one wait (PyTorch:
`torch.cuda.synchronize()` on CUDA; JAX: `block_until_ready()` on the last result);
n doubled until a loop lasts >= 10 ms, as the suite's blocks do; the median of 7 loops
per case, in seconds per op. JAX's `jit` mode calls one jitted multiply per op.

    python scripts/bare_multiply_loops.py [--json FILE] [--sizes 2 1000 4096]

On the CPU a 4096x4096 result is a fresh mapping every op under glibc's own malloc; the
suite runs under fixed settings (benchmarks/allocator.py). For the same here, set them
in the environment, which glibc reads at start: MALLOC_ARENA_MAX=1
MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=1073741824.
GPU memory comes from each framework's caching allocator either way.

Prints one line per case; --json writes them as a list. Set beside the suite's medians
of the same cases (its result file), the ratio says how far the suite's clock is from
the op's own cost on that device. Nothing here imports the suite.
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time
from importlib import metadata

# Before JAX starts: take GPU memory as needed, as the suite's benchmarks do.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

MIN_LOOP_SECONDS = 0.01
LOOPS = 7
SIZES = (2, 32, 256, 1000, 2048, 4096)
DTYPES = ("int32", "float32")


def per_op_seconds(run_ops, loops=LOOPS, min_seconds=MIN_LOOP_SECONDS):
    """(median, min) seconds per op of run_ops(n), which runs n ops and waits for them:
    n doubled from 1 until one call lasts min_seconds, then `loops` calls timed."""
    n = 1
    while True:
        start = time.perf_counter()
        run_ops(n)
        if time.perf_counter() - start >= min_seconds:
            break
        n *= 2
    times = []
    for _ in range(loops):
        start = time.perf_counter()
        run_ops(n)
        times.append((time.perf_counter() - start) / n)
    return statistics.median(times), min(times)


def torch_cases(sizes, dtypes):
    try:
        import torch
    except ImportError:
        return
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for device in devices:
        sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
        for size in sizes:
            for dtype in dtypes:
                x = torch.ones((size, size), dtype=getattr(torch, dtype), device=device)

                def run_ops(n, x=x, sync=sync):
                    for _ in range(n):
                        y = torch.mul(x, 2)
                    sync()
                    return y

                yield ("PyTorch", device, size, dtype, "eager", run_ops)


def jax_cases(sizes, dtypes):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return
    multiply = jax.jit(lambda x: jnp.multiply(x, 2))
    for backend in ("cpu", "gpu"):
        try:
            device = jax.devices(backend)[0]
        except RuntimeError:
            continue
        for size in sizes:
            for dtype in dtypes:
                x = jax.device_put(jnp.ones((size, size), dtype=dtype), device)
                for mode, step in (("eager", lambda x: jnp.multiply(x, 2)), ("jit", multiply)):
                    step(x).block_until_ready()  # compiled and placed before timing

                    def run_ops(n, x=x, step=step):
                        for _ in range(n):
                            y = step(x)
                        y.block_until_ready()
                        return y

                    yield ("JAX", backend, size, dtype, mode, run_ops)


def installed():
    """{distribution: version} of the frameworks timed here, read without importing."""
    found = {}
    for name in ("torch", "jax", "jaxlib", "jax-cuda12-plugin", "jax-cuda13-plugin", "numpy"):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return found


def gpu_name():
    """The CUDA device PyTorch sees, or None."""
    try:
        import torch
    except ImportError:
        return None
    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="write the cases here as JSON")
    parser.add_argument("--sizes", type=int, nargs="+", default=SIZES)
    args = parser.parse_args(argv)
    rows = []
    print(f"{platform.node()} python {sys.version.split()[0]}; seconds per op, median "
          f"(min) of {LOOPS} loops of >= {MIN_LOOP_SECONDS * 1e3:.0f} ms", flush=True)
    for cases in (torch_cases(args.sizes, DTYPES), jax_cases(args.sizes, DTYPES)):
        for framework, device, size, dtype, mode, run_ops in cases:
            median, fastest = per_op_seconds(run_ops)
            rows.append({"framework": framework, "device": device, "size": size,
                         "dtype": dtype, "mode": mode, "median": median, "min": fastest})
            print(f"{framework:8} {device:5} {size:5} {dtype:8} {mode:6} "
                  f"{median * 1e6:10.3f} us ({fastest * 1e6:.3f})", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"machine": platform.node(), "python": sys.version.split()[0],
                       "installed": installed(), "gpu": gpu_name(),
                       "malloc": {k: v for k, v in os.environ.items()
                                  if k.startswith("MALLOC_")},
                       "loops": LOOPS, "min_loop_seconds": MIN_LOOP_SECONDS, "cases": rows},
                      out, indent=1)
    return 0 if rows else 1


if __name__ == "__main__":
    raise SystemExit(main())
