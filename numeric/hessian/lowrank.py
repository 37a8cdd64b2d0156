r"""The low-rank preconditioner A = a₀·I + U·diag(a − a₀)·Uᵀ (U [D, k], orthonormal columns) that
``numeric.hessian.spectrum`` builds from the Hessian's top eigenpairs, applied without forming the
[D, D] matrix: a step of a large model is bound by reading U, so the sampler's two products go
through it twice, not four times (``drift_and_step``)."""

from __future__ import annotations

import torch
from torch import Tensor


class LowRankRoot:
    """A = a₀·I + U·diag(a − a₀)·Uᵀ (U [D, k] with orthonormal columns, a [k] > 0, a₀ > 0),
    symmetric positive definite, applied to row vectors as ``v @ A`` (the way the sampler applies
    the dense M^{1/2}): a₀·v + ((v·U)·(a − a₀))·Uᵀ."""

    def __init__(self, basis: Tensor, values: Tensor, base: float) -> None:
        self.basis, self.values, self.base = basis, values, float(base)
        self._shift = (values - base).to(device=basis.device, dtype=basis.dtype)

    def __rmatmul__(self, v: Tensor) -> Tensor:
        return v * self.base + ((v @ self.basis) * self._shift) @ self.basis.T

    def drift_and_step(self, d: Tensor, inc: Tensor, k: float | Tensor) -> tuple[Tensor, Tensor]:
        """(d·A, (k·d·A + inc)·A), the sampler's two products, reading U twice instead of four
        times (a step on a large model is bound by reading U): with p = d·U and q = inc·U,
        (d·A)·U = p·a since UᵀU = I, so (k·d·A + inc)·U = k·p·a + q, and both products back
        through Uᵀ are one [2C, k]·[k, D] product."""
        p, q = torch.stack([d, inc]) @ self.basis
        ps = p * self._shift
        r = (ps + p * self.base).mul_(k).add_(q)  # p·a = p·(a − a₀) + a₀·p
        back_d, back_x = torch.stack([ps, r.mul_(self._shift)]) @ self.basis.T
        dz = back_d.add_(d, alpha=self.base)
        x = dz * k + inc
        return dz, back_x.add_(x, alpha=self.base)

    def power(self, p: float) -> LowRankRoot:
        """A^p (same eigenvectors, eigenvalues to the power p)."""
        return LowRankRoot(self.basis, self.values**p, self.base**p)

    @property
    def rank(self) -> int:
        return int(self.basis.shape[1])

    def to_dense(self) -> Tensor:
        """A as a [D, D] matrix (tests and small models only)."""
        eye = torch.eye(self.basis.shape[0], dtype=self.basis.dtype, device=self.basis.device)
        return eye @ self
