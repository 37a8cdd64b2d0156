"""The built-in catalogue of verification cases: exact λ, an estimate, a verdict for each.

Every entry is a frozen :class:`Entry` whose ``run(settings, seed)`` computes the exact value with
:mod:`rlct`, estimates it with :mod:`numeric` (chains batched), and returns a :class:`CrossCheck`.
``run`` is a ``functools.partial`` of a module-level function, so entries pickle and can be sent
to worker processes or a Ray cluster.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

import sympy as sp
import torch

import numeric
import rlct
from numeric.potential.reference import GaussianLinear, expected_llc

from ._validate import (
    MAX_SEED,
    check_bool,
    check_data_size,
    check_int,
    check_settings,
    check_type,
)
from .cases import DLNCase, FactorisedCase, PotentialCase, QuadraticCase, RRRCase
from .decision import CrossCheck, DecisionRule, LaplaceReference, decide, refuse
from .errors import InvalidArgumentError, InvalidTypeError
from .factorisations import report_points
from .models import (
    half_mse,
    polynomial_potential,
    regression_exponents,
    regression_problem,
)
from .targets import linear_network_reference, true_parameter_target

__all__ = ["Entry", "Settings", "catalogue"]


@dataclass(frozen=True)
class Settings:
    """Estimator settings shared by the catalogue (each entry gets its own seed)."""

    n: int = 10_000
    num_chains: int = 8
    seed: int = 0
    device: str | None = None
    rule: DecisionRule = field(default_factory=DecisionRule)

    def __post_init__(self) -> None:
        """Checked here, before any work: bad settings otherwise fail deep in one case's run."""
        check_settings(self, DecisionRule)


@dataclass(frozen=True)
class Entry:
    name: str
    family: str
    run: Callable[[Settings, int], CrossCheck]


def _run_potential(case: PotentialCase, s: Settings, seed: int) -> CrossCheck:
    """MALA on K at w* = 0, with the quadrature reference λ_β when d ≤ 3 and the prior is flat."""
    t0 = time.perf_counter()
    exact = case.exact()
    K = polynomial_potential(case.K, case.variables)
    w0 = [0.0] * case.dim
    # the prior Π|w_j|^(h_j) is sampled with the potential (flat when every h_j = 0)
    prior = tuple(float(h) for h in case.prior) if any(case.prior) else None
    est = numeric.estimate_llc_potential(
        K, w0, n=s.n, num_chains=s.num_chains, seed=seed, device=s.device, prior_exponents=prior
    )
    ref = None
    if case.dim <= 3 and all(h == 0 for h in case.prior):
        ref = expected_llc(K, w0, nbeta=est.nbeta, gamma=est.config.gamma)
    return decide(
        case.name, exact, est, reference=ref, rule=s.rule, seconds=time.perf_counter() - t0
    )


def _prior_unsupported(
    case: PotentialCase, exact: rlct.RLCT, s: Settings, t0: float
) -> CrossCheck | None:
    """An honest "inconclusive" for a non-flat prior, which ``estimate_llc`` (data models) does
    not sample (an estimate without it would be compared with a λ that includes it); None for a
    flat prior. ``estimate_llc_potential`` samples priors (``prior_exponents``)."""
    if all(h == 0 for h in case.prior):
        return None
    reason = (
        f"unsupported: the prior exponents h = ({', '.join(map(str, case.prior))}) are not "
        "sampled by numeric.estimate_llc (data models), so no estimate of this λ was made"
    )
    return refuse(case.name, exact, reason, rule=s.rule, seconds=time.perf_counter() - t0)


def _regression_name(case: RRRCase | DLNCase | PotentialCase) -> str:
    if isinstance(case, PotentialCase):
        k = regression_exponents(case)
        return f"regression y = x·{sp.Mul(*(v**e for v, e in zip(case.variables, k)))}"
    return case.name


HMC_MAX_PARAMS = 400  # linear networks below this size get the HMC reference (minutes above)


