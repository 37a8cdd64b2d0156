r"""LLC of an analytic population loss K (no data): ``estimate_llc_potential``.

Target p(w) ∝ exp(−U(w)), U(w) = nβ·(K(w) − K(w*)) + (γ/2)‖w − w*‖² + (α/2)‖w‖², and
λ̂ = nβ·(E_p[K(w)] − K(w*)) — exactly the quantity ``numeric.expected_llc`` computes by
quadrature, so the two agree up to Monte Carlo error when the sampler is exact.

``K`` takes a tensor whose last axis holds the d parameters (leading axes: chains) and returns one
value per chain. Gradients are exact, so the default sampler is MALA (``numeric.sampler.mala``),
which has no step-size bias; ``metropolis=False`` runs unadjusted Langevin
(``numeric.sampler.sgld``) instead.

The estimate is a pipeline: options (``numeric.options``), the target and its transitions
(``numeric.potential.target``), warm-up — step size, the position-dependent steps' pilot, burn-in —
and the draws (``numeric.potential.warmup``, where the rules are), then the statistics and
findings every estimate shares (``numeric.result.llc_estimate``). A ``slow_mixing`` finding says
when the positions mix poorly: a warning below ESS ``POSITION_MIN_ESS`` (Vehtari et al. 2021) or
above R-hat max(1.01, 1 + 2m/ESS) for m chains (``diagnostics.rhat_limit``: Vehtari's 1.01 less the
noise of R-hat at this ESS), an error below ESS 30 or above R-hat max(1.1, 1 + 4m/ESS).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from numeric.errors import InvalidInputError
from numeric.findings.checks import check_step_size, low_acceptance, nonfinite_proposals
from numeric.findings.off_centre import check_off_centre
from numeric.findings.rounding import check_resolution
from numeric.findings.slow_mixing import check_slow_mixing
from numeric.findings.spreading import check_spreading
from numeric.findings.standard import summarise_chains
from numeric.findings.unreached_region import unreached_region
from numeric.option_groups import Budget, Target, apply_groups
from numeric.options import Integrator, OnDivergence, PotentialOptions, default_nbeta
from numeric.potential.target import (
    AcceptanceMeter,
    MalaTransition,
    Potential,
    PotentialTarget,
    UnadjustedTransition,
)
from numeric.potential.warmup import (
    MAX_TRACKED_COORDS,
    check_run_fits,
    sample_potential,
    warm_up_potential,
)
from numeric.result.llc_estimate import LLCConfig, LLCEstimate, make_estimate, run_fields
from numeric.sampler import mala, sgld
from numeric.sampler.chains import Chains, StepNorms, default_progress, stepwise_block
from numeric.types import Draws, Finding, Warmup
from numeric.warmup.curvature import Curvature

__all__ = ["estimate_llc_potential"]
# warn below this ESS / above this R-hat of the positions: Vehtari et al. (2021)'s recommendation
# (ESS ≥ 400, R-hat < 1.01); at 100 / 1.05, K = w1²w2⁴ had a run 4.1 standard errors off
# (ESS 105, R-hat 1.043) with no finding. Potentials are cheap: a warning costs a longer run.
POSITION_MIN_ESS, POSITION_MAX_RHAT = 400.0, 1.01


def estimate_llc_potential(
    K: Potential,
    w_star: Any,
    n: int,
    *,
    nbeta: float | None = None,
    gamma: float = 1.0,
    prior_precision: float = 0.0,
    step_size: float | None = None,
    num_chains: int = 4,
    num_draws: int | None = None,
    num_burnin: int | None = None,
    seed: int = 0,
    metropolis: bool = True,
    metric: bool | None = None,
    integrator: Integrator = "lm",
    step_scale: float = 0.25,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float64,
    on_divergence: OnDivergence = "raise",
    progress: bool | None = None,
    prior_exponents: Any = None,
    target: Target | None = None,
    budget: Budget | None = None,
) -> LLCEstimate:
    """Estimate λ at ``w_star`` for the population loss ``K`` at sample size ``n`` (nβ = n/log n).

    See the module docstring for the rules behind the defaults; ``LLCEstimate.full_data`` is None
    (the losses are exact already). ``metric`` adds the position-dependent step after each MALA
    step (default: when ``metropolis``, d ≤ 8 and γ + α > 0). ``prior_exponents`` h (one per
    parameter, each ≥ 0) multiply the target by the prior φ(w) = Π_j |w_j − w*_j|^(h_j), the
    convention of ``rlct`` (λ = min_j (h_j + 1)/(2k_j) for K = Π w_j^(2k_j)): U gains
    −Σ_j h_j·log|w_j − w*_j|. φ vanishes at w*, so the chains start at w* + ξ/√nβ (one draw from
    the seed's generator); MALA only (the log-prior's gradient is singular at w*).
    """
    keywords = dict(
        nbeta=nbeta, gamma=gamma, prior_precision=prior_precision, step_size=step_size,
        num_chains=num_chains, num_draws=num_draws, num_burnin=num_burnin, seed=seed,
        step_scale=step_scale, on_divergence=on_divergence, progress=progress, metropolis=metropolis,
        metric=metric, integrator=integrator, device=device, dtype=dtype,
        prior_exponents=prior_exponents,
    )  # fmt: skip
    opts = PotentialOptions(
        n=n,
        **apply_groups(
            keywords,
            dict(target=target, budget=budget),
            caller="estimate_llc_potential",
            accepted=("target", "budget"),
        ),
    )
    nbeta_v, nbeta_rule = default_nbeta(n, opts.nbeta)
    w0 = as_w_star(w_star, opts.device, opts.dtype)
    check_run_fits(opts, w0)
    h = _prior(opts.prior_exponents, w0)
    k_star = check_potential(K, w0)
    if h is None:  # the chains start at w* (with a prior, beside it: φ(w*) = 0)
        require_finite_gradient(K, w0)
    posterior = PotentialTarget(K, w0, k_star, nbeta_v, opts.gamma, opts.prior_precision, h)
    gen = torch.Generator(device=w0.device)
    gen.manual_seed(opts.seed)
    chains, step = _start_chains(posterior, opts, gen)
    with chains:
        curvature = Curvature(
            posterior.hvp_at, nbeta_v, opts.gamma, opts.prior_precision, add_separately=True
        )
        warm = warm_up_potential(chains, curvature, opts, gen, step, posterior.floor)
        if isinstance(step, UnadjustedTransition):
            step.recording = True
        else:  # shared with the position-dependent steps, if the warm-up added them
            step.meter.recording = True
        drawn = sample_potential(chains, opts, warm, posterior.w_star)
    return _estimate(posterior, opts, warm, drawn, chains, step, nbeta_rule)


Step = MalaTransition | UnadjustedTransition


def _start_chains(
    target: PotentialTarget, opts: PotentialOptions, gen: torch.Generator
) -> tuple[Chains, Step]:
    """Every chain at w*: MALA's state (no draw), or SGLD's (its first noise draw)."""
    c, d = opts.num_chains, target.w_star.numel()
    w_rep = target.w_star.expand(c, d)
    if target.prior is not None:  # φ(w*) = 0: start where the prior density is positive
        xi = torch.randn(w_rep.shape, generator=gen, device=w_rep.device, dtype=w_rep.dtype)
        w_rep = w_rep + xi / target.nbeta**0.5
    step: Step
    if opts.metropolis:
        step = MalaTransition(target, gen, AcceptanceMeter.zeros(w_rep))
        state: Any = mala.init(w_rep, target.u_and_grad)
    else:
        state = sgld.init(w_rep, gen)
        step = UnadjustedTransition(target, gen, opts.integrator, StepNorms(w_rep))
    chains = Chains(
        state,
        stepwise_block(step, lambda s: s.position, target.w_star),
        lambda s: s.position,
        nbeta=target.nbeta,
        on_divergence=opts.on_divergence,
        progress=default_progress(opts.progress),
        total_hint=(opts.num_burnin or 1500) + (opts.num_draws or 1000),
    )
    return chains, step


def _estimate(
    target: PotentialTarget,
    opts: PotentialOptions,
    warm: Warmup,
    drawn: Draws,
    chains: Chains,
    step: Step,
    nbeta_rule: str,
) -> LLCEstimate:
    """Statistics and findings (divergence, creeping, standard, positions, spread, then
    acceptance or step size: in that order) and the configuration."""
    alive = chains.alive
    summary = summarise_chains(
        drawn.trace, alive.cpu().numpy(), target.nbeta, warm.tuning.step_size
    )
    findings = [*summary.divergence, *warm.findings, *summary.standard]
    findings.extend(_position_findings(target, warm, drawn, alive))
    k_star, dtype = float(target.k_star), target.w_star.dtype
    findings.extend(check_resolution(summary.stats.mean, target.nbeta, k_star, dtype))
    findings.extend(
        check_off_centre(
            drawn.centre, alive.cpu().numpy(), target.w_star, target.gamma, target.alpha
        )
    )
    findings.extend(
        unreached_region(
            lambda w: target.nbeta * (target.K(w) - target.k_star),
            target.w_star,
            [v[alive] for v in drawn.visited],
            target.nbeta * summary.delta,
            target.floor,
            opts.seed,
        )
    )
    acc_rate = metric_acc = float("nan")
    if opts.metropolis:
        acc_rate, metric_acc = step.meter.rates(alive)
        if not warm.metric:
            metric_acc = float("nan")
        findings.extend(low_acceptance(acc_rate))
        per_step = 2 if warm.metric else 1
        findings.extend(nonfinite_proposals(step.meter.nonfinite_fraction(alive, per_step)))
    else:
        findings.extend(check_step_size(step.norms.ratio(), 1.0))
    cfg = LLCConfig(
        n=opts.n,
        nbeta=target.nbeta,
        nbeta_rule=nbeta_rule,
        **run_fields(opts, warm, drawn),
        batch_size=None,
        sampler="mala" if opts.metropolis else "sgld",
        integrator="mala" if opts.metropolis else opts.integrator,
        gradient="exact",
        acceptance_rate=acc_rate,
        full_loss_every=None,
        num_params=target.w_star.numel(),
        preconditioner="position_dependent" if warm.metric else "none",
        metric_acceptance_rate=metric_acc,
        device=str(target.w_star.device),
        dtype=str(target.w_star.dtype).removeprefix("torch."),
        prior_exponents=opts.prior_exponents,
    )
    return make_estimate(
        summary,
        init_loss=float(target.k_star),
        nbeta=target.nbeta,
        findings=findings,
        config=cfg,
        slow_ess=drawn.mixing[0],
        slow_rhat=drawn.mixing[1],
    )


def _position_findings(
    target: PotentialTarget, warm: Warmup, drawn: Draws, alive: Tensor
) -> list[Finding]:
    """The chains' positions: their mixing (coordinates of w, or ‖w − w*‖² in many dimensions)
    and their spread still growing through the draws (``numeric.findings.spreading``)."""
    pos_ess, pos_rhat = drawn.mixing
    return [
        *position_mixing(
            pos_ess,
            pos_rhat,
            per_coordinate=target.w_star.numel() <= MAX_TRACKED_COORDS,
            num_burnin=warm.num_burnin,
            num_draws=int(drawn.num_draws),
            num_chains=int(alive.sum()),
        ),
        *check_spreading(drawn.spread, alive.cpu().numpy()),
    ]


def position_mixing(
    pos_ess: float,
    pos_rhat: float,
    *,
    per_coordinate: bool,
    num_burnin: int,
    num_draws: int,
    num_chains: int,
) -> tuple[Finding, ...]:
    """``slow_mixing`` of the chains' positions, from the least ESS and largest R-hat of the
    squared offsets (w_i − w*_i)² (``per_coordinate``) or of ‖w − w*‖², at the positions'
    thresholds (``POSITION_MIN_ESS``, ``POSITION_MAX_RHAT``)."""
    what = "coordinates of w" if per_coordinate else "distance from w*"
    return check_slow_mixing(
        pos_ess,
        pos_rhat,
        num_burnin=num_burnin,
        num_draws=num_draws,
        offer_preconditioner=False,
        min_ess=POSITION_MIN_ESS,
        max_rhat=POSITION_MAX_RHAT,
        num_chains=num_chains,
        subject=f"the chains' positions ({what})",
        measured="squared offsets w_i − w*_i" if per_coordinate else "‖w − w*‖²",
    )


def _prior(h: tuple[float, ...] | None, w: Tensor) -> Tensor | None:
    """The prior exponents as a tensor [D] (None: a flat prior)."""
    if h is None or all(x == 0 for x in h):
        return None
    if len(h) != w.numel():
        raise InvalidInputError(
            f"prior_exponents has {len(h)} entries, w_star {w.numel()}: one exponent per parameter"
        )
    return torch.tensor(h, dtype=w.dtype, device=w.device)


def as_w_star(w_star: Any, device: Any, dtype: torch.dtype) -> Tensor:
    """w* as a finite, non-empty 1-D tensor (from a list, array or tensor), or a clear error."""
    try:
        w = torch.as_tensor(w_star, dtype=dtype, device=device).detach().clone()
    except (TypeError, ValueError, RuntimeError) as exc:
        raise InvalidInputError(
            f"w_star must be a vector of numbers (a list, array or tensor), got {w_star!r}: {exc}"
        ) from None
    if w.dim() == 0:
        w = w.reshape(1)
    if w.dim() != 1 or w.numel() == 0:
        raise InvalidInputError(
            f"w_star must be a non-empty 1-D vector, got shape {tuple(w.shape)}"
        )
    if not bool(torch.isfinite(w).all()):
        raise InvalidInputError("w_star is not finite")
    return w


def _rows(d: int) -> int:
    """Rows of the batch K is probed with: 3, or 4 where d = 3 (a K that indexes the leading
    axis, w[0] for w[..., 0], must not pass because the batch happens to be square)."""
    return 4 if d == 3 else 3


def check_potential(K: Potential, w: Tensor) -> Tensor:
    """K(w*), after checking that K maps a [r, d] batch to shape (r,) and is finite at w*."""
    r = _rows(w.numel())
    try:
        out = K(w.expand(r, -1))
    except (RuntimeError, IndexError, TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"K failed on a [{r}, {w.numel()}] batch of parameters: {exc}. K must take a tensor "
            "with the parameters on its last axis (w[..., j]) and leading axes for chains"
        ) from exc
    if not isinstance(out, Tensor) or tuple(out.shape) != (r,):
        shape = tuple(out.shape) if isinstance(out, Tensor) else type(out).__name__
        raise InvalidInputError(
            f"K(w[{r}, d]) must return shape ({r},), got {shape}: K takes the parameters on "
            "its last axis (w[..., j], not w[j]) and leading axes for chains"
        )
    k_star = out[0].detach()
    if not bool(torch.isfinite(k_star)):
        raise InvalidInputError(f"K(w*) = {float(k_star)} is not finite")
    return k_star


def require_finite_gradient(K: Potential, w: Tensor) -> None:
    """Refuse a K whose gradient at w* is NaN or inf, naming the first such entry: chains that
    start at w* could not leave it (every MALA proposal from there is NaN and rejected, and an
    unadjusted step lands on NaN), and the estimate would read 0."""
    x = w.detach().expand(_rows(w.numel()), -1).clone().requires_grad_(True)
    try:
        with torch.enable_grad():
            out = K(x)
            if isinstance(out, Tensor) and not out.is_floating_point():
                raise InvalidInputError(
                    f"K must return floating-point values, got dtype {out.dtype} (cast inside K, "
                    "e.g. .double())"
                )
            if not out.requires_grad:
                raise InvalidInputError(
                    "K's value does not depend on w: no gradient flows from w to it (a K built from "
                    "constants, or from w taken through .detach(), .data or torch.no_grad()), so "
                    "there is nothing to sample"
                )
            (g,) = torch.autograd.grad(out.sum(), x, allow_unused=True)
    except RuntimeError as exc:
        raise InvalidInputError(
            f"∇K(w*) by autograd failed: {exc}. K must be differentiable by torch.autograd "
            "(no in-place updates of its input, no .numpy())"
        ) from exc
    if g is None or bool(torch.isfinite(g[0]).all()):
        return
    j = int((~torch.isfinite(g[0])).nonzero()[0, 0])
    raise InvalidInputError(
        f"∇K(w*) is not finite (first in entry {j} of w_star: {float(g[0, j])}): K is not "
        "differentiable at w*, where the chains start (check for w ** p with p < 1, sqrt or abs "
        "at 0, log of 0: autograd's gradient of sqrt(w1² + w2²) at 0 is NaN)"
    )
