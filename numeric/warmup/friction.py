r"""BAOAB's friction ξ in the data estimator's warm-up, and the minibatch heating it is set by.

With the default friction (``raise_friction``) ξ starts at critical damping of the slowest
directions (``numeric.plan.llc_plan.critical_friction``). The velocity integrates the gradient
noise, heating the chains by 1 + ε·nβ²·Var(ĝ)/4 times ``sgld.noise_heating``; as the chains spread
the control variate's variance grows with ‖w − a‖², so after each warm-up phase ξ is raised (never
lowered) until the heating measured where the chains are is at most 1 + ``HEAT_TOL``
(``sgld.friction_for_heating``; ∞, i.e. LM, when even LM heats more), and the anchors go back to
every epoch when ξ reaches ∞. Without this rule the first BAOAB version was badly wrong: noisy RRR
came out at 2.0–2.6 against an exact 1.12–1.24.

The heating measured where the chains are (``minibatch_heating``, bound to a run by
``numeric.warmup.probes``):

* ``minibatch_heating``: the factor 1 + x by which the gradient noise inflates λ̂. A direction
  with noise variance σ² (of ĝ) is heated by T = h·ε·nβ²·σ²/4 (h = ``sgld.noise_heating``: 1
  for LM, more for BAOAB), and λ̂ counts the direction i of curvature a_i = nβ·h_i of nβ·L with
  the weight f_i = a_i/(a_i + γ + α) (at temperature 1 its share of nβ·E[L] is f_i/2), so

      x = h·ε·nβ²·tr(F·Σ)/(4·tr F),   F = A·(A + γ + α)⁻¹,  A = nβ·∇²L_B(w),

  with Σ the covariance of ĝ: the temperature excess averaged with λ̂'s own weights. With a
  preconditioner M the noise the steps add is M^{1/2}ĝ in z = M^{-1/2}w, where M ≈ (nβ·H + γ +
  α)⁻¹ gives every counted direction curvature ≈ 1, so Σ is that noise's covariance and F stays
  the unpreconditioned weight (exact where M is a function of the Hessian at the chains, an
  approximation elsewhere). Averaging over the D coordinates instead (x₀ = h·ε·nβ²·tr Σ/(4D),
  what this measured before, and still does without Hessian-vector products) misses noise that
  lies in the few directions λ̂ counts: the control variate's noise lies in the span of the
  per-sample gradients, the stiff directions. On a 339-parameter deep linear network x₀ was
  0.9% under BAOAB with friction 2 while λ̂ read 15.3–16.5 against 13.7 by Metropolis-adjusted
  HMC on the same L_n (``benchmarks/RESULTS.md``); x is x₀ times the noise's concentration
  ρ = (tr(F·Σ)/tr Σ)/(tr F/D), 1 for isotropic noise and at most D/tr F. tr(F·Σ) and tr F are
  Gauss quadratures of the quadratic forms vᵀF·v (Lanczos from v on one minibatch's A: from each
  noise sample, and from Rademacher probes v for Hutchinson's tr F).

Where the draws still end hotter the run restarts with more friction
(``numeric.run.heating_restart``), and where the heating outweighs the minibatch's saving the
full batch runs instead (``numeric.run.full_batch_switch``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from numeric.plan.llc_plan import LLCPlan
from numeric.sampler import sgld
from numeric.types import Tuning

HEAT_TOL = 0.01  # BAOAB's default friction keeps the minibatch heating at most 1 + this
# heating(tuning, factor) -> the heating factor where the chains are (``minibatch_heating``)
Heating = Callable[[Tuning, float], float]


def raise_friction(plan: LLCPlan, tuning: Tuning, heating: Heating) -> Tuning:
    """BAOAB with the default friction: ξ raised (never lowered) until the heating where the
    chains are is at most 1 + ``HEAT_TOL``; anchors back to every epoch once ξ = ∞."""
    if not plan.raises_friction:
        return tuning
    excess = heating(tuning, 1.0) - 1.0
    if math.isnan(excess):
        return tuning
    need = sgld.friction_for_heating(excess, tuning.step_size, HEAT_TOL)
    if need > tuning.friction:
        tuning = tuning._replace(friction=need)
    if plan.anchors_auto and math.isinf(tuning.friction):
        tuning = tuning._replace(anchor_every=plan.epoch)  # LM's limit: frequent anchors do not pay
    return tuning


INFLATION_CHAINS = 16  # chains the minibatch-noise inflation is measured on
QUADRATURE_STEPS = 10  # Lanczos steps per quadratic form vᵀF·v (``minibatch_heating``)


TRACE_PROBES = 32  # Rademacher probes of Hutchinson's tr F, over all chains (at least 2 each)
COUNTED_TOL = 0.05  # relative standard error at which the heating's quadratures stop early


def minibatch_heating(
    gradient_fn: Callable[[Tensor], sgld.GradientFn],
    position: Tensor,
    alive: Tensor,
    gen: torch.Generator,
    step_size: float,
    nbeta: float,
    sqrt_m: Tensor | None = None,
    heating: float = 1.0,
    samples: int = 8,
    hvp_at: Callable[[Tensor], Callable[[Tensor], Tensor]] | None = None,
    floor: float = 0.0,
    side: torch.Generator | None = None,
) -> float:
    """1 + x, the factor by which minibatch noise inflates λ̂ (module docstring), at the positions
    of up to ``INFLATION_CHAINS`` live chains: ``samples`` minibatch gradients per chain give the
    noise, in the coordinates z = M^{-1/2}w of the preconditioner (``sqrt_m`` = M^{1/2}) if any;
    with ``hvp_at`` (positions [C, D] -> v ↦ ∇²L_B·v on one minibatch) it is weighted by F
    (``floor`` = γ + α; ``counted_excess``), else averaged over the coordinates; h = ``heating``;
    nan with no live chain. ``gradient_fn(chains)`` is ĝ for the chains of that index tensor, as
    the steps compute it. The probes of tr F come from ``side`` (default ``gen``; the caller's
    ``hvp_at`` should draw its minibatch there too), so that the run's own stream is the same
    with and without the weighting."""
    chosen = alive.nonzero().squeeze(1)[:INFLATION_CHAINS]
    if chosen.numel() == 0:
        return math.nan
    grad = gradient_fn(chosen)
    w = position[chosen]
    draws = []
    for _ in range(samples):
        g = grad(w, gen).grad
        draws.append(g if sqrt_m is None else g @ sqrt_m)
    g = torch.stack(draws)  # [K, C, D]
    noise = g - g.mean(0)
    ok = torch.isfinite(noise).all(-1).all(0)  # [C]
    if not bool(ok.any()):
        return float("nan")
    noise = noise[:, ok]
    excess = float(noise.square().sum((0, -1)).mean()) / ((samples - 1) * noise.shape[-1])
    if hvp_at is not None:
        counted = counted_excess(hvp_at(w[ok]), noise, nbeta, floor, gen if side is None else side)
        if math.isfinite(counted):
            excess = counted
    return 1.0 + heating * step_size * nbeta**2 * excess / 4.0


def counted_excess(
    hvp: Callable[[Tensor], Tensor],
    noise: Tensor,
    nbeta: float,
    floor: float,
    gen: torch.Generator,
    steps: int = QUADRATURE_STEPS,
    probes: int = TRACE_PROBES,
    tol: float = COUNTED_TOL,
) -> float:
    """Σ_c tr(F_c·Σ_c)/Σ_c tr F_c over the chains of ``noise`` [K, C, D] (samples of ĝ less
    their mean, whose covariance Σ_c is estimated with K − 1 degrees of freedom), F = A·(A +
    ``floor``)⁻¹ with A = nβ·``hvp``'s Hessian at each chain (eigenvalues below 0 count as 0):
    the noise variance λ̂ sees per direction it counts (module docstring). tr F by Hutchinson
    with Rademacher probes, at most max(2, ⌈``probes``/C⌉) per chain. A ratio of sums over the
    chains, not a mean of ratios: 1/tr F of a few probes is biased. nan where a product is not
    finite or tr F = 0.

    Each quadrature is a batch of Hessian-vector products over the chains (``steps`` of them),
    the dominant cost on large models, so both sums stop once their relative standard error is
    below ``tol``: Hutchinson's after r probes per chain when √(2/(r·Σ_c tr F_c)) ≤ tol (a
    Rademacher probe's variance is 2(‖F‖²_F − Σ_i F_ii²) ≤ 2·tr F, as 0 ≤ F ≤ I), and the noise
    forms e_kᵀF·e_k (E = (K − 1)/K·tr(F·Σ) each) after at least 3 of the K when the standard error
    of their mean is below tol of it. At 10⁸ parameters tr F ≈ 10⁷ and one probe per chain
    does; a small model (tr F of tens) takes every probe and sample, as before."""
    k, c, d = noise.shape

    def f(theta: Tensor) -> Tensor:
        a = theta.clamp_min(0.0)
        return a / (a + floor) if floor > 0 else (a > 0).to(a.dtype)

    def op(v: Tensor) -> Tensor:
        return nbeta * hvp(v)

    forms: list[float] = []  # Σ_c e_kᵀF_c·e_k, sample by sample
    for e in noise:
        forms.append(float(gauss_quadrature(op, e, steps, f).sum()))
        if len(forms) >= 3 and _relative_se(forms) <= tol:
            break
    num = sum(forms) * k / (len(forms) * (k - 1))  # Σ_c tr(F_c·Σ_c)
    per_chain = max(2, math.ceil(probes / c))
    den = 0.0  # Σ_c tr F_c, the mean over the rounds so far
    for r in range(1, per_chain + 1):
        z = torch.randint(0, 2, (c, d), generator=gen, device=gen.device).to(noise)
        total = float(gauss_quadrature(op, 2.0 * z - 1.0, steps, f).sum())
        den += (total - den) / r
        if math.isfinite(den) and den > 0 and 2.0 / (r * den) <= tol**2:
            break
    if not (math.isfinite(num) and math.isfinite(den) and den > 0):
        return math.nan
    return num / den


def _relative_se(values: list[float]) -> float:
    """Standard error of the mean of ``values`` over |mean| (inf where the mean is 0 or any
    value is not finite)."""
    t = torch.tensor(values, dtype=torch.float64)
    mean = float(t.mean())
    if not (math.isfinite(mean) and mean != 0.0 and bool(torch.isfinite(t).all())):
        return math.inf
    return float(t.std() / math.sqrt(t.numel())) / abs(mean)


def _project_out(basis: Tensor, r: Tensor) -> Tensor:
    """r − Σ_j ⟨b_j, r⟩·b_j per chain, basis [J, C, D], r [C, D]. The inner products are taken
    one basis vector at a time, each a reduction over D: as one einsum they become C batched
    products of a [J, D] by a [D, 1] matrix, J·C ≤ 40 outputs each summing D terms, which the
    GPU runs almost serially (10 steps of [4, 10⁸] took 6.9 s on an H200, the heating probe's
    whole cost). The update, a [1, J] by [J, D] product per chain, is parallel over D as it is."""
    coeffs = torch.stack([torch.linalg.vecdot(b, r) for b in basis])  # [J, C]
    return r - torch.einsum("jc,jcd->cd", coeffs, basis)


def gauss_quadrature(
    matvec: Callable[[Tensor], Tensor], v: Tensor, steps: int, f: Callable[[Tensor], Tensor]
) -> Tensor:
    """vᵀf(A)·v for each row of v [C, D] (A symmetric, one per row, as ``matvec`` [C, D] ->
    [C, D]): ``steps`` Lanczos steps from v/‖v‖ with full reorthogonalisation give T = QᵀAQ,
    and vᵀf(A)v ≈ ‖v‖²·Σ_j τ_j²·f(θ_j) over T's eigenpairs (θ_j, s_j), τ_j = s_j[1] (Golub–
    Meurant; exact once the Krylov space is invariant, as for a Hessian of low rank: a vanishing
    β decouples the rest of T, whose eigenvectors then have τ = 0). Float64 results [C]. This is
    ``lanczos.lanczos``'s recurrence batched over chains, one operator per row and no Ritz
    vectors kept (``lanczos.Ritz.spectral_sum`` is the same rule for one vector)."""
    c, d = v.shape
    m = max(1, min(int(steps), d))
    norm2 = v.double().square().sum(-1)
    q = v / norm2.sqrt().clamp_min(1e-300).to(v.dtype)[:, None]
    basis = v.new_zeros(m, c, d)
    alphas = torch.zeros(c, m, dtype=torch.float64, device=v.device)
    betas = torch.zeros(c, max(m - 1, 0), dtype=torch.float64, device=v.device)
    beta = v.new_zeros(c)
    scale = torch.zeros(c, dtype=torch.float64, device=v.device)
    for j in range(m):
        basis[j] = q
        r = matvec(q)
        if j > 0:
            r = r - beta[:, None] * basis[j - 1]
        alpha = (q * r).sum(-1)
        r = r - alpha[:, None] * q
        for _ in range(2):  # full reorthogonalisation, twice
            r = _project_out(basis[: j + 1], r)
        alphas[:, j] = alpha.double()
        beta = r.norm(dim=-1)
        scale = torch.maximum(scale, alpha.double().abs() + beta.double())
        if j + 1 == m:
            break
        live = beta.double() > 1e-10 * scale.clamp_min(1e-300)
        beta = torch.where(live, beta, torch.zeros_like(beta))
        betas[:, j] = beta.double()
        q = torch.where(live[:, None], r / beta.clamp_min(1e-300)[:, None], torch.zeros_like(r))
    t = torch.diag_embed(alphas)
    if m > 1:
        t = t + torch.diag_embed(betas, 1) + torch.diag_embed(betas, -1)
    finite = torch.isfinite(t).all(-1).all(-1)
    # T is [C, m, m] with m ≤ steps: decomposed on the CPU, as ``lanczos`` does (on the H200,
    # [4, 10, 10] took 0.08 ms there against 0.25 ms on the device)
    theta, s = torch.linalg.eigh(torch.where(finite[:, None, None], t, torch.zeros_like(t)).cpu())
    theta, s = theta.to(t.device), s.to(t.device)
    form = norm2 * (s[:, 0, :].square() * f(theta)).sum(-1)
    return torch.where(finite, form, torch.full_like(form, math.nan))
