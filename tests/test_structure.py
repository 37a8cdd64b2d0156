"""The shape of every package: imports run one way, modules and functions stay small, no
``nonlocal`` state (rlct's own rules, stricter, are in test_rlct_structure.py).

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
