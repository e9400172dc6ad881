"""Access to the benchmark suite's own shared module from the tooling.

The placement checks and axes live in benchmarks/common.py, where asv's
environments import them; the tooling loads that same file rather than
keeping a second copy that could drift.
"""

import importlib.util
import os
from pathlib import Path


def load_suite_common(benchmark_dir="benchmarks"):
    """Import `benchmark_dir`/common.py (this imports TensorFlow)."""
    path = Path(benchmark_dir) / "common.py"
    if not path.is_file():
        raise SystemExit(f"{path}: the suite's shared module is missing")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    spec = importlib.util.spec_from_file_location("tfgpubench_suite_common", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
