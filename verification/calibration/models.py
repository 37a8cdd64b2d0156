r"""Builds and exact targets of the calibration battery (:mod:`verification.calibration.cases`).

A build takes a seed and returns a :class:`Built`: the estimator's positional arguments and what
the target needs; everything random is drawn from ``torch.Generator().manual_seed(seed)``. A
target takes (built, nβ, γ), the settings the estimate actually ran at, and returns the value a
perfect sampler returns there with its own uncertainty. Every function is module level and takes
its configuration as keywords, so a case's ``functools.partial`` pickles to a worker process.

Targets:

* ``quadrature_target`` — λ_β of a potential K in 1–3 parameters (``numeric.expected_llc``),
  also the normal-crossing regressions through their sufficient statistics; σ = the quadrature's
  error estimate;
* ``closed_form_target`` — λ_β of a linear regression, at ŵ or at any w* (the closed form of
  ``GaussianLinear``, which includes a gradient at w*); σ = its rounding bound;
* ``laplace_target`` — ½Σ nβh/(nβh + γ + α) over the positive eigenvalues h of the exact Hessian
  of L_n at a minimum ŵ (float64 autograd), for a regular point; σ = 0;
* ``shifted_target`` — the large linear networks at their true parameter w*:
  λ − (m−1)/log nβ − nβ·(L_n(w*) − min L_n) (``targets.true_parameter_target``), with
  σ = √((½(m−1)/log nβ)² + (β·λ)²), β = nβ/n (the catalogue's systematic, combined the same way
  as ``crosscheck.decide`` combines σ_bias and ``systematic``);
* ``hmc_target`` — linear networks below 400 parameters, at the origin, their true parameter or
  any factorisation of it: λ_β(γ) of the same L_n, in closed form
  through its sufficient statistics (``targets.linear_network_potential``), by Metropolis-adjusted
  HMC (``numeric.hmc_llc_potential``, a fixed seed); σ = its standard error. The local λ is the
  estimand only where 1/d² ≪ γ ≪ nβ·h (d the distance to a more singular point of the zero set,
  benchmarks/RESULTS.md "Away from the origin"), so there λ_β(γ) itself is the target.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import sympy as sp
import torch
from torch import Tensor

from numeric.backend.linalg import one_thread
from numeric.potential.reference import GaussianLinear, expected_llc

from ..cases import DLNCase, PotentialCase, QuadraticCase, RRRCase
from ..crosschecks import _minimise
from ..errors import VerificationError
from ..models import half_mse, polynomial_potential, regression_problem
from ..targets import ShiftedTarget, linear_network_reference, true_parameter_target

__all__ = ["Built", "Target", "TargetError"]


class TargetError(VerificationError):
    """A target that cannot be trusted at these settings (its own sampler flagged an error)."""


@dataclass(frozen=True)
class Target:
    """The estimator's exact target at the estimate's nβ and γ, its own uncertainty ``sigma``
    (0 for a closed form, the quadrature error, or a systematic) and what it is."""

    value: float
    sigma: float
    source: str


@dataclass(frozen=True, eq=False)  # tensors: compared by identity
class Built:
    """One realisation of a case: ``args`` are the estimator's positional arguments,
    (loss_fn, params, data) for a data case and (K, w_star, n) for a potential; ``aux`` holds
    what the target needs (the model, L_n as a potential, the minimum ŵ, ...)."""

    args: tuple
    aux: Mapping[str, Any] = field(default_factory=dict)


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# ---- potentials and normal-crossing regressions: quadrature -------------------------------------


def build_potential(
    seed: int, *, K: sp.Expr, variables: tuple[sp.Symbol, ...], n: int, basin_edge: float = math.nan
) -> Built:
    """(K, w* = 0, n); there is no data, so the seed changes nothing."""
    del seed
    fn = polynomial_potential(K, variables)
    w0 = [0.0] * len(variables)
    return Built((fn, w0, n), {"potential": fn, "w_star": w0, "basin_edge": basin_edge})


def build_nc_regression(seed: int, *, k: tuple[int, ...], n: int) -> Built:
    """y = x·Π w_j^(k_j) + noise at w* = 0, true coefficient 0 (``models.regression_problem``)."""
    w = sp.symbols(f"w0:{len(k)}", real=True)
    K = sp.Mul(*(wi ** (2 * ki) for wi, ki in zip(w, k)))
    case = PotentialCase("", K, tuple(w), (sp.Integer(0),) * len(k), None, None)
    prob = regression_problem(case, n, _gen(seed))
    w0 = prob.params["w"].tolist()
    return Built(
        (prob.loss_fn, prob.params, prob.data), {"potential": prob.potential, "w_star": w0}
    )


def _two_basin_coefficient(w: Tensor, scale: float, power: int) -> Tensor:
    return scale * w * (w - 1) ** power


def build_two_basin_regression(seed: int, *, n: int, scale: float, power: int) -> Built:
    """y = x·c(w) + noise with c(w) = s·w(w − 1)^p and true c = 0, at w* = 0: L_n has a quadratic
    basin at 0 and a flatter one (L_n − L_n(0) ≈ (w − 1)^(2p)) at 1, whose larger volume carries
    much of the localised posterior's mass. The barrier is at w = 1/(p + 1)."""
    g = _gen(seed)
    x = torch.randn(n, 1, generator=g, dtype=torch.float64)
    y = torch.randn(n, 1, generator=g, dtype=torch.float64)

    def loss_fn(p: dict[str, Tensor], batch: tuple[Tensor, Tensor]) -> Tensor:
        xb, yb = batch
        return 0.5 * (yb - xb * _two_basin_coefficient(p["w"][0], scale, power)).square().mean()

    sxx, sxy, syy = (x * x).mean(), (x * y).mean(), (y * y).mean()

    def potential(w: Tensor) -> Tensor:
        c = _two_basin_coefficient(w[..., 0], scale, power)
        return 0.5 * (syy - 2 * c * sxy + c * c * sxx)

    params = {"w": torch.zeros(1, dtype=torch.float64)}
    aux = {"potential": potential, "w_star": [0.0], "basin_edge": 1.0 / (power + 1)}
    return Built((loss_fn, params, (x, y)), aux)


