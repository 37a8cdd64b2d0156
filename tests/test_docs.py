"""The docs site's examples run as written, and its generated pages are current.

Each page's ```python blocks run in order in one namespace (a page is one session); outputs are
shown in ```text blocks, not run. ``make docs`` builds the site with warnings as errors."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest
import torch

from numeric.findings.codes import markdown

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "```python" in p.read_text(encoding="utf-8"))


def _blocks(page: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_the_page_s_examples_run(page: Path) -> None:
    namespace: dict[str, object] = {"__name__": "docs_example"}
    out = io.StringIO()
    with torch.random.fork_rng(), contextlib.redirect_stdout(out):
        for code in _blocks(page):
            exec(compile(code, str(page), "exec"), namespace)  # our own docs
    printed = out.getvalue()
    assert printed.strip(), f"{page}: the examples print nothing to check"
    assert "False" not in printed, f"{page}: an example printed False:\n{printed}"


def test_pages_with_examples_are_found() -> None:
    names = {p.name for p in PAGES}
    assert {"estimate.md", "stopping.md", "series.md", "exact.md", "calibrate.md"} <= names


def test_the_findings_page_is_the_registry() -> None:
    """``docs/findings.md`` is generated: ``python -m numeric.findings.codes >
    docs/findings.md``."""
    assert (DOCS / "findings.md").read_text(encoding="utf-8") == markdown()
