"""Run the suite's GPU self-check (benchmarks/checks.py) in the Python that runs this,
save the record where that environment's benchmark processes look for it, and print it.

    python check_gpu.py BENCHMARK_DIR [RECORD_PATH]

The installer runs it with each asv environment's own Python right after a
stack is installed (RECORD_PATH defaults to beside the environment, see
checks.record_path); the runner runs it for `--existing`. The environment has
no tfgpubench installed: the checkout's leaf modules are put on the path. The
last line printed is the record as JSON; the lines before it, PASS/FAIL per check.
"""

import importlib
import importlib.util
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from tfgpubench.format import check_line  # noqa: E402


def load_checks(benchmark_dir):
    """The suite's checks module, importing the benchmark directory as a package."""
    benchmark_dir = os.path.abspath(benchmark_dir)
    spec = importlib.util.spec_from_file_location(
        "tfgpubench_suite", os.path.join(benchmark_dir, "__init__.py"),
        submodule_search_locations=[benchmark_dir])
    package = importlib.util.module_from_spec(spec)
    sys.modules["tfgpubench_suite"] = package
    spec.loader.exec_module(package)
    return importlib.import_module("tfgpubench_suite.checks")


def main(argv):
    if len(argv) not in (1, 2):
        print("usage: check_gpu.py BENCHMARK_DIR [RECORD_PATH]", file=sys.stderr)
        return 2
    checks = load_checks(argv[0])
    record = checks.run_checks()
    checks.save_record(record, argv[1] if len(argv) == 2 else checks.record_path())
    for check in record["checks"]:
        print(check_line(check))
    print(json.dumps(record, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
