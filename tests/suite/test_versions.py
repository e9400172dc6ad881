"""A benchmark whose timed code changes must get a new `version`.

asv keeps a benchmark's history across edits only while its `version` stays
the same, and drops results recorded under another one. So an edit that
changes what is timed must bump it, and one that does not must not. The
"timed code" of a benchmark class is, as syntax trees (comments, docstrings and
formatting do not count):

- its class, the classes of its module it derives from, and the module's other
  top-level code (helpers, constants; not other classes);
- in every suite module that code imports, what it uses: the definitions of the
  names it imports (a whole module where it imports the module), and within
  each module, by name, every top-level definition those use, transitively;
  a builder named in a string ("module:function", engine.py) counts as used.

So an edit to a helper only some benchmarks call bumps only those: the histories of
the others survive it. checks.py, which only decides whether a case runs, does not
count: what decides how a block is timed lives in the timed modules
(common.block_wait_op).

benchmark_versions.json records, per class, the version and a fingerprint of
its timed code. After changing timed code, bump the class's `version`, then
record it:

    python tests/suite/test_versions.py --update

which refuses to record a changed fingerprint under an unchanged version.
"""

import ast
import hashlib
import json
import re
import shutil
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


# A builder the engine imports by its name (engine.block("module:function", ...)).
BUILDER = re.compile(r"^([a-z_][a-z0-9_]*):([a-z_][a-z0-9_]*)$")
WHOLE = None  # every top-level definition of a module


