r"""A dense Hessian preconditioner for Langevin, and what the Hessian says about mixing.

At w* the potential U(w) = nβ·L_n(w) + (γ/2)‖w − w*‖² + (α/2)‖w‖² has curvature

    A = nβ·H⁺ + c·I,   c = γ + α,   H⁺ = Q·diag(max(h, 0))·Qᵀ,   H = ∇²L_n(w*) = Q·diag(h)·Qᵀ

(negative eigenvalues clipped: w* should be a minimum, and M must be positive definite). With
M ≈ A⁻¹ the preconditioned Langevin step (``numeric.sampler.sgld``)

    w' = w − (ε/2)·M·∇U + √ε·M^{1/2}·ξ

is plain Langevin in z = M^{-1/2}(w − w*), where every locally quadratic direction has curvature 1:
ε no longer has to resolve the stiffest direction (κ = nβ·h_max + c) while the softest relevant one
(nβ·h_min + c) relaxes κ_max/κ_min times slower. Any fixed positive-definite M leaves the target
unchanged, so a Hessian measured on a subsample of the data is good enough.

The directions below the softest relevant one (nβ·h < c: flat at w*) are preconditioned like it,
M = Q·diag(1/max(nβh⁺ + c, k_soft))·Qᵀ with k_soft the smallest relevant curvature: a direction
flat at w* is not flat where the chains go (the loss is quartic along it, or the minimum is a
curved manifold along which the Hessian turns). Given the γ scale instead, steps along it are
O(1/√γ) and land where M no longer fits: on a two-layer quadratic network (eigenvalues of H over
seven decades) the preconditioned curvature where the chains went was 2300 instead of ≈ 2, and ε
shrank accordingly. When γ + α = 0 the floor is c = 10⁻⁶·max(nβ·h_max, 1), so that M stays finite.
The exception is ``whitened``: soft directions (0 < nβh < c) that the clamp slows, along which the
potential was checked quadratic where the chains go (``numeric.plan.soft_whitening``), keep
1/(nβh + c).

The same eigen-decomposition names the slow directions of an unpreconditioned run: the relevant
ones are those with nβ·h ≥ c (each contributes at least ¼ to ½Σ nβh/(nβh + c), the Laplace value
of the LLC); ``sgld.relaxation_steps`` turns the smallest relevant preconditioned curvature into
the e-folding time of the slowest direction, 2/(ε·κ_min) steps.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor
from torch.func import vmap

from numeric.backend.linalg import one_thread
from numeric.backend.memory import require_memory
from numeric.backend.torch_limits import raise_if_limitation
from numeric.errors import InvalidInputError

MAX_DENSE_DIM = 2048  # "auto" builds the dense preconditioner up to this many parameters
# One D×D matrix of the dense Hessian may take at most this many bytes (4 GiB: D ≤ 32,768 in
# float32, 23,170 in float64), whatever memory the device has: beyond it the D Hessian-vector
# products and the O(D³) eigen-decomposition take hours. preconditioner="hessian" asks for it at
# any D, so the size is checked before the first allocation (``require_dense_fits``).
MAX_DENSE_BYTES = 2**32
# D×D matrices alive at once at the peak: H and its rows, the float64 copy and eigenvectors of
# eigh, and M, M^{1/2}
DENSE_COPIES = 6
DENSE_ADVICE = (
    'use preconditioner="lowrank" (the stiff directions by Lanczos, k·D memory), "none", or '
    f'"auto" (the dense Hessian only up to {MAX_DENSE_DIM:,} parameters)'
)


def require_dense_fits(d: int, dtype: torch.dtype, device: torch.device) -> None:
    """Refuse, before anything is allocated, a dense D×D Hessian above ``MAX_DENSE_BYTES`` or
    whose ``DENSE_COPIES`` matrices exceed the device's free memory: ``InvalidInputError``
    naming the size, the limit and the alternatives (``DENSE_ADVICE``)."""
    one = d * d * torch.empty((), dtype=dtype).element_size()
    if one > MAX_DENSE_BYTES:
        raise InvalidInputError(
            f"the dense Hessian of {d:,} parameters is a {d:,}×{d:,} {dtype} matrix of "
            f"{one / 2**30:.3g} GiB (about {DENSE_COPIES} such at once to eigen-decompose it), "
            f"above the limit of {MAX_DENSE_BYTES / 2**30:.3g} GiB for one dense matrix "
            f"(numeric.hessian.dense.MAX_DENSE_BYTES): {DENSE_ADVICE}"
        )
    require_memory(
        {f"{DENSE_COPIES} dense {d:,}×{d:,} {dtype} matrices": DENSE_COPIES * one},
        device,
        f"the dense Hessian of {d:,} parameters and its eigen-decomposition",
        advice=DENSE_ADVICE,
    )


@dataclass(frozen=True)
class HessianInfo:
    """Eigen-decomposition of H = ∇²L_n(w*) and the preconditioner built from it."""

    eigvals: Tensor  # [D] ascending, unclipped
    eigvecs: Tensor  # [D, D] columns
    nbeta: float
    floor: float  # c = γ + α (or the tiny floor when that is 0)
    # soft directions (0 < nβh < c) scaled at their own curvature, the potential being quadratic
    # along them (``numeric.plan.soft_whitening``); None: every direction below k_soft is clamped to
    # it
    whitened: Tensor | None = None

    @property
    def curvatures(self) -> Tensor:
        """nβ·max(h, 0) + c, the curvature of U along each eigenvector (ascending)."""
        return self.nbeta * self.eigvals.clamp_min(0) + self.floor

    @property
    def relevant(self) -> Tensor:
        """Mask of the directions with nβ·h ≥ c (those that count towards the LLC)."""
        return self.nbeta * self.eigvals >= self.floor

    @property
    def condition_number(self) -> float:
        k = self.curvatures
        return float(k.max() / k.min())

    def laplace_llc(self) -> float:
        """½·Σ nβh⁺/(nβh⁺ + c): the LLC at this temperature if U were exactly quadratic."""
        h = self.nbeta * self.eigvals.clamp_min(0)
        return 0.5 * float((h / (h + self.floor)).sum())

    def laplace_bounds(self) -> tuple[float, float]:
        """(``laplace_llc``, ``laplace_llc``): the dense spectrum gives it exactly."""
        value = self.laplace_llc()
        return value, value

    def slow_directions(self, k: int) -> tuple[Tensor, Tensor]:
        """The k relevant eigenvectors of smallest curvature, [D, k], and their curvatures [k]."""
        idx = torch.nonzero(self.relevant).flatten()[:k]
        return self.eigvecs[:, idx], self.curvatures[idx]

    @property
    def soft(self) -> Tensor:
        """Mask of the soft directions, 0 < nβ·h < c (``numeric.findings.soft_directions``,
        ``numeric.plan.soft_whitening``)."""
        return ~self.relevant & (self.nbeta * self.eigvals > 0)

    @property
    def softest_relevant(self) -> float:
        """k_soft, the smallest curvature nβh + c of a relevant direction; nan where none is."""
        k, rel = self.curvatures, self.relevant
        return float(k[rel].min()) if bool(rel.any()) else math.nan

    def clamped_curvatures(self) -> Tensor:
        """max(nβh⁺ + c, k_soft) along each eigenvector, k_soft the smallest relevant curvature
        (``curvatures`` where none is relevant), nβh + c itself along the ``whitened`` ones: M's
        inverse eigenvalues (module docstring)."""
        k, k_soft = self.curvatures, self.softest_relevant
        if math.isnan(k_soft):
            return k
        clamped = k.clamp_min(k_soft)
        return clamped if self.whitened is None else torch.where(self.whitened, k, clamped)

    @property
    def num_whitened(self) -> int:
        """How many soft directions are scaled at their own curvature (``whitened``)."""
        return 0 if self.whitened is None else int(self.whitened.sum())

    def preconditioner(self) -> tuple[Tensor, Tensor]:
        """(M, M^{1/2}) with M = Q·diag(1/max(nβh⁺ + c, k_soft))·Qᵀ (module docstring)."""
        q, k = self.eigvecs, self.clamped_curvatures()
        return (q * (1 / k)) @ q.T, (q * k.rsqrt()) @ q.T


def floor_of(nbeta: float, gamma: float, alpha: float, h_max: float) -> float:
    c = gamma + alpha
    return c if c > 0 else 1e-6 * max(nbeta * max(h_max, 0.0), 1.0)


def dense_hessian(f: Callable[[Tensor], Tensor], w: Tensor, block: int = 64) -> Tensor:
    """∇²f(w) [D, D] from blocks of Hessian-vector products (double backward), symmetrised. A
    torch operation without the derivatives needed (a fused attention kernel, ...) is an
    ``InvalidInputError`` naming it and the way around it (``numeric.backend.torch_limits``)."""
    try:
        return _dense_hessian(f, w, block)
    except RuntimeError as exc:
        raise_if_limitation(exc)
        raise


def _dense_hessian(f: Callable[[Tensor], Tensor], w: Tensor, block: int) -> Tensor:
    """``dense_hessian`` without the naming of torch's limitations."""
    d = w.numel()
    ww = w.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        (g,) = torch.autograd.grad(f(ww), ww, create_graph=True)

    def hvp(v: Tensor) -> Tensor:
        if not g.requires_grad:  # the gradient does not depend on w: a zero Hessian
            return torch.zeros_like(v)
        (hv,) = torch.autograd.grad(g, ww, grad_outputs=v, retain_graph=True, allow_unused=True)
        return torch.zeros_like(v) if hv is None else hv

    eye = torch.eye(d, dtype=w.dtype, device=w.device)
    rows = []
    with torch.enable_grad():
        for s in range(0, d, block):
            vs = eye[s : s + block]
            try:
                rows.append(vmap(hvp)(vs).detach())
            except RuntimeError:  # some losses do not batch under vmap: one HVP at a time
                rows.append(torch.stack([hvp(v) for v in vs]).detach())
    h = torch.cat(rows) if rows else eye
    return 0.5 * (h + h.T)