def _run_regression(case: RRRCase | DLNCase | PotentialCase, s: Settings, seed: int) -> CrossCheck:
    """SGLD on the regression loss at the most singular true parameter.

    The chains are localised at the true parameter w*, which is not a minimum of L_n: for a
    regular model this lowers the estimate by β·λ (β = 1/log n, the noise's share of L_n(w*) −
    min L_n). For normal-crossing regressions in ≤ 3 parameters the exact target for this data is
    the quadrature of the same L_n (through its sufficient statistics), the reference. For linear
    networks below ``HMC_MAX_PARAMS`` parameters it is λ_β(γ) of the same L_n by HMC on its
    closed form (``targets.linear_network_reference``): at the true parameter as at any
    factorisation of it, where at γ = 1 the chains also reach the more singular points nearby
    (benchmarks/RESULTS.md, "Away from the origin"). Above, the data's shift nβ·(L_n(w*) − min
    L_n) is computed exactly and subtracted (``targets.true_parameter_target``), and β·λ stays in
    the decision as systematic uncertainty for the rest.
    """
    t0 = time.perf_counter()
    exact = case.exact()
    if isinstance(case, PotentialCase) and (unsupported := _prior_unsupported(case, exact, s, t0)):
        return unsupported
    prob = regression_problem(case, s.n, torch.Generator().manual_seed(seed))
    est = numeric.estimate_llc(
        prob.loss_fn, prob.params, prob.data, num_chains=s.num_chains, seed=seed, device=s.device
    )
    ref: object | None = None
    systematic = 0.0
    if prob.potential is not None and prob.params["w"].numel() <= 3:
        # the estimator's exact target for this data: quadrature of the same L_n
        w0 = prob.params["w"].tolist()
        ref = expected_llc(prob.potential, w0, nbeta=est.nbeta, gamma=est.config.gamma)
    elif not isinstance(case, PotentialCase) and case.dim < HMC_MAX_PARAMS:
        # the estimand is λ_β(γ) itself (by HMC on the closed-form L_n), not λ or the local λ
        hmc = linear_network_reference(prob, est.nbeta, est.config.gamma, seed=seed)
        ref = hmc if hmc.usable else replace(hmc, value=math.nan)
    elif exact.exact:
        systematic = float(exact.lam) / math.log(s.n)
        if not isinstance(case, PotentialCase):
            ref = true_parameter_target(case, prob, exact, est.nbeta)
    return decide(
        _regression_name(case),
        exact,
        est,
        reference=ref,
        rule=s.rule,
        seconds=time.perf_counter() - t0,
        systematic=systematic,
    )


def _run_linear(d: int, s: Settings, seed: int) -> CrossCheck:
    """Linear regression (regular, λ = d/2) at the least-squares solution, closed-form λ_β."""
    t0 = time.perf_counter()
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(s.n, d, generator=gen, dtype=torch.float64)
    noise = torch.randn(s.n, generator=gen, dtype=torch.float64)
    model = GaussianLinear(X, X @ torch.ones(d, dtype=torch.float64) + noise)
    w_hat = model.minimiser()
    est = numeric.estimate_llc(
        model.loss_fn, {"w": w_hat}, model.data, num_chains=s.num_chains, seed=seed, device=s.device
    )
    ref = expected_llc(model, w_hat, nbeta=est.nbeta, gamma=est.config.gamma)
    name = f"linear regression (d={d})"
    return decide(
        name,
        rlct.regular_value(d),
        est,
        reference=ref,
        rule=s.rule,
        seconds=time.perf_counter() - t0,
    )