def quadrature_target(
    built: Built,
    nbeta: float,
    gamma: float,
    *,
    alpha: float = 0.0,
    num_points: int | None = None,
) -> Target:
    """λ_β of ``aux["potential"]`` at ``aux["w_star"]`` by quadrature (1–3 parameters);
    ``num_points`` per axis where the default grid does not resolve a far basin."""
    ref = expected_llc(
        built.aux["potential"],
        built.aux["w_star"],
        nbeta=nbeta,
        gamma=gamma,
        prior_precision=alpha,
        num_points=num_points,
    )
    return Target(ref.value, ref.abserr, "λ_β, quadrature")


# ---- linear regressions: closed form -------------------------------------------------------------


def build_linear(
    seed: int, *, unit: int, n: int, soft: int = 0, scale: float = 1.0, shift_sds: float = 0.0
) -> Built:
    """y = x·1 + noise, ``unit`` features of scale 1 and ``soft`` of scale ``scale``, localised
    at the least-squares ŵ, or ``shift_sds`` posterior standard deviations (at nβ = n/log n)
    from it along (1, …, 1)/√d: a gradient at w*."""
    g = _gen(seed)
    d = unit + soft
    scales = torch.tensor([1.0] * unit + [scale] * soft, dtype=torch.float64)
    X = torch.randn(n, d, generator=g, dtype=torch.float64) * scales
    y = X @ torch.ones(d, dtype=torch.float64) + torch.randn(n, generator=g, dtype=torch.float64)
    model = GaussianLinear(X, y)
    w = model.minimiser()
    if shift_sds:
        u = torch.ones(d, dtype=torch.float64) / math.sqrt(d)
        curvature = float(u @ (X.T @ X / n) @ u)  # H = XᵀX/n for loss_scale ½
        w = w + shift_sds * u / math.sqrt(n / math.log(n) * curvature)
    return Built((model.loss_fn, {"w": w}, model.data), {"model": model, "w_star": w})


def _offset_loss(p: dict[str, Tensor], batch: tuple[Tensor, Tensor]) -> Tensor:
    """½·mean((x·w + c) − y)², the constant c = ``batch[2]`` inside the prediction."""
    x, y, c = batch
    return 0.5 * ((x @ p["w"] + c) - y).square().mean()


def build_offset_linear(seed: int, *, unit: int, n: int, offset: float) -> Built:
    """``build_linear``'s regression in float32 with a constant ``offset`` added to the
    predictions and the targets (the same L_n in exact arithmetic): float32 rounds each
    residual to a multiple of ulp(offset), 2⁻⁷ at 10⁵. The target is float64's closed form."""
    base = build_linear(seed, unit=unit, n=n)
    x, y = base.aux["model"].data
    c = torch.full((n,), offset, dtype=torch.float32)
    data = (x.float(), (y + offset).float(), c)
    w = base.aux["w_star"]
    return Built((_offset_loss, {"w": w.float()}, data), {**base.aux})


def closed_form_target(built: Built, nbeta: float, gamma: float, *, alpha: float = 0.0) -> Target:
    """λ_β of a Gaussian-linear model at ``aux["w_star"]`` (``numeric.expected_llc``)."""
    ref = expected_llc(
        built.aux["model"], built.aux["w_star"], nbeta=nbeta, gamma=gamma, prior_precision=alpha
    )
    return Target(ref.value, ref.abserr, "λ_β, closed form (Gaussian-linear)")


# ---- linear networks at the true parameter: the shifted target ----------------------------------


