r"""Lanczos on matrix-vector products: the extreme spectrum of a symmetric operator A [D, D]
given only as v ↦ A·v (a Hessian as Hessian-vector products), in m products and m·D memory.

From a unit start vector q₁, m steps build an orthonormal basis Q = [q₁ … q_m] of the Krylov
space span{q₁, A·q₁, …, A^{m−1}·q₁} and the tridiagonal T = QᵀAQ (diagonal α, off-diagonal β):

    r = A·q_j − β_{j−1}·q_{j−1},  α_j = q_jᵀr,  r ← r − α_j·q_j,  β_j = ‖r‖,  q_{j+1} = r/β_j

with r reorthogonalised against every earlier q (twice; full reorthogonalisation keeps Q
orthonormal in floating point, so no spurious copies of converged eigenvalues appear). The
eigenpairs (θ_i, s_i) of T give Ritz pairs (θ_i, y_i = Q·s_i) with residual

    ‖A·y_i − θ_i·y_i‖ = β_m·|s_i[m]|

at no extra cost. The extreme Ritz values converge first (Kaniel–Paige), geometrically in the gap
to the next eigenvalue: the largest and the most negative eigenvalues of a Hessian in a few dozen
products, where power iteration needs hundreds. Interior Ritz values approximate clusters, not
single eigenvalues. If β_j vanishes the Krylov space is invariant (A has few distinct eigenvalues
in the span of q₁, as a Hessian of low rank): the iteration stops early and the Ritz values are
exact eigenvalues.

``spectral_sum`` is stochastic Lanczos quadrature (Golub–Meurant; Ubaru, Chen & Saad 2017): with
a random start q₁ = v/‖v‖, v ~ N(0, I), D·Σ_i τ_i²·f(θ_i) (τ_i = s_i[1]) is an unbiased-in-the-
limit estimate of tr f(A) with the variance of one Hutchinson probe. It is the m-node Gauss rule
for q₁ᵀf(A)q₁, and ``radau_sum`` the (m + 1)-node Gauss–Radau rule with one node fixed at a ≤ the
spectrum (T extended by a row whose diagonal φ makes a an eigenvalue: (T − aI)·δ = β_m²·e_m,
φ = a + δ_m). Where every odd derivative of f is positive on the spectrum and every even one of
order ≥ 2 negative, as for f(x) = x/(x + s) at x > −s, Gauss overestimates the quadratic form and
Gauss–Radau underestimates it (Golub & Meurant, *Matrices, Moments and Quadrature*, 2010, ch. 6),
so the two bracket it. The bracket is what a few dozen steps can say of a step-like f: on a
4,000 × 4,000 matrix with 1,300 eigenvalues in 10⁻²–10³ and the rest 0, tr x/(x + 1/1086) is
1,290; 32 steps give Gauss 3,927 and Gauss–Radau 979 (the null space's weight sits on a Ritz
value of 0.02, which the Gauss rule counts in full).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

MatVec = Callable[[Tensor], Tensor]
BREAKDOWN = 1e-10  # β_j below this times ‖A‖'s running estimate: the Krylov space is invariant


@dataclass(frozen=True)
class Ritz:
    """Ritz pairs of one Lanczos run, ascending: values θ [m], vectors Y [D, m] (columns), the
    residuals ‖A·y − θ·y‖ [m], the first components τ of T's eigenvectors (quadrature weights)
    and the products used."""

    values: Tensor  # [m] float64, ascending
    vectors: Tensor  # [D, m], the dtype of the start vector
    residuals: Tensor  # [m] float64
    weights: Tensor  # [m] float64, τ_i² (sum 1)
    products: int
    invariant: bool  # β vanished: the Ritz values are eigenvalues of A restricted to K_m
    space: int  # dimension of the space the run saw (D less the locked vectors)
    alphas: Tensor  # [m] float64, T's diagonal
    betas: Tensor  # [m] float64, T's off-diagonal and last β_m = ‖r‖ (0 when invariant)

    def converged(self, tol: float) -> Tensor:
        """Mask of the Ritz pairs with residual ≤ tol·max|θ| (relative to the spectrum's
        scale)."""
        scale = float(self.values.abs().max()) if self.values.numel() else 0.0
        return self.residuals <= tol * max(scale, 1e-300)

    def spectral_sum(self, f: Callable[[Tensor], Tensor]) -> float:
        """n·Σ τ_i²·f(θ_i), n = ``space``: stochastic Lanczos quadrature of tr f(A) on the
        space the run saw (module docstring)."""
        return float(self.space * (self.weights * f(self.values)).sum())

    def radau_sum(self, f: Callable[[Tensor], Tensor], node: float, slack: float = 0.0) -> float:
        """n·(Gauss–Radau rule for q₁ᵀf(A)q₁ with a node at ``node``), n = ``space`` (module
        docstring): with ``spectral_sum`` a bracket of n·q₁ᵀf(A)q₁ where f's derivatives have the
        signs named there and ``node`` is at most A's lowest eigenvalue. Ritz values down to
        ``slack`` below ``node`` are taken for rounding (the node then moves ``slack`` below the
        lowest); nan where one is lower (``node`` is then no bound). The Gauss rule where the
        run was invariant."""
        if self.invariant or float(self.betas[-1]) == 0.0:
            return self.spectral_sum(f)
        lowest = float(self.values[0])
        if lowest < node - slack:
            return math.nan
        node = node if lowest >= node else lowest - slack
        m = self.alphas.numel()
        t = _tridiagonal(self.alphas, self.betas[: m - 1])
        rhs = torch.zeros(m, dtype=torch.float64)
        rhs[-1] = self.betas[-1] ** 2
        shifted = t - node * torch.eye(m, dtype=torch.float64)
        try:
            delta = torch.linalg.solve(shifted, rhs)
        except RuntimeError:  # ``node`` is a Ritz value: singular T − aI
            return math.nan
        ext = torch.zeros(m + 1, m + 1, dtype=torch.float64)
        ext[:m, :m] = t
        ext[m, m - 1] = ext[m - 1, m] = self.betas[-1]
        ext[m, m] = node + delta[-1]
        theta, s = torch.linalg.eigh(ext)
        return float(self.space * (s[0, :].square() * f(theta)).sum())


def lanczos(matvec: MatVec, start: Tensor, steps: int, locked: Tensor | None = None) -> Ritz:
    """``steps`` Lanczos steps (at most D; fewer if the Krylov space becomes invariant) from
    ``start`` [D] with full reorthogonalisation; the Ritz pairs (module docstring). The basis is
    kept in ``start``'s dtype and device, T and its eigen-decomposition in float64.

    ``locked`` [k, D] (orthonormal rows): eigenvectors found before. The start and every new
    vector are orthogonalised against them too, so the run sees A on their orthogonal complement
    (deflation): it finds further copies of eigenvalues of multiplicity > 1, of which one run
    from one start vector sees only one (the Krylov space holds one vector per eigenspace)."""
    d = start.numel()
    free = d - (0 if locked is None else int(locked.shape[0]))
    steps = max(1, min(int(steps), free))
    q = start.reshape(-1)
    if locked is not None and locked.numel():
        q = q - locked.T @ (locked @ q)
    q = q / q.norm().clamp_min(1e-300)
    basis = torch.empty(steps, d, dtype=start.dtype, device=start.device)
    alphas: list[float] = []
    betas: list[float] = []
    beta = 0.0
    scale = 0.0
    invariant = False
    for j in range(steps):
        basis[j] = q
        r = matvec(q).reshape(-1)
        if j > 0:
            r = r - beta * basis[j - 1]
        alpha = float(q @ r)
        r = r - alpha * q
        for _ in range(2):  # full reorthogonalisation, twice ("twice is enough")
            r = r - basis[: j + 1].T @ (basis[: j + 1] @ r)
            if locked is not None and locked.numel():
                r = r - locked.T @ (locked @ r)
        alphas.append(alpha)
        beta = float(r.norm())
        scale = max(scale, abs(alpha) + beta)
        if not math.isfinite(beta):
            raise FloatingPointError("a matrix-vector product in Lanczos is not finite")
        if j + 1 == steps:
            break
        if beta <= BREAKDOWN * max(scale, 1e-300):
            invariant = True
            break
        betas.append(beta)
        q = r / beta
    m = len(alphas)
    diag = torch.tensor(alphas, dtype=torch.float64)
    last = 0.0 if invariant else beta
    off = torch.tensor([*betas[: m - 1], last], dtype=torch.float64)
    theta, s = torch.linalg.eigh(_tridiagonal(diag, off[: m - 1]))
    residuals = (last * s[-1, :]).abs()
    vectors = basis[:m].T @ s.to(device=basis.device, dtype=basis.dtype)
    return Ritz(
        theta, vectors, residuals, s[0, :].square(), m, invariant or m == free, free, diag, off
    )


def _tridiagonal(diag: Tensor, off: Tensor) -> Tensor:
    """The symmetric tridiagonal matrix with ``diag`` [m] and ``off`` [m − 1]."""
    t = torch.diag(diag)
    if off.numel():
        t = t + torch.diag(off, 1) + torch.diag(off, -1)
    return t


def random_start(dim: int, generator: torch.Generator, like: Tensor) -> Tensor:
    """A start vector v ~ N(0, I) [D] from ``generator`` (on the generator's device)."""
    v = torch.randn(dim, generator=generator, dtype=like.dtype, device=generator.device)
    return v.to(like.device)
