"""Every finding code the estimators can return is in the registry (``numeric.findings.codes``),
and every registered code is one they can return: the docs' catalogue is complete."""

from __future__ import annotations

import ast
from pathlib import Path

from numeric.findings.codes import BY_CODE, CODES, PREMISE_CODES, markdown

NUMERIC = Path(__file__).resolve().parents[1] / "numeric"


def _codes_in_source() -> set[str]:
    """The string literal first argument of every ``Finding(...)`` call in numeric/."""
    found = set()
    for path in NUMERIC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Finding"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                found.add(node.args[0].value)
    return found


def test_every_code_in_the_source_is_registered_and_every_registered_code_is_used() -> None:
    used = _codes_in_source()
    assert len(used) > 30  # the scan sees the estimators' findings
    assert used - set(BY_CODE) == set()
    assert set(BY_CODE) - used == {"DivergenceError"}  # calibration's name for a failed run


def test_codes_are_unique_and_the_catalogue_lists_each_once() -> None:
    assert len(BY_CODE) == len(CODES)
    page = markdown()
    for c in CODES:
        assert page.count(f"| `{c.code}` |") == 1
    assert PREMISE_CODES == {"below_reference_loss", "gradient_at_w_star", "off_centre"}
