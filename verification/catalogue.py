"""The built-in catalogue of verification cases: exact λ, an estimate, a verdict for each.

Every entry is a frozen :class:`Entry` whose ``run`` computes the exact value with :mod:`rlct`,
estimates it with :mod:`numeric` (chains batched), and returns a :class:`CrossCheck`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import sympy as sp
import torch

import numeric
from numeric.reference import GaussianLinear, expected_llc

from .cases import DLNCase, PotentialCase, RRRCase
from .crosscheck import CrossCheck, DecisionRule, decide
from .models import polynomial_potential, regression_problem

__all__ = ["Entry", "Settings", "catalogue"]


@dataclass(frozen=True)
class Settings:
    """Estimator settings shared by the catalogue (each entry derives its own seed)."""

    n: int = 10_000
    num_chains: int = 8
    seed: int = 0
    device: str | None = None
    rule: DecisionRule = field(default_factory=DecisionRule)


@dataclass(frozen=True)
class Entry:
    name: str
    family: str
    run: Callable[[Settings, int], CrossCheck]


def _potential_entry(case: PotentialCase, family: str) -> Entry:
    def run(s: Settings, seed: int) -> CrossCheck:
        t0 = time.perf_counter()
        exact = case.exact()
        K = polynomial_potential(case.K, case.variables)
        w0 = [0.0] * case.dim
        est = numeric.estimate_llc_potential(
            K, w0, n=s.n, num_chains=s.num_chains, seed=seed, device=s.device
        )
        ref = None
        if case.dim <= 3 and all(h == 0 for h in case.prior):
            ref = expected_llc(K, w0, nbeta=est.nbeta, gamma=est.config.gamma)
        return decide(
            case.name, exact, est, reference=ref, rule=s.rule, seconds=time.perf_counter() - t0
        )

    return Entry(case.name, family, run)


def _regression_entry(case: RRRCase | DLNCase | PotentialCase, family: str) -> Entry:
    name = case.name if not isinstance(case, PotentialCase) else f"regression y = x·{case.K}^(1/2)"

    def run(s: Settings, seed: int) -> CrossCheck:
        t0 = time.perf_counter()
        exact = case.exact()
        gen = torch.Generator().manual_seed(seed)
        prob = regression_problem(case, s.n, gen)
        est = numeric.estimate_llc(
            prob.loss_fn,
            prob.params,
            prob.data,
            num_chains=s.num_chains,
            seed=seed,
            device=s.device,
        )
        return decide(name, exact, est, rule=s.rule, seconds=time.perf_counter() - t0)

    return Entry(name, family, run)


def _linear_entry(d: int) -> Entry:
    name = f"linear regression (d={d})"

    def run(s: Settings, seed: int) -> CrossCheck:
        import rlct

        t0 = time.perf_counter()
        gen = torch.Generator().manual_seed(seed)
        X = torch.randn(s.n, d, generator=gen, dtype=torch.float64)
        y = X @ torch.ones(d, dtype=torch.float64) + torch.randn(
            s.n, generator=gen, dtype=torch.float64
        )
        model = GaussianLinear(X, y)
        w_hat = model.minimiser()
        est = numeric.estimate_llc(
            model.loss_fn,
            {"w": w_hat},
            model.data,
            num_chains=s.num_chains,
            seed=seed,
            device=s.device,
        )
        ref = expected_llc(model, w_hat, nbeta=est.nbeta, gamma=est.config.gamma)
        return decide(
            name,
            rlct.regular_value(d),
            est,
            reference=ref,
            rule=s.rule,
            seconds=time.perf_counter() - t0,
        )

    return Entry(name, "regular", run)


def _nc(k: list[int]) -> PotentialCase:
    w = sp.symbols(f"w0:{len(k)}", real=True)
    ratios = [sp.Rational(1, 2 * x) for x in k if x]
    lam = min(ratios)
    K = sp.Mul(*(wi ** (2 * ki) for wi, ki in zip(w, k)))
    return PotentialCase(
        f"normal crossing K = {K}", K, tuple(w), (sp.Integer(0),) * len(k), lam, ratios.count(lam)
    )


def _poly(name: str, K: sp.Expr, variables: tuple[sp.Symbol, ...]) -> PotentialCase:
    return PotentialCase(name, K, variables, (sp.Integer(0),) * len(variables), None, None)


def catalogue(quick: bool = False) -> list[Entry]:
    """The catalogue: ``quick`` is a subset that runs in about a minute on two CPU cores."""
    x, y, z = sp.symbols("x y z", real=True)
    entries = [
        _linear_entry(3),
        _potential_entry(_nc([1]), "normal crossing"),
        _potential_entry(_nc([1, 2]), "normal crossing"),
        _potential_entry(_nc([1, 1]), "normal crossing"),
        _potential_entry(_poly("Newton K = x⁴ + y⁶", x**4 + y**6, (x, y)), "Newton"),
        _potential_entry(
            _poly("Newton K = x⁴ + x²y² + y⁶", x**4 + x**2 * y**2 + y**6, (x, y)), "Newton"
        ),
        _regression_entry(RRRCase(2, 2, 2, 0), "reduced rank regression"),
        _regression_entry(_nc([1, 1]), "normal-crossing regression"),
    ]
    if quick:
        return entries
    entries += [
        _linear_entry(10),
        _potential_entry(_nc([2, 3]), "normal crossing"),
        _potential_entry(_nc([1, 1, 1]), "normal crossing"),
        _potential_entry(_poly("Newton K = x² + y² + z²", x**2 + y**2 + z**2, (x, y, z)), "Newton"),
        _potential_entry(_poly("Newton K = x²y⁴ + x⁶", x**2 * y**4 + x**6, (x, y)), "Newton"),
        _regression_entry(RRRCase(3, 3, 2, 0), "reduced rank regression"),
        _regression_entry(RRRCase(4, 4, 3, 1), "reduced rank regression"),
        _regression_entry(DLNCase((2, 2, 2, 2), 0), "deep linear network"),
        _regression_entry(DLNCase((3, 2, 3, 2), 1), "deep linear network"),
        _regression_entry(_nc([1, 2]), "normal-crossing regression"),
    ]
    return entries
