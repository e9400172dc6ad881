"""Print, as JSON, why a '/GPU:0' multiply of each dtype is not measured in the
Python that runs this ({dtype: reason}, null where it runs on a GPU).

The runner calls it with each asv environment's own Python after a stack is
measured, so the reasons asv shows only as "n/a" are recorded beside the
results. It loads the suite's own checks (benchmarks/common.py): standard
library only here, as the environment has no tfgpubench installed.

    python probe_gpu.py BENCHMARK_DIR/common.py
"""

import importlib
import importlib.util
import json
import os
import sys


def main(common_path):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    suite = os.path.dirname(os.path.abspath(common_path))
    # The benchmark directory as a package, so common.py's relative imports work.
    spec = importlib.util.spec_from_file_location(
        "suite", os.path.join(suite, "__init__.py"), submodule_search_locations=[suite])
    package = importlib.util.module_from_spec(spec)
    sys.modules["suite"] = package
    spec.loader.exec_module(package)
    common = importlib.import_module("suite.common")
    return {dtype: common.device_skip_reason("gpu", dtype) for dtype in common.DTYPES}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
