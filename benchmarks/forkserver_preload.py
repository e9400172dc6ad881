"""Imports PyTorch and JAX at module level, where installed, and nothing else.

asv's forkserver launch method (used on Linux) imports every benchmark module
once and forks a process per case from there: this module makes that import
include the comparator frameworks, so each forked case starts with them loaded
instead of paying their import (PyTorch ~1.5 s, JAX ~0.6 s here). Under spawn
(macOS) a benchmark process imports only its own module and never this one: the
other modules import a framework only when a case needs it. TensorFlow is not
imported here: the TensorFlow benchmarks run in the engine (engine.py), whatever
the launch method.

Importing is safe before a fork; starting a device is not, and none of these
imports starts one: PyTorch starts CUDA at its first CUDA call, JAX its backends
(and the threads its fork warning is about) at its first device query, both in
the forked case. tests/suite/test_comparators.py checks both.
"""

try:
    import torch  # noqa: F401
except ImportError:
    pass

try:
    import jax  # noqa: F401
    import jax.numpy  # noqa: F401
except ImportError:
    pass
