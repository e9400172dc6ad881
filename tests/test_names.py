"""The shared names: every benchmark id names a benchmark the suite defines."""

import ast
from pathlib import Path

from benchmarks import checks
from tfgpubench import names

SUITE = Path(__file__).resolve().parents[1] / "benchmarks"
IDS = [value for key, value in vars(names).items()
       if key.isupper() and isinstance(value, str) and value.count(".") == 2
       and value.split(".")[-1].startswith(("time_", "track_"))]


def defined_benchmarks():
    """module.Class.method for every time_/track_ method in benchmarks/, read statically."""
    found = set()
    for path in SUITE.glob("*.py"):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                found |= {f"{path.stem}.{node.name}.{item.name}" for item in node.body
                          if isinstance(item, ast.FunctionDef)
                          and item.name.startswith(("time_", "track_"))}
    return found


def test_every_benchmark_id_the_tooling_reads_exists_in_the_suite():
    assert IDS and set(IDS) <= defined_benchmarks()


def test_case_ids_read_as_asv_prints_them():
    assert names.case_id(names.MULTIPLY, map(repr, ("cpu", 2, "int32", "eager"))) == (
        "multiply.Multiply.time_multiply('cpu', 2, 'int32', 'eager')")
    assert names.case_id(names.SEED_SPEEDUP, []) == names.SEED_SPEEDUP


def test_the_suite_and_the_tooling_name_the_gpu_checks_record_alike():
    assert checks.RECORD_ENV == names.GPU_CHECKS_ENV


def test_every_benchmark_and_its_class_open_with_a_one_line_docstring():
    # asv's site shows a method's docstring with its source (tests/report/test_browser.py);
    # the class's is what benchmarks/README.md asks a reader to find first.
    missing = []
    for path in SUITE.glob("*.py"):
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.ClassDef):
                continue
            methods = [item for item in node.body if isinstance(item, ast.FunctionDef)
                       and item.name.startswith(("time_", "track_"))]
            for item in [node] * bool(methods) + methods:
                doc = ast.get_docstring(item)
                if not doc or not doc.splitlines()[0].strip().endswith("."):
                    missing.append(f"{path.stem}.{node.name}.{getattr(item, 'name', '')}")
    assert missing == []
