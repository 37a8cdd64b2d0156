"""Datasets of the quadratic-network paper (Cullen et al. 2026): modular addition."""

from __future__ import annotations

import numpy as np

from .._validate import count
from ..errors import TooLargeError

__all__ = ["MAX_BYTES", "modular_addition_data"]

MAX_BYTES = 512 * 2**20
"""The most memory the dataset may take (X and Y together): p ≤ 281."""


def _max_p() -> int:
    return int((MAX_BYTES / (3 * np.dtype(np.int64).itemsize)) ** (1 / 3))


def modular_addition_data(p: int) -> tuple[np.ndarray, np.ndarray]:
    """All p² modular-addition examples as one-hot arrays (int64).

    Row i = a·p + b (a = 0..p−1 outer, b = 0..p−1 inner) holds the input x_i = [e_a; e_b] ∈
    {0,1}^{2p} and the target y_i = e_{(a+b) mod p} ∈ {0,1}^p. Returns (X, Y) of shapes
    (p², 2p) and (p², p). The paper takes p prime; any modulus p ≥ 2 is accepted.
    The input matrix has rank 2p − 1 (the two one-hot halves both sum to the all-ones column).
    """
    p = count(p, "p", 2)
    size = 3 * p**3 * np.dtype(np.int64).itemsize  # X: p² × 2p, Y: p² × p
    if size > MAX_BYTES:
        raise TooLargeError(
            f"modular_addition_data(p = {p:,}) would need X of {p * p:,} × {2 * p:,} and Y of "
            f"{p * p:,} × {p:,} int64 entries, {size / 2**30:,.1f} GiB; at most "
            f"{MAX_BYTES // 2**20} MiB (p ≤ {_max_p()}) are allocated"
        )
    a, b = np.divmod(np.arange(p * p), p)
    X = np.zeros((p * p, 2 * p), dtype=np.int64)
    X[np.arange(p * p), a] = 1
    X[np.arange(p * p), p + b] = 1
    Y = np.zeros((p * p, p), dtype=np.int64)
    Y[np.arange(p * p), (a + b) % p] = 1
    return X, Y