def _bound(target):
    """The names an assignment to `target` binds, or None where it changes something else
    (an attribute, an item: os.environ["X"] = ...)."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, ast.Starred):
        return _bound(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        names = [_bound(element) for element in target.elts]
        return None if None in names else set().union(*names)
    return None


def _defined(node):
    """Names a top-level statement defines; None for one that is always kept (imports,
    statements that define nothing by name or change something other than a name)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    targets = (node.targets if isinstance(node, ast.Assign) else
               [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else None)
    if targets is None:
        return None
    names = [_bound(target) for target in targets]
    return None if None in names else set().union(*names) or None


def _uses(nodes):
    """(names read, {suite module: names imported from it, or WHOLE}) of `nodes`."""
    names, imports = set(), {}

    def need(module, wanted):
        if module in NOT_TIMED:
            return
        if wanted is WHOLE or imports.get(module, set()) is WHOLE:
            imports[module] = WHOLE
        else:
            imports.setdefault(module, set()).update(wanted)

    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                names.add(sub.id)
            elif isinstance(sub, ast.ImportFrom) and sub.level == 1:
                star = any(alias.name == "*" for alias in sub.names)
                if sub.module:
                    need(sub.module.split(".")[0],
                         WHOLE if star else {alias.name for alias in sub.names})
                else:
                    for alias in sub.names:
                        need(alias.name, WHOLE)
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                found = BUILDER.match(sub.value)
                if found and (SUITE / f"{found.group(1)}.py").exists():
                    need(found.group(1), {found.group(2)})
    return names, imports


def _closure(tree, wanted):
    """The top-level statements of `tree` that define `wanted` (WHOLE: all), those that
    define no name (they run on import: os.environ[...] = ..., a call), and, transitively,
    those defining a name any of them reads."""
    body = tree.body
    if wanted is WHOLE:
        return list(body)
    kept = {i for i, node in enumerate(body) if _defined(node) is None}
    wanted = set(wanted) | _uses([body[i] for i in kept])[0]
    while True:
        more = {i for i, node in enumerate(body)
                if i not in kept and (_defined(node) or set()) & wanted}
        if not more:
            return [node for i, node in enumerate(body) if i in kept]
        kept |= more
        wanted |= _uses([body[i] for i in more])[0]


def timed_parts(own_nodes):
    """{suite module: its statements the code `own_nodes` uses, transitively}."""
    parts, needed, todo = {}, {}, [_uses(own_nodes)[1]]
    while todo:
        for module, wanted in todo.pop().items():
            before = needed.get(module, set())
            if before is WHOLE or (wanted is not WHOLE and wanted <= before):
                continue
            needed[module] = WHOLE if wanted is WHOLE else before | wanted
            nodes = _closure(_tree(module), needed[module])
            parts[module] = nodes
            todo.append(_uses(nodes)[1])
    return parts


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
    what of the suite's other modules that code uses (timed_parts)."""
    tree = _tree(module)
    lineage = _lineage(tree, cls)
    own = [node for node in tree.body
           if not isinstance(node, ast.ClassDef) or node.name in lineage]
    while True:  # and the module's other classes that code uses by name, transitively
        read = _uses(own)[0]
        more = [node for node in tree.body if isinstance(node, ast.ClassDef)
                and node.name in read and node not in own]
        if not more:
            break
        own = [node for node in tree.body if node in own or node in more]
    parts = [ast.dump(node) for node in own]
    used = timed_parts(own)
    for name in sorted(set(used) - {module}):
        parts += [f"# {name}"] + [ast.dump(node) for node in used[name]]
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


def test_a_helper_change_bumps_only_the_benchmarks_whose_code_uses_it(tmp_path, monkeypatch):
    # A history survives an edit to code it never runs: asv drops results recorded under
    # an old version, so a bump where nothing timed changed would lose them for nothing.
    monkeypatch.setattr(sys.modules[__name__], "SUITE", tmp_path)
    helper = ("import time\n\nSCALE = 2\n\n\ndef inner():\n    return SCALE\n\n\n"
              "def f():\n    return inner()\n\n\ndef g():\n    return 3\n\n\n"
              "def built():\n    return 4\n")
    (tmp_path / "helper.py").write_text(helper)
    (tmp_path / "uses_f.py").write_text(
        "from .helper import f\n\n\nclass A:\n    def time_x(self):\n        f()\n")
    (tmp_path / "uses_g.py").write_text(
        "class B:\n    def time_x(self):\n        from .helper import g\n        g()\n")
    (tmp_path / "by_name.py").write_text(
        'class C:\n    def time_x(self):\n        run("helper:built")\n')
    (tmp_path / "whole.py").write_text(
        "from . import helper\n\n\nclass D:\n    def time_x(self):\n        helper.g()\n")
    benchmarks = {"A": "uses_f", "B": "uses_g", "C": "by_name", "D": "whole"}

    def prints():
        return {cls: fingerprint(module, cls) for cls, module in benchmarks.items()}

    def changed_by(old, new):
        before = prints()
        (tmp_path / "helper.py").write_text(helper.replace(old, new))
        after = prints()
        (tmp_path / "helper.py").write_text(helper)
        return {cls for cls in benchmarks if after[cls] != before[cls]}

    # A constant read by a function f calls: f's users and the whole module's.
    assert changed_by("SCALE = 2", "SCALE = 5") == {"A", "D"}
    assert changed_by("return 3", "return 6") == {"B", "D"}
    # A builder the engine imports by its name, "module:function", is used code too.
    assert changed_by("return 4", "return 7") == {"C", "D"}
    # Imports are kept whatever uses them: the module's own, and a changed one changes all.
    assert changed_by("import time", "import time as clock") == set(benchmarks)


def test_statements_run_on_import_are_kept_with_what_they_read(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "SUITE", tmp_path)
    helper = ("import os\n\nTHREADS = 1\nos.environ['OMP_NUM_THREADS'] = str(THREADS)\n"
              "LIMITS = {}\nLIMITS['x'] = 2\n\n\ndef f():\n    return 0\n")
    (tmp_path / "helper.py").write_text(helper)
    (tmp_path / "bench.py").write_text(
        "from .helper import f\n\n\nclass A:\n    def time_x(self):\n        f()\n")
    before = fingerprint("bench", "A")
    for old, new in [("THREADS = 1", "THREADS = 2"), ("LIMITS['x'] = 2", "LIMITS['x'] = 3")]:
        (tmp_path / "helper.py").write_text(helper.replace(old, new))
        assert fingerprint("bench", "A") != before, new


def test_a_star_import_and_a_class_of_its_own_module_it_uses_count(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "SUITE", tmp_path)
    (tmp_path / "helper.py").write_text("def g():\n    return 1\n")
    source = ("from .helper import *\n\n\nclass Size:\n    n = 4\n\n\n"
              "class A:\n    def time_x(self):\n        g(Size.n)\n")
    (tmp_path / "bench.py").write_text(source)
    before = fingerprint("bench", "A")
    (tmp_path / "helper.py").write_text("def g():\n    return 2\n")
    assert fingerprint("bench", "A") != before
    (tmp_path / "helper.py").write_text("def g():\n    return 1\n")
    (tmp_path / "bench.py").write_text(source.replace("n = 4", "n = 5"))
    assert fingerprint("bench", "A") != before


def test_whether_a_block_reads_back_is_timed_code_of_every_multiply_benchmark(
        tmp_path, monkeypatch):
    # The read that may end a block is decided in common.py (block_wait_op), not in
    # checks.py, which the fingerprint leaves out: putting it back must need a bump.
    copy = tmp_path / "benchmarks"
    shutil.copytree(SUITE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = {name: fingerprint(*name.split(".")) for name in benchmark_classes()}
    monkeypatch.setattr(sys.modules[__name__], "SUITE", copy)
    common = (copy / "common.py").read_text()
    for old, new in [('if device == "cpu" and executes_synchronously():', "if False:"),
                     ("return True if ask is None else bool(ask())", "return False")]:
        assert common.count(old) == 1, old
        (copy / "common.py").write_text(common.replace(old, new))
        changed = {name for name in before if fingerprint(*name.split(".")) != before[name]}
        assert changed == {"multiply.Multiply", "multiply.Speedup", "multiply.Bandwidth"}, new


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
