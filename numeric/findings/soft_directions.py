r"""Directions between flat and relevant that the run did not relax (``soft_directions``).

The Laplace value of the LLC is ½·Σ_i nβh_i/(nβh_i + c), c = γ + α, over the eigenvalues h_i of
H = ∇²L_n(w*). The run is planned around the relevant directions (nβh ≥ c,
``numeric.hessian.dense``) and, where there are none, the flat ones; a direction with 0 < nβh < c is
neither, yet it carries up to ¼ of the value. The dense preconditioner scales it like the softest
relevant direction (M = 1/k_soft), so its preconditioned curvature is κ_i = (nβh_i + c)/k_soft and
it relaxes in τ_i = ``sgld.relaxation_steps``(ε, κ_i, ξ) steps: k_soft/(nβh_i + c) times slower than
the slowest relevant one. The chains start at w*, where the variance along it is 0, and it grows as
σ_i²·(1 − e^{−2t/τ_i}); λ̂ averages the draws t ∈ [B, B + N], so it misses

    δ = Σ_i ½·nβh_i/(nβh_i + c) · (τ_i/2N)·(e^{−2B/τ_i} − e^{−2(B+N)/τ_i}).

A linear regression (exactly quadratic, so the Laplace value is exact) with ten unit features and
ten of scale 0.007, n = 5,000, nβ = 10⁴, γ = 1: the soft ten carry 1.64 of 6.64, and λ̂ read
5.20 ± 0.09, 4.98 ± 0.12, 5.20 ± 0.09 on three seeds, with no error finding. ``soft_directions``
is a warning where δ ≥ 3 standard errors, an error where also δ ≥ 10% of |λ̂|. Computed only with
the dense eigen-decomposition (D ≤ 2,048); above that the spectrum's bracket does not resolve
these directions. Since ``numeric.plan.soft_whitening`` the dense preconditioner scales the soft
directions along which the potential is quadratic at their own curvature (κ_i = 1: that regression
now reads 6.59 ± 0.09 against 6.64); the finding counts only the others, where a quartic or a
product with a flat direction makes the clamp the safe step, or which the re-plan did not check.
"""

from __future__ import annotations

import math

from numeric.hessian.dense import HessianInfo
from numeric.plan.llc_plan import LLCPlan
from numeric.plan.soft_whitening import MAX_CHECKED
from numeric.sampler import sgld
from numeric.types import Finding, Tuning

ERROR_SHARE = 0.1  # δ from this share of |λ̂| (and ≥ 3 standard errors) is an error


def soft_shortfall(plan: LLCPlan, tuning: Tuning, num_burnin: int, num_draws: int) -> tuple:
    """(δ, the soft directions' share of the Laplace value, their number, the slowest τ_i):
    module docstring; (0, 0, 0, nan) where there are none or no dense spectrum."""
    info = plan.hessian
    if not (isinstance(info, HessianInfo) and num_draws > 0 and tuning.step_size > 0):
        return 0.0, 0.0, 0, math.nan
    h = info.nbeta * info.eigvals.double().clamp_min(0)
    k = h + info.floor
    soft = info.soft if info.whitened is None else info.soft & ~info.whitened
    if not bool(soft.any()):
        return 0.0, 0.0, 0, math.nan
    # preconditioned (M = Q·diag(1/clamped)·Qᵀ) or raw curvatures
    kappas = k / info.clamped_curvatures().double() if plan.preconditioner == "hessian" else k
    share = 0.5 * h[soft] / k[soft]
    missing, slowest = 0.0, 0.0
    for c_i, kappa in zip(share.tolist(), kappas[soft].tolist()):
        tau = sgld.relaxation_steps(tuning.step_size, kappa, tuning.friction)
        if not math.isfinite(tau):
            missing += c_i
            slowest = math.inf
            continue
        slowest = max(slowest, tau)
        a, b = -2.0 * num_burnin / tau, -2.0 * (num_burnin + num_draws) / tau
        missing += c_i * tau / (2.0 * num_draws) * (math.exp(a) - math.exp(b))
    return missing, float(share.sum()), int(soft.sum()), slowest


def check_soft_directions(
    plan: LLCPlan, tuning: Tuning, num_burnin: int, num_draws: int, llc: float, stderr: float
) -> tuple[Finding, ...]:
    """``soft_directions`` (module docstring) for the run's estimate ``llc`` ± ``stderr``."""
    missing, share, count, slowest = soft_shortfall(plan, tuning, num_burnin, num_draws)
    if not (count and missing >= 3 * stderr and missing > 0):
        return ()
    severity = "error" if missing >= ERROR_SHARE * abs(llc) else "warning"
    return (
        Finding(
            "soft_directions",
            severity,
            f"{count} Hessian direction(s) with 0 < nβh < γ + α (softer than the localisation, "
            "so not among those the run was planned for, and scaled like the softest relevant "
            "one: numeric.plan.soft_whitening did not find the potential quadratic along them "
            f"where the chains go, or checked only the {MAX_CHECKED} of largest share) carry "
            f"{share:.3g} of the Laplace value "
            f"½Σ nβh/(nβh + γ + α), but relax in up to {slowest:.3g} steps at this ε (the run: "
            f"{num_burnin} burn-in + {num_draws} draws): λ̂ misses about {missing:.3g} of them "
            f"({missing / max(abs(llc), 1e-300):.1%} of λ̂, {missing / stderr:.1f} standard "
            "errors). Burn in for several times that many steps (num_burnin, num_draws), or "
            "estimate at a larger γ, where these directions count less and relax faster",
            {
                "missing": missing,
                "share": share,
                "directions": count,
                "relaxation_steps": slowest,
            },
        ),
    )
