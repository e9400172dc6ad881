"""Imports TensorFlow at module level, where installed, and nothing else.

asv's forkserver launch method (used on Linux) imports every benchmark module
once and forks a process per case from there: this module makes that import
include TensorFlow, so each forked case starts with it loaded instead of
paying seconds for it. Under spawn (macOS) a benchmark process imports only
its own module and never this one: the other modules import TensorFlow only
when a case needs it (common.load_tensorflow).
"""

try:
    import tensorflow  # noqa: F401
except ImportError:  # the comparator benchmarks run without TensorFlow
    pass
