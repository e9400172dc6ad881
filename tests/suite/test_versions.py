"""A benchmark whose timed code changes must get a new `version`.

asv keeps a benchmark's history across edits only while its `version` stays
the same, and drops results recorded under another one. So an edit that
changes what is timed must bump it, and one that does not must not. The
"timed code" of a benchmark class is its own source and that of every suite
module it imports (transitively), as syntax trees: comments, docstrings and
formatting do not count; checks.py, which only decides whether a case runs,
does not either.

benchmark_versions.json records, per class, the version and a fingerprint of
its timed code. After changing timed code, bump the class's `version`, then
record it:

    python tests/suite/test_versions.py --update

which refuses to record a changed fingerprint under an unchanged version.
"""

import ast
import hashlib
import json
import sys
from pathlib import Path

SUITE = Path(__file__).resolve().parents[2] / "benchmarks"
RECORD = Path(__file__).resolve().parent / "benchmark_versions.json"
# Modules that decide whether a case runs, not how it is timed.
NOT_TIMED = {"checks", "forkserver_preload"}


def _without_docstrings(tree):
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                and isinstance(getattr(body[0], "value", None), ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return tree


def _tree(module):
    return _without_docstrings(ast.parse((SUITE / f"{module}.py").read_text()))


def _suite_imports(tree):
    """Names of the suite's modules a module imports (`from .x import ...`,
    `from . import x`)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                names.add(node.module.split(".")[0])
            else:
                names.update(alias.name for alias in node.names)
    return names


def timed_modules(module):
    """The suite modules whose code a benchmark of `module` runs, itself excluded."""
    seen, todo = set(), [module]
    while todo:
        for name in _suite_imports(_tree(todo.pop())) - NOT_TIMED - seen - {module}:
            seen.add(name)
            todo.append(name)
    return sorted(seen)


def _lineage(tree, cls):
    """Names of `cls` and of the classes of the same module it derives from."""
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    names, todo = set(), [cls]
    while todo:
        name = todo.pop()
        if name in classes and name not in names:
            names.add(name)
            todo += [getattr(base, "id", None) for base in classes[name].bases]
    return names


def fingerprint(module, cls):
    """sha256 of the class's syntax tree and those of the classes of its module it derives
    from, its module's other top-level code (helpers, constants, not other classes), and
    every timed module it imports."""
    tree = _tree(module)
    lineage = _lineage(tree, cls)
    own = [node for node in tree.body
           if not isinstance(node, ast.ClassDef) or node.name in lineage]
    parts = [ast.dump(node) for node in own]
    parts += [ast.dump(_tree(name)) for name in timed_modules(module)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def benchmark_classes():
    """{"module.Class": version} for every class with time_/track_ methods."""
    found = {}
    for path in sorted(SUITE.glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.ClassDef):
                continue
            methods = [n.name for n in node.body if isinstance(n, ast.FunctionDef)]
            if not any(m.startswith(("time_", "track_")) for m in methods):
                continue
            version = next((ast.literal_eval(n.value) for n in node.body
                            if isinstance(n, ast.Assign)
                            and any(getattr(t, "id", None) == "version" for t in n.targets)),
                           None)
            found[f"{path.stem}.{node.name}"] = version
    return found


def current():
    return {name: {"version": version, "code": fingerprint(*name.split("."))}
            for name, version in benchmark_classes().items()}


def test_every_benchmark_class_sets_its_version_explicitly():
    assert all(version is not None for version in benchmark_classes().values())


def test_timed_code_changes_only_with_a_new_version():
    recorded = json.loads(RECORD.read_text())
    stale = [
        name for name, now in current().items()
        if name in recorded and now["code"] != recorded[name]["code"]
        and now["version"] == recorded[name]["version"]
    ]
    assert not stale, (
        f"timed code of {', '.join(stale)} changed but its version did not: bump `version` "
        "(results under the old one leave the graphs), then run "
        "`python tests/suite/test_versions.py --update`"
    )
    unrecorded = sorted(set(current()) - set(recorded))
    assert not unrecorded, (f"{', '.join(unrecorded)}: not recorded; "
                            "run `python tests/suite/test_versions.py --update`")


def test_the_fingerprint_ignores_comments_and_docstrings_but_not_code(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "SUITE", tmp_path)
    (tmp_path / "helper.py").write_text("def f():\n    return 1\n")
    source = ('from .helper import f\n\n\nclass B:\n    """Doc."""\n\n'
              "    def time_x(self):\n        f()\n")
    (tmp_path / "bench.py").write_text(source)
    before = fingerprint("bench", "B")
    (tmp_path / "bench.py").write_text(source.replace('"""Doc."""', '"""Other doc."""  # note'))
    assert fingerprint("bench", "B") == before
    (tmp_path / "helper.py").write_text("def f():\n    return 2\n")
    assert fingerprint("bench", "B") != before


def test_a_subclass_changes_with_the_class_it_derives_from(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "SUITE", tmp_path)
    source = ("class A:\n    n = 1\n\n    def track_x(self):\n        return self.n\n\n\n"
              "class B(A):\n    def track_x(self):\n        return super().track_x()\n\n\n"
              "class C:\n    def track_y(self):\n        return 0\n")
    (tmp_path / "bench.py").write_text(source)
    before = {name: fingerprint("bench", name) for name in "ABC"}
    (tmp_path / "bench.py").write_text(source.replace("n = 1", "n = 2"))
    after = {name: fingerprint("bench", name) for name in "ABC"}
    assert after["A"] != before["A"] and after["B"] != before["B"]
    assert after["C"] == before["C"]


def update():
    recorded = json.loads(RECORD.read_text()) if RECORD.exists() else {}
    now = current()
    refused = [name for name, entry in now.items()
               if name in recorded and entry["code"] != recorded[name]["code"]
               and entry["version"] == recorded[name]["version"]]
    if refused:
        print(f"not recorded: bump `version` of {', '.join(refused)} first", file=sys.stderr)
        return 1
    RECORD.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
    print(f"recorded {len(now)} benchmark classes in {RECORD.name}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        print(__doc__)
        raise SystemExit(2)
    raise SystemExit(update())