def difference_hessian(f: Callable[[Tensor], Tensor], w: Tensor, block: int = 64) -> Tensor:
    """∇²f(w) [D, D] by central differences of the autograd gradient, column i
    (∇f(w + h_i e_i) − ∇f(w − h_i e_i))/(2h_i) with h_i = ε_mach^{1/3}·(1 + |w_i|), symmetrised:
    the fallback where double backward gives NaN at w* though f is smooth (w ** 0 with a tensor
    exponent at w = 0 has a NaN second derivative in autograd)."""
    d = w.numel()
    h = torch.finfo(w.dtype).eps ** (1 / 3) * (1 + w.detach().abs())

    def grad(x: Tensor) -> Tensor:
        with torch.enable_grad():
            xx = x.detach().clone().requires_grad_(True)
            (g,) = torch.autograd.grad(f(xx), xx, allow_unused=True)
        return torch.zeros_like(x) if g is None else g.detach()

    cols = []
    for s in range(0, d, block):
        idx = torch.arange(s, min(s + block, d), device=w.device)
        shift = torch.zeros(idx.numel(), d, dtype=w.dtype, device=w.device)
        shift[torch.arange(idx.numel()), idx] = h[idx]
        up = torch.stack([grad(w + e) for e in shift])
        down = torch.stack([grad(w - e) for e in shift])
        cols.append((up - down) / (2 * h[idx, None]))
    hess = torch.cat(cols) if cols else torch.zeros(d, d, dtype=w.dtype, device=w.device)
    return 0.5 * (hess + hess.T)


def hessian_info(h: Tensor, nbeta: float, gamma: float, alpha: float) -> HessianInfo:
    """Eigen-decomposition (float64) of a Hessian of L_n at w*."""
    with one_thread():  # the same bits in every process (numeric.backend.linalg)
        evals, evecs = torch.linalg.eigh(h.double())
    evals, evecs = evals.to(h.dtype), evecs.to(h.dtype)
    h_max = float(evals.max()) if evals.numel() else 0.0
    return HessianInfo(evals, evecs, nbeta, floor_of(nbeta, gamma, alpha, h_max))
