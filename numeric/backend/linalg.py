"""Dense linear algebra with the same bits in every process.

Two sources of cross-process variation in the last bits were measured here (torch 2.13, MKL):
LAPACK routines split their work over torch's threads, and ``torch.linalg.lstsq`` (gelsy) gave a
different solution in about one process in six even on one thread, depending on what else the
process had imported. Every later number of an estimate inherits those bits. The calls made here
are small (a D×D Hessian, a least-squares fit with D columns), so they run on one thread, and
least squares goes through Householder QR, which was stable in every process tried.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import Tensor


@contextmanager
def one_thread() -> Iterator[None]:
    """Run the block with one torch thread, restoring the previous count."""
    old = torch.get_num_threads()
    if old == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def least_squares(x: Tensor, y: Tensor) -> Tensor:
    """argmin_w ‖x w − y‖² for x of shape (n, d) and y of shape (n,) or (n, k), in float64.

    x = QR with R upper triangular, w = R⁻¹Qᵀy when x has full column rank; otherwise the
    minimum-norm solution by the pseudo-inverse (rank decided at LAPACK's default tolerance).
    """
    x, y = x.double(), y.double()
    with one_thread():
        q, r = torch.linalg.qr(x)
        diag = r.diagonal().abs()
        tol = (
            max(x.shape)
            * torch.finfo(torch.float64).eps
            * (float(diag.max()) if diag.numel() else 0.0)
        )
        if x.shape[0] >= x.shape[1] and bool((diag > tol).all()):
            rhs = (q.T @ y).reshape(x.shape[1], -1)
            w = torch.linalg.solve_triangular(r, rhs, upper=True)
            return w.reshape(x.shape[1], *y.shape[1:])
        return torch.linalg.pinv(x) @ y
