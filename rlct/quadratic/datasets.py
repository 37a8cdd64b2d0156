"""Datasets of the quadratic-network paper (Cullen et al. 2026): modular addition."""

from __future__ import annotations

import numpy as np

from .._validate import count

__all__ = ["modular_addition_data"]


def modular_addition_data(p: int) -> tuple[np.ndarray, np.ndarray]:
    """All p² modular-addition examples as one-hot arrays (int64).

    Row i = a·p + b (a = 0..p−1 outer, b = 0..p−1 inner) holds the input x_i = [e_a; e_b] ∈
    {0,1}^{2p} and the target y_i = e_{(a+b) mod p} ∈ {0,1}^p. Returns (X, Y) of shapes
    (p², 2p) and (p², p). The paper takes p prime; any modulus p ≥ 2 is accepted.
    The input matrix has rank 2p − 1 (the two one-hot halves both sum to the all-ones column).
    """
    p = count(p, "p", 2)
    a, b = np.divmod(np.arange(p * p), p)
    X = np.zeros((p * p, 2 * p), dtype=np.int64)
    X[np.arange(p * p), a] = 1
    X[np.arange(p * p), p + b] = 1
    Y = np.zeros((p * p, p), dtype=np.int64)
    Y[np.arange(p * p), (a + b) % p] = 1
    return X, Y
