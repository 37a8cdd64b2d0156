"""Torch realisations of verification cases: potentials K(w) and regression losses with data.

Regression losses are L(w) = ½·mean_i ‖y_i − f_w(x_i)‖² (Gaussian noise of unit variance, up to a
constant), so K(w) = ½·E‖f_w(x) − f_0(x)‖² and λ is that of the case's exact answer.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import sympy as sp
import torch
from torch import Tensor

from numeric.backend.linalg import least_squares, one_thread

from ._validate import check_data_size
from .cases import DLNCase, FactorisedCase, PotentialCase, RRRCase
from .errors import InvalidArgumentError, InvalidTypeError

__all__ = [
    "RegressionProblem",
    "linear_network_min_loss",
    "polynomial_potential",
    "product_regression",
    "regression_problem",
]


def _polynomial(K: object, variables: object) -> sp.Poly:
    """K as a polynomial in the variables. Only sympy objects are accepted: sympy reads a string
    with its parser, which evaluates Python code, so a string is refused, never parsed (build K
    from sympy Symbols, or read text with :func:`rlct.parsing.parse_expression`)."""
    if (
        not isinstance(variables, Sequence)
        or isinstance(variables, str)
        or not variables
        or not all(isinstance(v, sp.Symbol) for v in variables)
    ):
        raise InvalidTypeError(
            f"variables must be a non-empty sequence of sympy Symbols, got {variables!r}"
        )
    if not isinstance(K, sp.Expr):
        shown = repr(K) if len(repr(K)) <= 80 else repr(K)[:77] + "..."
        why = (
            " (a string is refused: sympy would evaluate it as code)" if isinstance(K, str) else ""
        )
        raise InvalidTypeError(
            f"K must be a sympy expression in {tuple(variables)}, got {type(K).__name__} "
            f"{shown}{why}"
        )
    if stray := sorted(map(str, K.free_symbols - set(variables))):
        raise InvalidArgumentError(
            f"K contains symbols {stray} not in the variables {tuple(variables)}"
        )
    if not K.is_polynomial(*variables):
        raise InvalidArgumentError(f"K must be a polynomial in {tuple(variables)}, got {K}")
    return sp.Poly(K, *variables)


def polynomial_potential(
    K: sp.Expr, variables: tuple[sp.Symbol, ...]
) -> Callable[[Tensor], Tensor]:
    """K as a torch function of w[..., d] (parameters on the last axis, leading axes for chains).

    K must be a sympy expression and the variables sympy Symbols (``InvalidTypeError``, a
    ``TypeError``, otherwise)."""
    terms = [(float(c), m) for m, c in _polynomial(K, variables).terms()]

    def potential(w: Tensor) -> Tensor:
        total = torch.zeros(w.shape[:-1], dtype=w.dtype, device=w.device)
        for c, m in terms:
            t = torch.full_like(total, c)
            for j, e in enumerate(m):
                if e:
                    t = t * w[..., j] ** e
            total = total + t
        return total

    return potential


@dataclass(frozen=True)
class RegressionProblem:
    """A loss in functional style, the true parameter w* and the data (x, y)."""

    loss_fn: Callable[[dict[str, Tensor], tuple[Tensor, Tensor]], Tensor]
    params: dict[str, Tensor]
    data: tuple[Tensor, Tensor]
    # the same L_n as a potential of w [..., d] through the sufficient statistics (normal
    # crossing: y = x·c(w) with c(w) = Π w_j^k_j), for quadrature; None for linear networks
    potential: Callable[[Tensor], Tensor] | None = None


def _chain_forward(mats: list[Tensor], x: Tensor) -> Tensor:
    for W in mats:
        x = x @ W.T
    return x


def regression_exponents(case: PotentialCase) -> list[int]:
    """k_j of a normal-crossing K = Π w_j^(2k_j): the regression y = x·Π w_j^(k_j) + noise at
    w* = 0 has K (up to the noise's variance) as its population loss."""
    poly = _polynomial(case.K, case.variables)
    return [poly.degree(v) // 2 for v in case.variables]


def half_mse(residual: Tensor) -> Tensor:
    """½·mean over samples (the first axis) of ‖residual‖²: the unit-noise Gaussian negative
    log-likelihood up to a constant. One reduction over every entry: torch's CPU sum over a last
    axis of 1–2 outputs costs ~100× more per entry (benchmarks/RESULTS.md)."""
    return 0.5 * residual.square().sum() / residual.shape[0]


def regression_problem(
    case: RRRCase | DLNCase | FactorisedCase | PotentialCase, n: int, generator: torch.Generator
) -> RegressionProblem:
    """Data from the case's true model with unit Gaussian noise; w* at the most singular point.

    Linear networks: the true map has rank r and w* factors it with zero blocks beyond rank r
    (at r = 0, w* = 0); a ``FactorisedCase`` has w* = its layers (parameters W0, W1, … in
    input-first order, as ``rlct.dln_local_lambda`` lists them) and true map their product.
    Normal crossing: y = x·Π w_j^(k_j) + noise with w* = 0.
    """
    g = generator
    if isinstance(case, PotentialCase):
        k = regression_exponents(case)
        d = len(k)

        def f(p: dict[str, Tensor], x: Tensor) -> Tensor:
            w = p["w"]
            return x * torch.prod(torch.stack([w[j] ** k[j] for j in range(d)]))

        x = torch.randn(n, 1, generator=g, dtype=torch.float64)
        y = torch.randn(n, 1, generator=g, dtype=torch.float64)
        params = {"w": torch.zeros(d, dtype=torch.float64)}
    else:
        widths = list(case.widths)
        shapes = list(itertools.pairwise(widths))
        # refused before anything is allocated: data [n, in + out] and the weights
        check_data_size(case.name, n, widths[0] + widths[-1], sum(a * b for a, b in shapes))
        params = {}
        if isinstance(case, FactorisedCase):  # w* = the case's factorisation, layers input first
            for i, layer in enumerate(case.layers):
                params[f"W{i}"] = torch.tensor(layer, dtype=torch.float64)
        else:
            r = case.r
            for i, (a, b) in enumerate(shapes):
                W = torch.zeros(b, a, dtype=torch.float64)
                W[:r, :r] = torch.eye(r, dtype=torch.float64) if r else W[:r, :r]
                params[f"W{i}"] = W

        def f(p: dict[str, Tensor], x: Tensor) -> Tensor:
            return _chain_forward([p[f"W{i}"] for i in range(len(widths) - 1)], x)

        x = torch.randn(n, widths[0], generator=g, dtype=torch.float64)
        y = f(params, x) + torch.randn(n, widths[-1], generator=g, dtype=torch.float64)

    def loss_fn(p: dict[str, Tensor], batch: tuple[Tensor, Tensor]) -> Tensor:
        xb, yb = batch
        return half_mse(yb - f(p, xb))

    potential = None
    if isinstance(case, PotentialCase):
        sxx, sxy, syy = (x * x).mean(), (x * y).mean(), (y * y).mean()

        def potential(w: Tensor) -> Tensor:
            """L_n(w) = ½(mean y² − 2c·mean xy + c²·mean x²), c = Π w_j^k_j."""
            c = torch.prod(torch.stack([w[..., j] ** k[j] for j in range(d)]), 0)
            return 0.5 * (syy - 2 * c * sxy + c * c * sxx)

    return RegressionProblem(loss_fn, params, (x, y), potential)


def product_regression(n: int, generator: torch.Generator) -> RegressionProblem:
    """The noisy saddle y = x·w1·w2 + noise at w* = 0 (true w1·w2 = 0): ``regression_problem`` of
    the normal-crossing case K = w1²w2², whose ``potential`` is the same L_n through its
    sufficient statistics (the estimator's exact target by quadrature)."""
    a, b = sp.symbols("a b", real=True)
    case = PotentialCase("w1²w2²", a**2 * b**2, (a, b), (sp.Integer(0),) * 2, None, None)
    return regression_problem(case, n, generator)


def linear_network_min_loss(widths: Sequence[int], data: tuple[Tensor, Tensor]) -> float:
    """min L_n over a linear network with these widths: ½·mean‖y − xCᵀ‖² over matrices C of rank
    at most H = min(widths), exactly (reduced-rank regression).

    With F = xB̂ the least-squares fit, y − xCᵀ splits into the residual y − F and F − xCᵀ,
    orthogonal to it, and the best rank-H approximation of F leaves the squared singular values
    of F beyond the H-th (Eckart–Young): min L_n = ½·mean‖y − F‖² + ½·Σ_{i>H} σ_i(F)²/n, the σ_i²
    being the eigenvalues of FᵀF (numeric.backend.linalg: the same bits in every process).
    """
    x, y = (t.double() for t in data)
    fitted = x @ least_squares(x, y)
    with one_thread():
        sq_singular = torch.linalg.eigvalsh(fitted.T @ fitted)  # ascending
    dropped = sq_singular[: max(sq_singular.numel() - min(widths), 0)].clamp(min=0).sum()
    return float(0.5 * ((y - fitted).square().sum(-1).mean() + dropped / len(y)))
