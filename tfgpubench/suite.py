"""The benchmark suite's own modules, as the tooling sees them.

The grid (axes, bytes per op) and the placement checks live in benchmarks/,
where asv's environments import them; the tooling loads those same files
by path rather than keeping second copies that could drift.
"""

import hashlib
import importlib
import importlib.util
import os
import sys
from pathlib import Path

# The checkout this package belongs to: benchmarks/ lies beside tfgpubench/.
SUITE_DIR = Path(__file__).resolve().parents[1] / "benchmarks"


def load_suite_module(name, benchmark_dir=SUITE_DIR):
    """Import `benchmark_dir`/`name`.py under a private name; SystemExit if missing."""
    path = Path(benchmark_dir) / f"{name}.py"
    if not path.is_file():
        raise SystemExit(f"{path}: the suite's {name} module is missing")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    spec = importlib.util.spec_from_file_location(f"tfgpubench_suite_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_suite_package(benchmark_dir=SUITE_DIR):
    """Import the benchmark directory as a package under a private name, one per
    directory (so its modules' relative imports work, as under asv); return it."""
    benchmark_dir = Path(benchmark_dir).resolve()
    name = "tfgpubench_suite_" + hashlib.sha1(str(benchmark_dir).encode()).hexdigest()[:8]
    init = benchmark_dir / "__init__.py"
    if not init.is_file():
        raise SystemExit(f"{benchmark_dir}: not the suite's benchmark directory (no __init__.py)")
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, init, submodule_search_locations=[str(benchmark_dir)]
        )
        package = importlib.util.module_from_spec(spec)
        sys.modules[name] = package
        spec.loader.exec_module(package)
    return sys.modules[name]


def suite_module(name, benchmark_dir=SUITE_DIR):
    """One module of the suite, e.g. "checks" (the GPU self-check; imports TensorFlow
    when its functions run), imported as part of the suite's package."""
    package = load_suite_package(benchmark_dir)
    return importlib.import_module(f"{package.__name__}.{name}")


# The grid imports nothing, so loading it costs nothing.
grid = load_suite_module("grid")