def _run_quadratic(case: QuadraticCase, reps: int, s: Settings, seed: int) -> CrossCheck:
    """A quadratic network teacher (W*, V*)/4 on integer inputs (random, or the modular-addition
    inputs repeated ``reps`` times), unit-noise targets. The chains are localised at a minimum ŵ
    of L_n found by L-BFGS from the teacher: the point is generic, so the rank, hence λ, is the
    same at ŵ as at the teacher, where it is computed exactly; a teacher below the generic rank
    (a special point) is refused as inconclusive, its premise failing."""
    t0 = time.perf_counter()
    # the ranks first (they check the shapes of W, V and X); at a rank drop the exact side is the
    # rank bounds, without llc's timed search, so that records are the same on every machine
    rank = rlct.jacobian_rank(case.W, case.V, case.X)
    check_data_size(case.name, reps * len(case.X), len(case.W) + len(case.V))
    d, p, k = case.shape
    generic = rlct.generic_rank(d, p, k, case.X)
    exact = case.exact(search_seconds=0 if rank < generic else 10.0)
    if rank < generic:  # ŵ, fitted to noisy targets, need not keep the teacher's rank
        reason = (
            f"the teacher is a special point (rank {rank} < generic rank {generic}): the minimum "
            "ŵ of L_n the chains are localised at need not share its rank, hence its λ"
        )
        return refuse(case.name, exact, reason, rule=s.rule, seconds=time.perf_counter() - t0)
    gen = torch.Generator().manual_seed(seed)
    X = torch.tensor(case.X, dtype=torch.float64).repeat(reps, 1)
    W = torch.tensor(case.W, dtype=torch.float64) / 4
    V = torch.tensor(case.V, dtype=torch.float64) / 4

    def f(p: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
        return ((x @ p["W"]) ** 2) @ p["V"].T

    y = f({"W": W, "V": V}, X) + torch.randn(
        X.shape[0], V.shape[0], generator=gen, dtype=torch.float64
    )

    def loss_fn(
        p: dict[str, torch.Tensor], batch: tuple[torch.Tensor, torch.Tensor]
    ) -> torch.Tensor:
        xb, yb = batch
        return half_mse(yb - f(p, xb))

    w_hat = _minimise(loss_fn, {"W": W, "V": V}, (X, y))
    est = numeric.estimate_llc(
        loss_fn, w_hat, (X, y), num_chains=s.num_chains, seed=seed, device=s.device
    )
    laplace = est.config.laplace_llc
    ref = LaplaceReference(laplace) if math.isfinite(laplace) else None
    return decide(
        case.name, exact, est, reference=ref, rule=s.rule, seconds=time.perf_counter() - t0
    )


def _minimise(loss_fn, params: dict[str, torch.Tensor], data) -> dict[str, torch.Tensor]:
    """Full-batch L-BFGS from ``params`` (float64) to a nearby minimum of L_n."""
    p = {k: v.clone().requires_grad_(True) for k, v in params.items()}
    opt = torch.optim.LBFGS(
        list(p.values()), max_iter=200, tolerance_grad=1e-12, line_search_fn="strong_wolfe"
    )

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = loss_fn(p, data)
        loss.backward()
        return loss

    opt.step(closure)
    return {k: v.detach() for k, v in p.items()}


def _quadratic_entry(case: QuadraticCase, reps: int) -> Entry:
    return Entry(case.name, "quadratic network", partial(_run_quadratic, case, reps))


def _quadratic_case(d: int, p: int, K: int, seed: int, modular: bool) -> QuadraticCase:
    """A teacher at a generic integer point: small integers are redrawn until the rank at the
    point attains the generic rank of the class on these inputs (checked exactly)."""
    import random

    rng = random.Random(seed)
    if modular:
        X = tuple(map(tuple, rlct.modular_addition_data(d // 2)[0].astype(int).tolist()))
        label = f"modular addition q={d // 2}, {len(X)} distinct inputs"
    else:
        X = tuple(tuple(rng.randint(-2, 2) for _ in range(d)) for _ in range(40))
        label = "40 random integer inputs"
    generic = rlct.generic_rank(d, p, K, X)
    nz = [x for x in range(-6, 7) if x]
    for _ in range(50):
        W = tuple(tuple(rng.choice(nz) for _ in range(K)) for _ in range(d))
        V = tuple(tuple(rng.choice(nz) for _ in range(K)) for _ in range(p))
        if rlct.jacobian_rank(W, V, X) == generic:
            break
    return QuadraticCase(W, V, X, "generic", label)


def _potential_entry(case: PotentialCase, family: str) -> Entry:
    return Entry(case.name, family, partial(_run_potential, case))


def _regression_entry(case: RRRCase | DLNCase | PotentialCase, family: str) -> Entry:
    return Entry(_regression_name(case), family, partial(_run_regression, case))


def _linear_entry(d: int) -> Entry:
    return Entry(f"linear regression (d={d})", "regular", partial(_run_linear, d))


def _nc(k: list[int]) -> PotentialCase:
    w = sp.symbols(f"w0:{len(k)}", real=True)
    ratios = [sp.Rational(1, 2 * x) for x in k if x]
    lam = min(ratios)
    K = sp.Mul(*(wi ** (2 * ki) for wi, ki in zip(w, k)))
    zero = (sp.Integer(0),) * len(k)
    return PotentialCase(f"normal crossing K = {K}", K, tuple(w), zero, lam, ratios.count(lam))


def _poly(name: str, K: sp.Expr, variables: tuple[sp.Symbol, ...]) -> PotentialCase:
    return PotentialCase(name, K, variables, (sp.Integer(0),) * len(variables), None, None)


_X, _Y = sp.symbols("x y", real=True)
_LINES = (_X**2 - 3 * _Y**2) ** 2  # two lines with irrational slopes ±1/√3
_CUSP = (_Y**2 - _X**5) ** 2
D = "degenerate (resolved)"  # Newton polyhedron degenerate as written; λ from the plane resolution


def catalogue(quick: bool = False) -> list[Entry]:
    """The catalogue; ``quick`` is the subset that runs in well under two minutes on 2 CPU cores."""
    check_bool("quick", quick)
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
        _potential_entry(_poly("degenerate K = (y − x³)² + x⁸", (y - x**3) ** 2 + x**8, (x, y)), D),
        _potential_entry(_poly("degenerate K = (y² − x⁵)² + x¹²", _CUSP + x**12, (x, y)), D),
        _regression_entry(RRRCase(2, 2, 2, 0), "reduced rank regression"),
        _regression_entry(_nc([1, 1]), "normal-crossing regression"),
        _quadratic_entry(_quadratic_case(3, 1, 2, 0, modular=False), reps=250),
        _quadratic_entry(_quadratic_case(4, 2, 2, 1, modular=True), reps=625),
    ]
    if quick:
        return entries
    entries += [
        _linear_entry(10),
        _potential_entry(_nc([2, 3]), "normal crossing"),
        _potential_entry(_nc([1, 1, 1]), "normal crossing"),
        _potential_entry(_poly("Newton K = x² + y² + z²", x**2 + y**2 + z**2, (x, y, z)), "Newton"),
        _potential_entry(_poly("Newton K = x²y⁴ + x⁶", x**2 * y**4 + x**6, (x, y)), "Newton"),
        _potential_entry(
            _poly("degenerate K = (x² − 3y²)² + (x² + y²)⁴", _LINES + (x**2 + y**2) ** 4, (x, y)), D
        ),
        _potential_entry(_poly("degenerate K = (y − x²)² + x⁶", (y - x**2) ** 2 + x**6, (x, y)), D),
        _regression_entry(RRRCase(3, 3, 2, 0), "reduced rank regression"),
        _regression_entry(RRRCase(4, 4, 3, 1), "reduced rank regression"),
        _regression_entry(DLNCase((2, 2, 2, 2), 0), "deep linear network"),
        _regression_entry(DLNCase((3, 2, 3, 2), 1), "deep linear network"),
        _regression_entry(_nc([1, 2]), "normal-crossing regression"),
        _quadratic_entry(_quadratic_case(4, 2, 3, 2, modular=False), reps=250),
        _quadratic_entry(_quadratic_case(6, 3, 4, 3, modular=True), reps=1112),
    ]
    entries += [_regression_entry(c, "network away from the origin") for c in report_points()]
    return entries


def crosscheck(
    case: PotentialCase | RRRCase | DLNCase | QuadraticCase,
    settings: Settings | None = None,
    seed: int | None = None,
) -> CrossCheck:
    """Exact λ, an estimate and the verdict for one case (see :mod:`verification.decision`).

    Potentials run MALA on K at w* = 0; linear networks and normal-crossing regressions run SGLD
    at their most singular true parameter; quadratic networks need data (``case.X``) and run
    SGLD at a minimum of L_n next to the teacher.
    """
    s = Settings() if settings is None else settings
    check_type("settings", s, Settings)
    seed = s.seed if seed is None else check_int("seed", seed, 0, MAX_SEED)
    if isinstance(case, QuadraticCase):
        if case.X is None:
            raise InvalidArgumentError(
                "case.X is None: a quadratic-network cross-check needs data (the case's inputs X)"
            )
        if len(case.X) == 0:
            raise InvalidArgumentError(
                "case.X is empty: a quadratic-network cross-check needs data"
            )
        reps = max(1, s.n // len(case.X))
        return _run_quadratic(case, reps, s, seed)
    if isinstance(case, PotentialCase):
        polynomial_potential(case.K, case.variables)  # K and its variables, before exact work
        return _run_potential(case, s, seed)
    if isinstance(case, RRRCase | DLNCase | FactorisedCase):
        return _run_regression(case, s, seed)
    raise InvalidTypeError(
        f"case must be a PotentialCase, RRRCase, DLNCase or QuadraticCase, got {type(case).__name__}"
    )
