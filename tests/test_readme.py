"""The README's Python examples run as written and print what their comments and outputs say.

Its blocks are one session: the estimate, then the series over checkpoints (which reuses the
estimate's data), then the exact values."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest
import torch

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def _run(*codes: str) -> tuple[dict[str, object], str]:
    namespace: dict[str, object] = {"__name__": "readme_example"}
    out = io.StringIO()
    with torch.random.fork_rng(), contextlib.redirect_stdout(out):
        for code in codes:
            exec(compile(code, str(README), "exec"), namespace)  # our own README
    return namespace, out.getvalue()


def test_readme_is_short_with_install_and_quickstart_first() -> None:
    text = README.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= 200
    assert any(line.startswith("pip install") for line in lines[:25])  # the first screen
    assert "## Quickstart\n\n```bash\nmake report\nmake test\n```" in text


def test_readme_has_the_estimation_series_and_exact_examples() -> None:
    blocks = _python_blocks()
    assert len(blocks) == 3
    assert "numeric.estimate_llc" in blocks[0]
    assert "numeric.estimate_llc_series" in blocks[1] and "numeric.restrict" in blocks[1]
    assert "import rlct" in blocks[2]


def test_readme_exact_example_prints_the_values_its_comments_state() -> None:
    _, out = _run(_python_blocks()[2])
    # the comments' values: a²b⁴ by the normal-crossing rule, a⁴ + a²b² + b⁶ by its Newton
    # polyhedron (vertex (2, 2) on the diagonal, shared by two facets), (b − a³)² + a⁸ degenerate
    # but s = b − a³ makes it s² + a⁸ = 1/2 + 1/8, and
    # Aoyagi–Watanabe's RRR formula for M = N = 4, H = 3, r = 1 (also as a deep linear network)
    heads = [line for line in out.splitlines() if not line.startswith(" ")]
    assert heads[0].startswith("λ = 1/4, m = 1")
    assert heads[1].startswith("λ = 1/2, m = 2")
    assert heads[2].startswith("λ = 5/8, m = 1")
    assert heads[3].startswith("λ = 6, m = 1")
    assert heads[4].startswith("λ = 6, m = 1")


@pytest.fixture(scope="module")
def session() -> tuple[dict[str, object], str]:
    blocks = _python_blocks()
    return _run(blocks[0], blocks[1])


def test_readme_estimate_prints_the_output_shown(session) -> None:
    """The printed estimate is the README's ``text`` block (the numbers of this machine's
    float rounding: compared to 2 significant digits of λ̂, and the findings' codes)."""
    namespace, out = session
    est = namespace["est"]
    assert out.startswith("LLC = ")
    shown = re.findall(r"```text\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)[0]
    assert shown.startswith("LLC = ")
    shown_llc = float(re.match(r"LLC = ([\d.]+)", shown).group(1))
    assert abs(est.mean - shown_llc) < 4 * est.stderr
    assert est.config.gamma == 100.0 and est.config.num_chains == 8
    assert not [f for f in est.diagnostics if f.severity == "error"]
    assert est.stderr <= 0.1 * est.mean  # the stopping rule's default precision was reached
    # with γ = 100 the chains stay where the quadratic picture at the trained minimum holds:
    # ½·Σ nβh/(nβh + γ) is close to the estimate (measured within 2% on three minima)
    assert abs(est.mean - est.config.laplace_llc) < 0.15 * est.config.laplace_llc


def test_readme_series_grows_along_training_and_restricts_to_the_last_layer(session) -> None:
    namespace, out = session
    series, last = namespace["series"], namespace["last"]
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["checkpoint", "step"])
    assert lines[header].split() == ["checkpoint", "step", "LLC", "stderr", "ESS", "worst"]
    assert series.steps == (200, 1000) and series.seeds == (0, 1)
    for est in series.estimates:
        assert not [f for f in est.diagnostics if f.severity == "error"]
    # the output shown: λ̂ grows along the run (5.5 ± 0.2, then 9.5 ± 0.2)
    assert series.means[0] + 10 * series.stderrs[0] < series.means[-1]
    # the last layer alone: 16 weights and a bias, near its quadratic value ½·Σ nβh/(nβh + γ)
    assert last.config.num_params == 17
    assert abs(last.mean - last.config.laplace_llc) < 0.15 * last.config.laplace_llc
    assert lines[-1].startswith("last layer: ")
