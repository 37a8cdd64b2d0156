r"""The calibration battery: models whose LLC estimator target is known exactly.

Each :class:`BatteryCase` has a seed-independent definition (its name says it), a ``build(seed)``
that draws its data from ``torch.Generator().manual_seed(seed)`` and returns a
:class:`~verification.calibration.Built`, and a ``target(built, nbeta, gamma)`` computed at
the nβ and γ the estimate actually ran at (``est.nbeta``, ``est.config.gamma``). ``kwargs`` are
passed to the estimator (nβ, γ, α where a case needs them; the target uses the same ones).

Families: normal-crossing regressions (quadrature of the same L_n), regular linear regressions
(closed form), a gradient at w* (linear regressions localised off ŵ; closed form), soft
directions (unit and 0.007-scale features at nβ = 10⁴; closed form), reduced-rank regressions and
deep linear networks at their true parameter (λ_β(γ) by HMC on the closed-form L_n,
``verification.targets``; the three of 432–1,550 parameters, where HMC would take many minutes,
the shifted target λ − (m−1)/log nβ − nβ·(L_n(w*) − min L_n) with its systematic σ ≈ β·λ),
quadratic networks at a minimum (Laplace value from the exact Hessian), a one-hidden-layer ReLU
network at a minimum (λ_β(γ) by HMC on the full-data loss, ``relu``), the catalogue's
potentials (quadrature), and **two basins**: the localised posterior holds a second basin, deeper
or flatter than w*'s, inside the localisation radius, so λ_β differs from the value of w*'s basin
alone by more than 30%. An estimator that stays in w*'s basin misses there, and should say so.
And **settings that mislead**: runs a user could ask for (20 + 50 steps at a saddle, no burn-in,
plain minibatch gradients at nβ = 10⁵, Euler at a large fixed step, float32 with an offset inside
the loss) whose estimates are off by design.

And **linear networks away from the origin** (issue 64): 25 reduced-rank regressions and deep
linear networks at factorisations of W* with chosen ranks of the layers
(``verification.factorisations.network_points``). Their target is λ_β(γ) of the same L_n by HMC
on its closed form (``models.hmc_target``), not the shifted *local* λ of ``rlct.dln_local_lambda``
/ ``rrr_local_lambda``: at γ = 1 the localisation reaches the more singular points of the zero set
near w*, and the local λ is the estimand only where 1/d² ≪ γ ≪ nβ·h (benchmarks/RESULTS.md,
"Away from the origin"); the local λ stays the reference of ``bench_calibration_nonorigin.py``.

``battery("fast")`` is a subset of ten cases of at most ten parameters.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Literal

import sympy as sp

from .._validate import check_type
from ..cases import DLNCase, FactorisedCase, PotentialCase, QuadraticCase, RRRCase
from ..crosschecks import _CUSP, _LINES, _nc, _poly, _quadratic_case
from ..errors import InvalidArgumentError
from ..factorisations import network_points
from . import models as bm
from .models import Built, Target
from .relu import build_relu, relu_hmc_target

__all__ = ["BatteryCase", "Built", "Target", "battery"]

N = 10_000  # samples of the data cases; n of the potentials (nβ = n/log n by default)
SOFT_SCALE = 0.007


@dataclass(frozen=True)
class BatteryCase:
    """A model with a known target. ``build(seed)`` → Built; ``target(built, nbeta, gamma)`` →
    Target; ``kwargs`` go to the estimator; ``large`` marks the cases with hundreds of
    parameters and more (``--skip-large``)."""

    name: str
    family: str
    dim: int
    kind: Literal["data", "potential"]
    n: int
    build: Callable[[int], Built]
    target: Callable[[Built, float, float], Target]
    kwargs: dict = field(default_factory=dict, compare=False, hash=False)
    large: bool = False

    def __post_init__(self) -> None:
        if self.kind not in ("data", "potential"):
            raise InvalidArgumentError(f"kind must be 'data' or 'potential', got {self.kind!r}")


def _superscript(k: int) -> str:
    return "" if k == 1 else str(k).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))


def _nc_regression(k: tuple[int, ...], n: int) -> BatteryCase:
    mono = "·".join(f"w{j}{_superscript(e)}" for j, e in enumerate(k))
    return BatteryCase(
        f"regression y = x·{mono} (n={n})",
        "normal-crossing regression",
        len(k),
        "data",
        n,
        partial(bm.build_nc_regression, k=k, n=n),
        bm.quadrature_target,
    )


def _linear(
    name: str,
    family: str,
    unit: int,
    *,
    soft: int = 0,
    shift_sds: float = 0.0,
    n: int | None = None,
    **kwargs: object,
) -> BatteryCase:
    """A linear regression; ``kwargs`` (nbeta, gamma, prior_precision, …) go to the estimator,
    and α to the closed form too (nβ and γ reach it from the estimate)."""
    n = n if n is not None else (5_000 if soft else N)
    scale = SOFT_SCALE if soft else 1.0
    build = partial(bm.build_linear, unit=unit, soft=soft, scale=scale, n=n, shift_sds=shift_sds)
    target = partial(bm.closed_form_target, alpha=float(kwargs.get("prior_precision", 0.0)))
    return BatteryCase(name, family, unit + soft, "data", n, build, target, dict(kwargs))


def _linear_cases() -> list[BatteryCase]:
    cases = [_linear(f"linear regression (d={d})", "regular", d) for d in (1, 3, 10, 50)]
    cases += [
        _linear("linear regression (d=10, γ=100)", "regular", 10, gamma=100.0),
        _linear("linear regression (d=3, α=1)", "regular", 3, prior_precision=1.0),
        _linear("linear regression (d=3, nβ=100)", "regular", 3, nbeta=100.0),
    ]
    cases += [
        _linear(f"linear regression (d={d}, w* = ŵ + 2 sd)", "gradient at w*", d, shift_sds=2.0)
        for d in (3, 10, 50)
    ]
    cases += [
        _linear(f"soft directions ({u} + {s})", "soft directions", u, soft=s, nbeta=1e4)
        for u, s in ((10, 10), (50, 50), (5, 20))
    ]
    return cases


def _network(case: RRRCase | DLNCase | FactorisedCase, family: str, n: int = N) -> BatteryCase:
    dim = case.dim
    build = partial(bm.build_network, case=case, n=n)
    large = dim >= 400
    if large:  # HMC would take many minutes: the shifted target and its systematic
        target: Callable[[Built, float, float], Target] = partial(bm.shifted_target, case=case, n=n)
    else:
        target = bm.hmc_target
    return BatteryCase(case.name, family, dim, "data", n, build, target, large=large)


def _network_cases() -> list[BatteryCase]:
    rrr = [RRRCase(2, 2, 2, 0), RRRCase(3, 3, 2, 0), RRRCase(4, 4, 3, 1), RRRCase(3, 3, 1, 1)]
    dln = [
        DLNCase((2, 2, 2, 2), 0),
        DLNCase((3, 2, 3, 2), 1),
        DLNCase((4, 3, 3, 4), 0),
        DLNCase((3, 3, 3, 3), 1),
        DLNCase((2, 3, 2), 1),
        DLNCase((2, 2, 2, 2, 2), 1),
    ]
    large = [DLNCase((12, 12, 12, 12), 2), DLNCase((20, 20, 20, 20), 5)]
    large.append(DLNCase((30, 25, 20, 15), 3))
    return (
        [_network(c, "reduced-rank regression") for c in rrr]
        + [_network(c, "deep linear network") for c in dln]
        + [_network(c, "deep linear network", n=20_000) for c in large]
    )


def _quadratic(
    d: int, p: int, k: int, definition_seed: int, modular: bool, reps: int
) -> BatteryCase:
    case: QuadraticCase = _quadratic_case(d, p, k, definition_seed, modular)
    n = reps * len(case.X)
    build = partial(bm.build_quadratic, case=case, reps=reps)
    dim = d * k + p * k
    return BatteryCase(case.name, "quadratic network", dim, "data", n, build, bm.laplace_target)


def _potential(
    case: PotentialCase, family: str, basin_edge: float = math.nan, num_points: int | None = None
) -> BatteryCase:
    build = partial(
        bm.build_potential, K=case.K, variables=case.variables, n=N, basin_edge=basin_edge
    )
    target = partial(bm.quadrature_target, num_points=num_points)
    return BatteryCase(case.name, family, case.dim, "potential", N, build, target)


def _potential_cases() -> list[BatteryCase]:
    x, y, z = sp.symbols("x y z", real=True)
    nc, newton, deg = "potential (normal crossing)", "potential (Newton)", "potential (degenerate)"
    polys = [
        (newton, "Newton K = x⁴ + y⁶", x**4 + y**6, (x, y)),
        (newton, "Newton K = x⁴ + x²y² + y⁶", x**4 + x**2 * y**2 + y**6, (x, y)),
        (newton, "Newton K = x² + y² + z²", x**2 + y**2 + z**2, (x, y, z)),
        (newton, "Newton K = x²y⁴ + x⁶", x**2 * y**4 + x**6, (x, y)),
        (deg, "degenerate K = (y − x³)² + x⁸", (y - x**3) ** 2 + x**8, (x, y)),
        (deg, "degenerate K = (y² − x⁵)² + x¹²", _CUSP + x**12, (x, y)),
        (deg, "degenerate K = (x² − 3y²)² + (x² + y²)⁴", _LINES + (x**2 + y**2) ** 4, (x, y)),
        (deg, "degenerate K = (y − x²)² + x⁶", (y - x**2) ** 2 + x**6, (x, y)),
    ]
    cases = [_potential(_nc(k), nc) for k in ([1], [1, 2], [1, 1], [2, 3], [1, 1, 1])]
    return cases + [_potential(_poly(name, K, v), fam) for fam, name, K, v in polys]


def _two_basin_cases() -> list[BatteryCase]:
    """Second basins at x = 1, one localisation length (γ = 1) from w* = 0, behind barriers of
    nβ·ΔK ≈ 25–70: deeper by nβ/2000 ≈ 0.54 (nβ/1000 in 2-D, where the shared y² adds ½ to
    both values), or flatter (quartic, sextic) and so wider."""
    x, y = sp.symbols("x y", real=True)
    fam, deep = "two basins", x**2 * (x - 1) ** 2 - x**3 / 2000
    deeper = x**2 * (x - 1) ** 2 - x**3 / 1000
    pot = [
        ("two basins: K = x²(x − 1)² − x³/2000 (deeper far basin)", deep, (x,)),
        ("two basins: K = x²(x − 1)⁴ (flatter far basin)", x**2 * (x - 1) ** 4, (x,)),
        ("two basins: K = y² + x²(x − 1)² − x³/1000 (2-D)", y**2 + deeper, (x, y)),
    ]
    # the 2-D default grid (1001²) is too coarse at x = 1: error 0.1; 2001² gives 10⁻⁴
    edges, points = (0.5, 1 / 3, 0.5), (None, None, 2001)
    cases = [
        _potential(_poly(name, K, v), fam, edge, npts)
        for (name, K, v), edge, npts in zip(pot, edges, points)
    ]
    build = partial(bm.build_two_basin_regression, n=N, scale=2.0, power=3)
    name = "two basins: regression y = x·2w(w − 1)³ (sextic far basin)"
    cases.append(BatteryCase(name, fam, 1, "data", N, build, bm.quadrature_target))
    return cases


def _relu_cases() -> list[BatteryCase]:
    """A ReLU network with twice the teacher's hidden units (2-3-6-1, 25 parameters) at the
    minimum L-BFGS reaches from the padded teacher (``relu``), n = 2,000: with the defaults (the
    full batch at this n) and with minibatches of 128 a user may choose. Target: λ_β(γ) by HMC on
    the full-data loss (80–600 s a target: n is kept small)."""
    n = 2_000
    build = partial(build_relu, d=2, teacher=3, student=6, out=1, n=n)
    name, fam = "ReLU 2-3-6-1 (teacher 3 units), n = 2000", "ReLU network"
    return [
        BatteryCase(name, fam, 25, "data", n, build, relu_hmc_target),
        BatteryCase(f"{name}, minibatches of 128", fam, 25, "data", n, build, relu_hmc_target,
                    dict(batch_size=128)),
    ]  # fmt: skip


USER = "settings that mislead"


def _user_settings_cases() -> list[BatteryCase]:
    """Runs a user could ask for whose estimate is off its target by design: the findings must
    say so (the battery's wrong estimates are otherwise only the two-basin cases)."""
    saddle = _nc_regression((1, 1), 2_000)
    short = dict(num_burnin=20, num_draws=50, step_size=1e-5, batch_size=256)
    triple = _nc_regression((1, 1, 1), N)
    offset = BatteryCase(
        "linear regression (d=3, nβ = 10⁵) in float32, predictions offset by 10⁵",
        USER,
        3,
        "data",
        N,
        partial(bm.build_offset_linear, unit=3, n=N, offset=1e5),
        bm.closed_form_target,
        dict(nbeta=1e5),
    )
    return [
        replace(saddle, name="saddle y = x·w0·w1 (n=2000): 20 + 50 steps at ε = 10⁻⁵",
                family=USER, kwargs=short),
        replace(triple, name="regression y = x·w0·w1·w2 (n=10000): no burn-in, 200 draws",
                family=USER, kwargs=dict(num_burnin=0, num_draws=200)),
        _linear("linear regression (d=3, n=200): plain minibatch gradients, B = 8, nβ = 3·10⁴",
                USER, 3, n=200, gradient="minibatch", batch_size=8, nbeta=3e4),
        _linear("linear regression (d=3): Euler at a fixed ε·κ ≈ 1.2 on the full batch",
                USER, 3, integrator="euler", step_size=1e-3, batch_size=N),
        offset,
    ]  # fmt: skip


FAST = (
    "regression y = x·w0·w1 (n=2000)",
    "linear regression (d=3)",
    "linear regression (d=3, w* = ŵ + 2 sd)",
    "rrr(M=2,N=2,H=2,r=0)",
    "normal crossing K = w0**2*w1**4",
    "Newton K = x⁴ + y⁶",
    "degenerate K = (y − x³)² + x⁸",
    "two basins: K = x²(x − 1)² − x³/2000 (deeper far basin)",
    "rrr(M=2,N=2,H=2,r=1) at rank A, B = 1,1 (inactive unit)",
    "rrr(M=2,N=3,H=2,r=1) at rank A, B = 2,1 (A surjective)",
)


def battery(size: str = "full") -> list[BatteryCase]:
    """The battery: ``"full"`` (90 cases, three of them ``large``) or ``"fast"`` (ten cases of
    at most ten parameters, for tests)."""
    check_type("size", size, str)
    if size not in ("full", "fast"):
        raise InvalidArgumentError(f"size must be 'full' or 'fast', got {size!r}")
    kk = ((1,), (2,), (1, 1), (1, 2), (2, 3), (1, 1, 1))
    cases = [_nc_regression(k, n) for n in (2_000, N) for k in kk]
    cases += _linear_cases() + _network_cases()
    cases += [
        _quadratic(3, 1, 2, 0, False, 250),
        _quadratic(4, 2, 2, 1, True, 625),
        _quadratic(4, 2, 3, 2, False, 250),
    ]
    cases += _relu_cases() + _potential_cases() + _two_basin_cases() + _user_settings_cases()
    cases += [_network(c, f"{c.name[:3].upper()} away from the origin") for c in network_points()]
    if size == "fast":
        by_name = {c.name: c for c in cases}
        return [by_name[name] for name in FAST]
    return cases
