"""The shape of every package: imports run one way, modules and functions stay small, no
``nonlocal`` state (rlct's own rules, stricter, are in test_rlct_structure.py); numeric's folders
import in the order numeric/__init__.py maps.

Read from the source with ``ast`` (nothing is imported by the checks themselves).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from test_rlct_structure import find_cycle, imports

REPO = Path(__file__).parent.parent
PACKAGES = ("rlct", "numeric", "verification")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80  # of code: the docstring does not count
# numeric's folders in import order: each imports only from those before it. "root" is the
# top-level modules (errors, options, types, budget); numeric/__init__.py may import anything.
NUMERIC_FOLDER_ORDER = (
    "root",
    "backend",
    "stats",
    "inputs",
    "hessian",
    "sampler",
    "plan",
    "warmup",
    "findings",
    "result",
    "draws",
    "run",
    "potential",
    "series",
)


def _sources(package: str) -> list[Path]:
    return sorted((REPO / package).rglob("*.py"))


def code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from the first statement after the docstring to the end of the function."""
    body = node.body
    first = body[0]
    is_doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    if is_doc and isinstance(first.value.value, str):
        if len(body) == 1:
            return 0
        first = body[1]
    return node.end_lineno - first.lineno + 1


def test_code_lines_skips_the_docstring():
    tree = ast.parse('def f():\n    """doc\n    more"""\n    a = 1\n    return a\n')
    assert code_lines(tree.body[0]) == 2


@pytest.mark.parametrize("package", PACKAGES)
def test_imports_run_one_way(package: str):
    graph = imports(REPO / package)
    assert len(graph) > 3  # the graph is read
    assert find_cycle(graph) is None


@pytest.mark.parametrize("package", PACKAGES)
def test_modules_are_small(package: str):
    big = {
        str(p.relative_to(REPO)): n
        for p in _sources(package)
        if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert not big


@pytest.mark.parametrize("package", PACKAGES)
def test_functions_are_short_and_hold_no_nonlocal_state(package: str):
    long, nonlocal_ = [], []
    for path in _sources(package):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if (n := code_lines(node)) > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} ({n})")
            elif isinstance(node, ast.Nonlocal):
                nonlocal_.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not long
    assert not nonlocal_


def folder_of(root: Path, module: str) -> str:
    """The folder of ``root``'s package that holds ``module`` ("root" for a top-level module, the
    package's own name for its ``__init__``)."""
    parts = module.split(".")
    if len(parts) == 1:
        return parts[0]
    return parts[1] if (root / parts[1] / "__init__.py").exists() else "root"


def folder_edges(root: Path) -> set[tuple[str, str]]:
    """(importing folder, imported folder) for every import between two folders of ``root``'s
    package (its ``__init__`` left out: the public face may import anything)."""
    return {
        (folder_of(root, a), folder_of(root, b))
        for a, targets in imports(root).items()
        for b in targets
        if a != root.name and folder_of(root, a) != folder_of(root, b)
    }


def order_violations(root: Path, order: tuple[str, ...], doc: str) -> list[str]:
    """What breaks the folder order: a folder the order does not name (or an entry with no
    folder), an import of a folder later in the order, and a docstring ``doc`` that does not map
    the folders (as ``name/``) in that order."""
    folders = {p.parent.name for p in root.glob("*/__init__.py")} | {"root"}
    out = [f"folder {f} not in the order" for f in sorted(folders - set(order))]
    out += [f"{f} in the order is no folder" for f in order if f not in folders]
    rank = {name: i for i, name in enumerate(order)}
    out += sorted(
        f"{a} imports {b}"
        for a, b in folder_edges(root)
        if a in rank and b in rank and rank[b] > rank[a]
    )
    named = [f"``{f}/``" for f in order[1:]]
    out += [f"{n} not in the docstring" for n in named if n not in doc]
    at = [doc.index(n) for n in named if n in doc]
    if at != sorted(at):
        out.append("the docstring maps the folders in another order")
    return out


def test_the_folder_order_check_sees_each_breach(tmp_path: Path):
    pkg = tmp_path / "pkg"
    for sub in ("low", "high"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text('"""``low/`` then ``high/``."""\nfrom pkg.high import b\n')
    (pkg / "base.py").write_text("")
    (pkg / "low" / "a.py").write_text("from pkg import base\n")
    (pkg / "high" / "b.py").write_text("from pkg.low import a\n")
    doc = "``low/`` then ``high/``"
    assert order_violations(pkg, ("root", "low", "high"), doc) == []
    assert order_violations(pkg, ("root", "high", "low"), doc) == [
        "high imports low",
        "the docstring maps the folders in another order",
    ]
    assert order_violations(pkg, ("root", "low"), doc) == ["folder high not in the order"]
    (pkg / "low" / "a.py").write_text("from pkg.high import b\n")  # low reaches up to high
    assert order_violations(pkg, ("root", "low", "high"), doc) == ["low imports high"]


def test_numeric_folders_import_in_the_stated_order():
    root = REPO / "numeric"
    assert ("sampler", "hessian") in folder_edges(root)  # the graph is read
    doc = ast.get_docstring(ast.parse((root / "__init__.py").read_text())) or ""
    assert order_violations(root, NUMERIC_FOLDER_ORDER, doc) == []
