"""The README's Python examples run as written and print what their comments say."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import torch

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def _run(code: str) -> tuple[dict[str, object], str]:
    namespace: dict[str, object] = {"__name__": "readme_example"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), namespace)  # our own README
    return namespace, out.getvalue()


def test_readme_has_the_exact_and_the_estimation_examples() -> None:
    blocks = _python_blocks()
    assert len(blocks) == 3
    assert "import rlct" in blocks[0] and "numeric.estimate_llc" in blocks[1]
    assert "numeric.estimate_llc_series" in blocks[2] and "numeric.restrict" in blocks[2]


def test_readme_exact_example_prints_the_values_its_comments_state() -> None:
    _, out = _run(_python_blocks()[0])
    # the comments' values: x²y⁴ by the normal-crossing rule, x⁴ + x²y² + y⁶ by its Newton
    # polyhedron (vertex (2, 2) on the diagonal, shared by two facets), (y − x³)² + x⁸ degenerate
    # but s = y − x³ makes it s² + x⁸ = 1/2 + 1/8, and
    # Aoyagi–Watanabe's RRR formula for M = N = 4, H = 3, r = 1 (also as a deep linear network)
    heads = [line for line in out.splitlines() if not line.startswith(" ")]
    assert heads[0].startswith("λ = 1/4, m = 1")
    assert heads[1].startswith("λ = 1/2, m = 2")
    assert heads[2].startswith("λ = 5/8, m = 1")
    assert heads[3].startswith("λ = 6, m = 1")
    assert heads[4].startswith("λ = 6, m = 1")


def test_readme_estimation_example_runs_and_agrees_with_the_laplace_value() -> None:
    with torch.random.fork_rng():  # the example initialises its model from the global generator
        torch.manual_seed(0)
        namespace, out = _run(_python_blocks()[1])
    est = namespace["est"]
    assert out.startswith("LLC = ")
    assert est.config.gamma == 100.0 and est.config.num_chains == 8
    assert not [f for f in est.diagnostics if f.severity == "error"]
    assert est.stderr > 0 and est.ess > 100
    # with γ = 100 the chains stay where the quadratic picture at the trained minimum holds:
    # ½·Σ nβh/(nβh + γ) is close to the estimate (measured within 2% on three minima)
    assert abs(est.mean - est.config.laplace_llc) < 0.15 * est.config.laplace_llc


def test_readme_series_example_grows_along_training_and_restricts_to_the_last_layer() -> None:
    with torch.random.fork_rng():  # the example initialises its model from the global generator
        torch.manual_seed(0)
        namespace, out = _run(_python_blocks()[2])
    series, last = namespace["series"], namespace["last"]
    assert out.splitlines()[0].split() == ["checkpoint", "step", "LLC", "stderr", "ESS", "worst"]
    assert series.steps == (200, 1000) and series.seeds == (0, 1)
    for est in series.estimates:
        assert est.ess > 100 and not [f for f in est.diagnostics if f.severity == "error"]
    # the text: λ̂ grows along the run (measured 5.73 ± 0.07, then 8.33 ± 0.10)
    assert series.means[0] + 10 * series.stderrs[0] < series.means[-1]
    # the last layer alone: 16 weights and a bias, near its quadratic value ½·Σ nβh/(nβh + γ)
    assert last.config.num_params == 17 and last.ess > 100
    assert abs(last.mean - last.config.laplace_llc) < 0.15 * last.config.laplace_llc