def build_network(seed: int, *, case: RRRCase | DLNCase, n: int) -> Built:
    """Data of a reduced-rank regression or deep linear network, chains at its true w*."""
    prob = regression_problem(case, n, _gen(seed))
    return Built((prob.loss_fn, prob.params, prob.data), {"problem": prob})


def shifted_target(
    built: Built, nbeta: float, gamma: float, *, case: RRRCase | DLNCase, n: int
) -> Target:
    """λ − (m−1)/log nβ − nβ·(L_n(w*) − min L_n) ± √((½(m−1)/log nβ)² + (β·λ)²), β = nβ/n.

    γ does not enter: at the origin of a linear network the loss holds every direction at
    least quartically, and the catalogue's target (this one) is used at γ = 1."""
    del gamma
    exact = case.exact()
    shifted = true_parameter_target(case, built.aux["problem"], exact, nbeta)
    systematic = float(exact.lam) * nbeta / n
    return Target(shifted.value, math.hypot(shifted.abserr, systematic), ShiftedTarget.source)


def hmc_target(built: Built, nbeta: float, gamma: float, **hmc: Any) -> Target:
    """λ_β(γ) of a linear network's L_n by HMC on its closed form
    (``targets.linear_network_reference``, whose keywords ``hmc`` are: chains, draws, burn-in,
    seed), ± its standard error; ``TargetError`` where the HMC run has an error finding (its
    number is then no reference)."""
    ref = linear_network_reference(built.aux["problem"], nbeta, gamma, **hmc)
    require_usable(ref.hmc)
    return Target(ref.value, ref.abserr, ref.source)


def require_usable(hmc: Any) -> None:
    """``TargetError`` where an HMC reference run has an error finding (its number is then no
    reference)."""
    error = next((f for f in hmc.diagnostics if f.severity == "error"), None)
    if error is not None:
        raise TargetError(f"the HMC reference is not usable here: {error}")


# ---- quadratic networks at a minimum: the Laplace value ------------------------------------------


def _quadratic_forward(p: dict[str, Tensor], x: Tensor) -> Tensor:
    return ((x @ p["W"]) ** 2) @ p["V"].T


def quadratic_loss(p: dict[str, Tensor], batch: tuple[Tensor, Tensor]) -> Tensor:
    """½·mean‖y − V(Wᵀx)²‖² (unit-noise Gaussian negative log-likelihood up to a constant)."""
    xb, yb = batch
    return half_mse(yb - _quadratic_forward(p, xb))


def build_quadratic(seed: int, *, case: QuadraticCase, reps: int) -> Built:
    """The teacher (W*, V*)/4 on the case's inputs repeated ``reps`` times, unit-noise targets,
    localised at the minimum ŵ of L_n that L-BFGS reaches from the teacher (as
    ``catalogue._run_quadratic``)."""
    g = _gen(seed)
    X = torch.tensor(case.X, dtype=torch.float64).repeat(reps, 1)
    teacher = {
        "W": torch.tensor(case.W, dtype=torch.float64) / 4,
        "V": torch.tensor(case.V, dtype=torch.float64) / 4,
    }
    out = _quadratic_forward(teacher, X)
    y = out + torch.randn(out.shape, generator=g, dtype=torch.float64)
    w_hat = _minimise(quadratic_loss, teacher, (X, y))
    aux = {"loss_fn": quadratic_loss, "w_hat": w_hat, "data": (X, y)}
    return Built((quadratic_loss, w_hat, (X, y)), aux)


def hessian_at(
    loss_fn: Callable[[dict[str, Tensor], Any], Tensor], params: Mapping[str, Tensor], data: Any
) -> Tensor:
    """The exact Hessian of L_n at ``params`` over the flattened parameters, in float64."""
    names = list(params)
    shapes = [params[k].shape for k in names]
    sizes = [params[k].numel() for k in names]
    flat = torch.cat([params[k].detach().double().reshape(-1) for k in names])

    def flat_loss(v: Tensor) -> Tensor:
        parts = torch.split(v, sizes)
        return loss_fn({k: t.reshape(s) for k, t, s in zip(names, parts, shapes)}, data)

    H = torch.autograd.functional.hessian(flat_loss, flat)
    return 0.5 * (H + H.T)


def laplace_target(built: Built, nbeta: float, gamma: float, *, alpha: float = 0.0) -> Target:
    """½Σ nβh/(nβh + γ + α) over the positive eigenvalues h of ∇²L_n(ŵ)."""
    H = hessian_at(built.aux["loss_fn"], built.aux["w_hat"], built.aux["data"])
    with one_thread():  # the same bits in every process
        h = torch.linalg.eigvalsh(H).clamp(min=0)
    value = float(0.5 * (nbeta * h / (nbeta * h + gamma + alpha)).sum())
    return Target(value, 0.0, "Laplace λ_β, ½Σ nβh/(nβh + γ) at ŵ (exact Hessian)")
