r"""The Hessian's extreme spectrum at w* for models too large for a dense Hessian, and the
low-rank preconditioner built from it.

``hessian_spectrum``: ``LANCZOS_STEPS`` steps of Lanczos (``numeric.hessian.lanczos``) on v ↦ H·v,
H = ∇²L_n(w*) on the same fixed subset of at most ``at_w_star.HESSIAN_SAMPLES`` samples as the dense
Hessian (double backward, one graph per chunk built once; central differences of the gradient
where it is not finite), from a start vector drawn by a generator of its own (seeded with the
run's seed: nothing is drawn from the run's stream). ``SpectrumInfo`` answers what the plan asks
of ``dense.HessianInfo``:

* the lowest eigenvalue (is w* a minimum: nβ·h_min ≥ −c, c = γ + α) and the largest (the
  stiffest curvature nβ·h_max + c), both extreme Ritz values, which converge first;
* the slowest relevant directions: the Ritz pairs with the smallest nβ·(θ − r) ≥ c, r = ‖H·y − θ·y‖
  (H has an eigenvalue within r of θ, Kahan's bound, so this one is relevant). Where the spectrum
  is a continuum across the threshold (a trained network's bulk) these interior Ritz values stand
  for clusters of eigenvalues and their vectors for mixtures of the cluster's eigenvectors: still
  slow observables, and the smallest such θ a fair estimate of the softest relevant curvature;
* the Laplace value ½·tr(nβH⁺(nβH⁺ + c)⁻¹) bracketed by Lanczos quadrature (``laplace_bounds``:
  Gauss–Radau below, Gauss above, on one random probe with a Hutchinson-size error of about
  ±√(2·count) for ``count`` relevant directions; ``laplace_llc`` where the bracket is narrow),
  and the condition number (nβ·h_max + c)/(nβ·max(h_min, 0) + c);
* the preconditioner (``LowRankRoot``): with the k converged top Ritz pairs (residual ≤
  ``CONVERGED_TOL``·θ) of curvature κ_i = nβ·θ_i + c above the threshold,

      M = U·diag(1/κ_i)·Uᵀ + (1/κ_r)·(I − U·Uᵀ),   κ_r = max(nβ·θ_r⁺ + c, min_i κ_i)

  with θ_r the largest Ritz value left out: the stiff directions whitened as by the dense
  preconditioner, the rest scaled by its own stiffest curvature (clamped, as the dense
  preconditioner clamps at the softest relevant curvature, so that directions flat at w* are
  not given the γ scale: ``numeric.hessian.dense``). Any fixed symmetric positive-definite M keeps
  the target exactly. A step costs two [C, D]·[D, k] products more.

**Residuals on H itself.** A run on the complement of locked vectors sees P⊥HP⊥, and its own
residual β_m·|s_i[m]| is that operator's: where a locked vector is not quite an eigenvector, P⊥HP⊥
has eigenvalues H does not, in a gap of H's spectrum. At the true parameter of a deep linear
network (a null space of dimension 2h² beside identifiable eigenvalues 2.67–3.35, h = 32) such a
pair read θ = 1.6·10⁻³ with residual 10⁻¹⁶ against 0.069 on H (and a locked one θ = 0.013 with
0.2), and, whitened, set κ_r and a relaxation time of 5·10⁵ steps (true: ≈ 10³). Those soft
pairs decide the run, so the relevant pairs are checked on H softest first (``check_slowest``,
one product each) until ``NUM_SLOW`` pass: a locked pair that fails is dropped, a last-round pair
keeps the residual on H, which then decides its convergence and its relevance.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import torch
from torch import Tensor

from numeric.hessian.lanczos import Ritz, lanczos, random_start
from numeric.hessian.lowrank import LowRankRoot
from numeric.inputs.data import take
from numeric.options import side_seed

ROUND_STEPS = 32  # Lanczos steps per round
MAX_PRODUCTS = 256  # Hessian-vector products at w* in all rounds together
MAX_LOCKED = 128  # eigenvectors locked (and whitened) at most
LOCKED_NUMBERS = 2**27  # ... and at most this many numbers (k·D) of them (512 MB of float32)
CONVERGED_TOL = 0.05  # a Ritz pair is converged when its residual is at most this times |θ|
LOWRANK_GAIN = 2.0  # "auto" uses the low-rank preconditioner when it divides κ_max by this much
LAPLACE_TOL = 0.05  # ``laplace_llc`` is given where its bounds are within this of their midpoint
ROUNDING = 1e-10  # Ritz values this far below 0 (relative to the largest) are rounding
NUM_SLOW = 3  # slowest relevant directions whose mixing is measured (checked on H here)


@dataclass(frozen=True)
class SpectrumInfo:
    """What rounds of deflated Lanczos found of H = ∇²L_n(w*) (``deflated_spectrum``): locked
    eigenpairs (converged relevant Ritz pairs of earlier rounds) and the last round's Ritz pairs
    on their orthogonal complement; and what the plan reads from them (module docstring)."""

    locked_values: Tensor  # [k] float64, on the CPU (the vectors live on the model's device)
    locked_vectors: Tensor  # [D, k]
    rest: Ritz  # the last round, on the complement of the locked vectors
    nbeta: float
    floor: float  # c = γ + α (or the tiny floor when that is 0)
    # Ritz values of locked pairs that ``check_slowest`` dropped: out of the preconditioner and
    # the slow directions, but their directions were deflated from the last round, so the
    # Laplace value counts them (on a 2,083-parameter deep linear network 17 such pairs held 4.7
    # of its 44.4)
    dropped_values: Tensor = field(default_factory=lambda: torch.zeros(0, dtype=torch.float64))

    @property
    def products(self) -> int:
        """Hessian-vector products used in all rounds and the residual checks."""
        return self.rest.products

    @property
    def values(self) -> Tensor:
        """Every Ritz value, ascending (locked and the last round's)."""
        return torch.cat([self.locked_values, self.rest.values]).sort().values

    @property
    def lowest(self) -> float:
        """The smallest eigenvalue of H (the lowest Ritz value)."""
        return float(self.values[0])

    @property
    def highest(self) -> float:
        return float(self.values[-1])

    def _curv(self, theta: Tensor) -> Tensor:
        return self.nbeta * theta.clamp_min(0) + self.floor

    def _is_relevant(self, theta: Tensor) -> Tensor:
        return self.nbeta * theta >= self.floor

    def _pairs_with_residuals(self) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """``_pairs`` and each pair's residual (0 for the locked ones: converged when locked,
        and the softest of them checked on H by ``check_slowest``)."""
        theta, vecs, white = self._pairs()
        res = torch.cat([torch.zeros_like(self.locked_values), self.rest.residuals])
        return theta, vecs, white, res

    def _surely_relevant(self, theta: Tensor, residual: Tensor) -> Tensor:
        """H has a relevant eigenvalue within the residual of θ: nβ·(θ − r) ≥ c."""
        return self._is_relevant(theta - residual)

    @property
    def relevant_count(self) -> int:
        return int(self._is_relevant(self.values).sum())

    @property
    def condition_number(self) -> float:
        """(nβ·h_max + c)/(nβ·max(h_min, 0) + c)."""
        return float(self._curv(self.values).max() / self._curv(self.values[:1])[0])

    def laplace_bounds(self) -> tuple[float, float]:
        """Bounds on ½·tr(nβH(nβH + c)⁻¹) where H ⪰ 0: exact over the locked eigenpairs (the
        dropped ones counted at their Ritz values, ``dropped_values``), and on their complement
        the Gauss–Radau rule with a node at 0 (below) and the Gauss rule (above) of the last
        round's start vector (``Ritz.radau_sum``): the two bracket that vector's quadratic form,
        itself a one-probe (Hutchinson) estimate of the trace, whose own error is ≈ √(2n·p(1 − p))
        for n directions of which a share p is relevant. Equal where that run was invariant; the
        lower bound nan where a Ritz value is negative (then H is not ⪰ 0; values down to
        ``ROUNDING`` of the largest |θ| below 0 are rounding)."""
        nb, c = self.nbeta, self.floor

        def f(t: Tensor) -> Tensor:
            h = nb * t.clamp_min(0)
            return h / (h + c)

        locked = float(f(self.locked_values).sum()) + float(f(self.dropped_values).sum())
        slack = ROUNDING * max(abs(self.highest), abs(self.lowest))
        low = self.rest.radau_sum(f, 0.0, slack)
        return 0.5 * (locked + low), 0.5 * (locked + self.rest.spectral_sum(f))

    def laplace_llc(self) -> float:
        """½·tr(nβH⁺(nβH⁺ + c)⁻¹) where ``laplace_bounds`` pin it to within ``LAPLACE_TOL`` of
        their midpoint (the midpoint), else nan: Lanczos quadrature overestimates it wherever H
        has a null space its few dozen nodes cannot resolve (module docstring of
        ``numeric.hessian.lanczos``), and no number is better than a wrong one."""
        return pinned(self.laplace_bounds())

    def _pairs(self) -> tuple[Tensor, Tensor, Tensor]:
        """(θ [m], vectors [D, m], whitened mask [m]) over locked and last-round pairs: locked
        ones are whitened, and the last round's converged relevant ones."""
        r = self.rest
        conv = r.residuals <= CONVERGED_TOL * r.values.abs()
        theta = torch.cat([self.locked_values, r.values])
        vecs = torch.cat([self.locked_vectors, r.vectors], 1)
        white = torch.cat(
            [
                torch.ones_like(self.locked_values, dtype=torch.bool),
                conv & self._is_relevant(r.values),
            ]
        )
        return theta, vecs, white

    def slow_directions(self, k: int) -> tuple[Tensor, Tensor]:
        """The k relevant Ritz vectors of smallest curvature, [D, k], and their curvatures
        nβ·θ + c [k] (in the model's dtype)."""
        theta, vecs, _, res = self._pairs_with_residuals()
        order = torch.argsort(theta)
        idx = order[self._surely_relevant(theta[order], res[order])][:k]
        return vecs[:, idx], self._curv(theta[idx]).to(device=vecs.device, dtype=vecs.dtype)

    def slowest_is_whitened(self) -> bool:
        theta, _, white, res = self._pairs_with_residuals()
        rel = self._surely_relevant(theta, res)
        if not bool(rel.any()):
            return False
        i = int(torch.nonzero(rel).flatten()[torch.argmin(theta[rel])])
        return bool(white[i])

    def rest_curvature(self) -> float:
        """κ_r: the curvature the preconditioner gives every direction it does not whiten (the
        largest left out, at least the smallest whitened one)."""
        theta, _, white = self._pairs()
        k = self._curv(theta)
        rest = float(k[~white].max()) if bool((~white).any()) else self.floor
        return max(rest, float(k[white].min())) if bool(white.any()) else rest

    @property
    def rank(self) -> int:
        return int(self._pairs()[2].sum())

    def gain(self) -> float:
        """How many times the preconditioner lowers the stiffest curvature: κ_max/κ_r."""
        return float(self._curv(self.values).max()) / self.rest_curvature()

    def preconditioner(self) -> tuple[LowRankRoot, LowRankRoot]:
        """(M, M^{1/2}) (module docstring)."""
        theta, vecs, white = self._pairs()
        u = vecs[:, white]
        inv = (1.0 / self._curv(theta[white])).to(u.dtype)  # LowRankRoot moves it to u's device
        m = LowRankRoot(u, inv, 1.0 / self.rest_curvature())
        return m, m.power(0.5)


def pinned(bounds: tuple[float, float]) -> float:
    """The midpoint of ``bounds`` (low, high) where they lie within ``LAPLACE_TOL`` of it, else
    nan: a value the bounds pin down, and none where they do not."""
    low, high = bounds
    mid = 0.5 * (low + high)
    return mid if high - low <= 2 * LAPLACE_TOL * mid else math.nan


def subset_hvp(
    f: Callable[[Tensor, object], Tensor],
    data: object,
    indices: Tensor,
    w_star: Tensor,
    chunk: int,
) -> Callable[[Tensor], Tensor]:
    """v ↦ ∇²L(w*)·v with L the mean of ``f(w, batch)`` over the rows ``indices`` of ``data``,
    chunk by chunk, each chunk's gradient graph built once (double backward)."""
    m = indices.numel()
    parts = []
    ww = w_star.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        for s in range(0, m, chunk):
            rows = indices[s : s + chunk]
            (g,) = torch.autograd.grad(f(ww, take(data, rows)), ww, create_graph=True)
            parts.append((g, rows.numel() / m))

    def hvp(v: Tensor) -> Tensor:
        out = torch.zeros_like(v)
        with torch.enable_grad():
            for g, weight in parts:
                if not g.requires_grad:  # the gradient does not depend on w: a zero Hessian
                    continue
                (hv,) = torch.autograd.grad(
                    g, ww, grad_outputs=v, retain_graph=True, allow_unused=True
                )
                if hv is not None:
                    out += hv.detach() * weight
        return out

    return hvp


def difference_subset_hvp(
    f: Callable[[Tensor, object], Tensor], data: object, indices: Tensor, w_star: Tensor, chunk: int
) -> Callable[[Tensor], Tensor]:
    """v ↦ (∇L(w* + h·v) − ∇L(w* − h·v))/(2h), h = ε_mach^{1/3}·(1 + max|w*|)/‖v‖: the fallback
    where double backward is not finite (``inputs.problem._difference_hvp``)."""
    m = indices.numel()
    scale = torch.finfo(w_star.dtype).eps ** (1 / 3) * (1 + float(w_star.abs().max()))

    def grad(w: Tensor) -> Tensor:
        total = torch.zeros_like(w)
        for s in range(0, m, chunk):
            rows = indices[s : s + chunk]
            with torch.enable_grad():
                ww = w.detach().clone().requires_grad_(True)
                (g,) = torch.autograd.grad(f(ww, take(data, rows)), ww, allow_unused=True)
            if g is not None:
                total += g * (rows.numel() / m)
        return total

    def hvp(v: Tensor) -> Tensor:
        h = scale / max(float(v.norm()), 1e-30)
        return (grad(w_star + h * v) - grad(w_star - h * v)) / (2 * h)

    return hvp


def _residual(hvp: Callable[[Tensor], Tensor], theta: float, y: Tensor) -> float:
    """‖H·y − θ·y‖/‖y‖ on H itself (one product)."""
    return float((hvp(y) - theta * y).norm() / y.norm().clamp_min(1e-300))


def check_slowest(hvp: Callable[[Tensor], Tensor], info: SpectrumInfo) -> SpectrumInfo:
    """``info`` with its relevant pairs checked on H, softest first, until ``NUM_SLOW`` pass
    (module docstring): a locked pair whose residual exceeds ``CONVERGED_TOL``·θ is unlocked
    (dropped), a last-round pair keeps its residual on H. Softer pairs decide the relaxation time,
    the slow-direction probe and κ_r; each check costs one product, counted in ``products``."""
    k = info.locked_values.numel()
    theta = torch.cat([info.locked_values, info.rest.values])
    vecs = torch.cat([info.locked_vectors, info.rest.vectors], 1)
    rest_res = info.rest.residuals.clone()
    keep = torch.ones(k, dtype=torch.bool)
    passed = checks = 0
    for i in torch.argsort(theta).tolist():
        if passed == NUM_SLOW or not bool(info._is_relevant(theta[i])):
            continue
        r = _residual(hvp, float(theta[i]), vecs[:, i])
        checks += 1
        ok = bool(info._surely_relevant(theta[i], torch.tensor(r, dtype=theta.dtype)))
        if i < k:
            keep[i] = r <= CONVERGED_TOL * float(theta[i])
            ok = ok and bool(keep[i])
        else:
            rest_res[i - k] = r
        passed += ok
    rest = replace(info.rest, residuals=rest_res, products=info.rest.products + checks)
    return replace(
        info,
        dropped_values=torch.cat([info.dropped_values, info.locked_values[~keep]]),
        locked_values=info.locked_values[keep],
        locked_vectors=info.locked_vectors[:, keep.to(info.locked_vectors.device)],
        rest=rest,
    )


def deflated_spectrum(
    hvp: Callable[[Tensor], Tensor],
    w_star: Tensor,
    seed: int,
    nbeta: float,
    gamma: float,
    alpha: float,
) -> SpectrumInfo:
    """Rounds of ``ROUND_STEPS`` Lanczos steps, each from a fresh random start (a generator
    seeded ``options.side_seed(seed)``) on the complement of the eigenvectors locked so
    far: a round's converged relevant Ritz pairs are locked and another round runs, until a
    round finds none, nothing relevant is left (nβ·θ_max < c), or ``MAX_PRODUCTS`` products or
    ``MAX_LOCKED`` (``LOCKED_NUMBERS``) vectors are used. The last round is kept whole; then the
    softest relevant pairs are checked on H (``check_slowest``, beside ``MAX_PRODUCTS``)."""
    from numeric.hessian.dense import floor_of

    d = w_star.numel()
    gen = torch.Generator().manual_seed(side_seed(seed))
    max_locked = min(MAX_LOCKED, LOCKED_NUMBERS // d, d - 1)
    vals = torch.zeros(0, dtype=torch.float64)
    vecs = w_star.new_zeros(d, 0)
    used = 0
    floor = None
    while True:
        start = random_start(d, gen, w_star)
        steps = min(ROUND_STEPS, MAX_PRODUCTS - used)
        ritz = lanczos(hvp, start, steps, vecs.T if vecs.shape[1] else None)
        used += ritz.products
        if floor is None:
            floor = floor_of(nbeta, gamma, alpha, float(ritz.values.max()))
        conv = ritz.residuals <= CONVERGED_TOL * ritz.values.abs()
        new = torch.nonzero(conv & (nbeta * ritz.values >= floor)).flatten().flip(0)
        room = max_locked - vecs.shape[1]
        more = used + 2 <= MAX_PRODUCTS and ritz.space - new.numel() > 1
        if new.numel() == 0 or room <= 0 or not more:
            break
        new = new[:room]
        vals = torch.cat([vals, ritz.values[new]])
        vecs = torch.cat([vecs, ritz.vectors[:, new]], 1)
    rest = replace(ritz, products=used)
    return check_slowest(hvp, SpectrumInfo(vals, vecs, rest, nbeta, floor))


def finite(info: SpectrumInfo) -> bool:
    return bool(torch.isfinite(info.values).all()) and math.isfinite(
        float(info.rest.residuals.max())
    )


def hessian_spectrum(
    model, w_star: Tensor, seed: int, nbeta: float, gamma: float, alpha: float
) -> SpectrumInfo:
    """``deflated_spectrum`` of ∇²L_n(w*) on the samples ``at_w_star.full_data_hessian`` uses (all
    of them up to ``HESSIAN_SAMPLES``, else a fixed random subset from ``seed``): by double
    backward, or by differences of the gradient where that is not finite."""
    from numeric.hessian.at_w_star import HESSIAN_CHUNK, hessian_subset

    idx = hessian_subset(model.n, seed, w_star.device)
    args = (w_star, seed, nbeta, gamma, alpha)
    info = None
    try:
        info = deflated_spectrum(subset_hvp(model.f, model.data, idx, w_star, HESSIAN_CHUNK), *args)
    except FloatingPointError:
        pass
    if info is None or not finite(info):
        info = deflated_spectrum(
            difference_subset_hvp(model.f, model.data, idx, w_star, HESSIAN_CHUNK), *args
        )
    return info
