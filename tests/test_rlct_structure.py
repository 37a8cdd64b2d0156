"""The shape of the `rlct` package: imports run one way (between modules and between folders, in
the order rlct/__init__.py maps), modules stay small, no private imports.

The import graph is read from the source with `ast` (nothing is imported), so a cycle hidden in a
function body (a lazy import, a module ``__getattr__``) counts as well.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import rlct

ROOT = Path(rlct.__file__).parent
MAX_LINES = 400
# rlct's folders in import order: each imports only from those before it. "root" is the top-level
# modules (result, errors, parsing, expressions, time_limit, _validate); cascade.py, top-level too,
# drives the folders before it and has a place of its own. rlct/__init__.py may import anything.
FOLDER_ORDER = (
    "root",
    "algebra",
    "newton",
    "shapes",
    "reductions",
    "plane",
    "blowup",
    "cascade",
    "local",
    "closed_forms",
    "quadratic",
)


def module_name(path: Path, root: Path) -> str:
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path) -> dict[str, Path]:
    return {module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def _base(name: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute module named by ``from <node.module> import …`` inside module ``name``."""
    if node.level == 0:
        return node.module or ""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def imports(root: Path) -> dict[str, set[str]]:
    """module → the modules of the same package it imports (anywhere in its body).

    ``from X import a`` is an edge to X.a when that is a module, else to X. Importing a submodule
    also runs its parent packages' ``__init__``; those implicit edges are not counted (every
    submodule would otherwise be in a cycle with its package).
    """
    mods = modules(root)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _base(name, path, node)
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names
                ]
            else:
                continue
            graph[name] |= {t for t in targets if t in mods and t != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the directed graph as a list of nodes (first == last), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_cycle_finder_finds_cycles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_import_graph_of_a_cycle(tmp_path: Path):
    # The old layout in miniature: quadratic imports theorems lazily, theorems imports quadratic.
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .quadratic import llc\n")
    (pkg / "quadratic.py").write_text(
        "def llc(): ...\ndef __getattr__(name):\n    from . import theorems\n"
    )
    (pkg / "theorems.py").write_text("from .quadratic import llc\n")
    graph = imports(pkg)
    assert graph == {
        "pkg": {"pkg.quadratic"},
        "pkg.quadratic": {"pkg.theorems"},
        "pkg.theorems": {"pkg.quadratic"},
    }
    assert find_cycle(graph) == ["pkg.quadratic", "pkg.theorems", "pkg.quadratic"]


def test_rlct_imports_run_one_way():
    graph = imports(ROOT)
    assert "rlct.quadratic.theorems" in graph["rlct.quadratic.check"]  # the graph is read
    assert find_cycle(graph) is None


def folder(module: str) -> str:
    """The entry of FOLDER_ORDER that holds ``module`` (``rlct`` itself: "rlct")."""
    parts = module.split(".")
    if len(parts) == 1:
        return "rlct"
    if parts[1] == "cascade" or (ROOT / parts[1] / "__init__.py").exists():
        return parts[1]
    return "root"


def test_folders_import_in_the_stated_order():
    folders = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert folders | {"root", "cascade"} == set(FOLDER_ORDER)
    edges = {
        (folder(a), folder(b))
        for a, targets in imports(ROOT).items()
        for b in targets
        if a != "rlct" and folder(a) != folder(b)
    }
    assert ("newton", "algebra") in edges  # the graph is read
    rank = {name: i for i, name in enumerate(FOLDER_ORDER)}
    assert not sorted(f"{a} → {b}" for a, b in edges if rank[b] > rank[a])
    # rlct/__init__.py's docstring maps the folders in the same order.
    doc = rlct.__doc__ or ""
    named = [f"``{f}.py``" if f == "cascade" else f"``{f}/``" for f in FOLDER_ORDER[1:]]
    assert all(n in doc for n in named)
    assert [doc.index(n) for n in named] == sorted(doc.index(n) for n in named)


@pytest.mark.parametrize("path", sorted(ROOT.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_module_is_small(path: Path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(ROOT.parent)} has {lines} lines"


def test_no_private_names_imported_across_modules():
    private = []
    for name, path in modules(ROOT).items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level > 0:
                base = _base(name, path, node)
                private += [
                    f"{name}: from {base} import {a.name}"
                    for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                ]
    assert not private


def test_no_public_name_shadows_a_submodule():
    # `from .jacobians import jacobian` in a package with a module `jacobian.py` would make
    # `import rlct.quadratic.jacobian as m` return the function, not the module.
    clashes = []
    for name, path in modules(ROOT).items():
        if path.name == "__init__.py":
            subs = {p.stem for p in path.parent.glob("*.py")} | {
                p.name for p in path.parent.iterdir() if (p / "__init__.py").exists()
            }
            exported = set(__import__(name, fromlist=["__all__"]).__all__)
            clashes += [f"{name}.{s}" for s in sorted(subs & exported)]
    assert not clashes


def test_no_builtin_exception_is_raised():
    # rlct raises its own errors (rlct/errors.py), never a bare ValueError or TypeError.
    import builtins

    generic = {
        n for n, c in vars(builtins).items() if isinstance(c, type) and issubclass(c, Exception)
    }
    foreign = []
    for name, path in modules(ROOT).items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Raise) and node.exc is not None:
                exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if isinstance(exc, ast.Name) and exc.id in generic:
                    foreign.append(f"{name}:{node.lineno}: raise {ast.unparse(node.exc)}")
    assert not foreign
