"""Imports TensorFlow, PyTorch and JAX at module level, where installed, and nothing else.

asv's forkserver launch method (used on Linux) imports every benchmark module
once and forks a process per case from there: this module makes that import
include the frameworks, so each forked case starts with them loaded instead of
paying their import (TensorFlow ~5 s, PyTorch ~1.5 s, JAX ~0.6 s here). Under
spawn (macOS) a benchmark process imports only its own module and never this
one: the other modules import a framework only when a case needs it.

Importing is safe before a fork; starting a device is not, and none of these
imports starts one: PyTorch starts CUDA at its first CUDA call, JAX its backends
(and the threads its fork warning is about) at its first device query, both in
the forked case. tests/suite/test_comparators.py checks both.
"""

try:
    import tensorflow  # noqa: F401
except ImportError:  # the comparator benchmarks run without TensorFlow
    pass

try:
    import torch  # noqa: F401
except ImportError:
    pass

try:
    import jax  # noqa: F401
    import jax.numpy  # noqa: F401
except ImportError:
    pass
