"""Whether a point of a quadratic network fits given targets exactly: the hypothesis under which
λ at a trained point is the λ of the realizable loss.

With data X (n × d) and targets Y (n × p) the loss is L(θ) = (1/n)Σ_i ‖f_θ(x_i) − y_i‖² (centred
across samples with ``centered=True``). Where θ* fits exactly, f_θ*(x_i) = y_i for every i, the
loss minus its minimum is K(θ) = (1/n)Σ_i ‖f_θ(x_i) − f_θ*(x_i)‖², the loss whose λ the rank route
(:func:`rlct.quadratic.llc`) computes. Where it does not (a trained point in floating point never
fits exactly), L(θ*) > 0 and λ of the user's loss depends on the residuals through second
derivatives the ranks do not see; the rank route then answers for the data f_θ*(x_i) the network
itself outputs, and the failed condition says so.

The outputs are computed exactly over Q (FLINT matrices): f_k(x) = Σ_j v_kj (w_jᵀx + b_j)² + c_k.
"""

from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np

from ..errors import InvalidShapeError
from ..result import Condition
from .point import Point, exact_array

__all__ = ["fit_condition", "outputs", "parse_targets"]


def _fmpq(x: object) -> flint.fmpq:
    f = Fraction(x)
    return flint.fmpq(f.numerator, f.denominator)


def _fmpq_mat(a: np.ndarray) -> flint.fmpq_mat:
    rows, cols = a.shape
    return flint.fmpq_mat(rows, cols, [_fmpq(x) for x in a.flat])


def outputs(pt: Point, c: np.ndarray | None = None) -> np.ndarray:
    """f_θ(x_i)_k for every sample i and output k, exactly (an n × p object array of Fractions);
    ``c`` the output biases (zero when None)."""
    if pt.X is None:
        raise InvalidShapeError("outputs need a data matrix X")
    pre = _fmpq_mat(pt.X) * _fmpq_mat(pt.W)  # n × K: w_jᵀx_i
    n, K = pre.nrows(), pre.ncols()
    b = [_fmpq(0)] * K if pt.b is None else [_fmpq(x) for x in pt.b]
    act = flint.fmpq_mat(n, K)
    for i in range(n):
        for j in range(K):
            z = pre[i, j] + b[j]
            act[i, j] = z * z
    out = act * _fmpq_mat(pt.V).transpose()  # n × p
    res = np.empty((n, pt.p), dtype=object)
    for i in range(n):
        for k in range(pt.p):
            v = out[i, k]
            res[i, k] = Fraction(int(v.p), int(v.q)) + (0 if c is None else Fraction(c[k]))
    return res


def parse_targets(Y: object, c: object, pt: Point) -> tuple[np.ndarray, np.ndarray | None]:
    """Targets Y as an exact n × p array (a vector of n for p = 1) and the output biases c
    (shape (p,), only with hidden biases b), checked against the point's shapes."""
    if pt.X is None:
        raise InvalidShapeError("targets Y need the inputs X they belong to")
    Ya = exact_array(Y, "Y")
    if Ya.ndim == 1 and pt.p == 1:
        Ya = Ya.reshape(-1, 1)
    if Ya.shape != (pt.n, pt.p):
        raise InvalidShapeError(
            f"Y has shape {Ya.shape}: it must be n × p = {pt.n} × {pt.p} (one row per sample of X, "
            "one column per output)"
        )
    if c is None:
        return Ya, None
    if pt.b is None:
        raise InvalidShapeError("the output biases c belong to the model with biases: give b too")
    ca = exact_array(c, "c")
    if ca.shape != (pt.p,):
        raise InvalidShapeError(f"c has shape {ca.shape}: it must have shape ({pt.p},)")
    return Ya, ca


def fit_condition(pt: Point, Y: np.ndarray, c: np.ndarray | None) -> Condition:
    """Whether θ* fits the targets exactly (centred residuals with ``pt.centered``): a proven
    condition when every residual is 0, a failed one naming the largest residual otherwise."""
    resid = outputs(pt, c) - Y
    if pt.centered:
        resid = resid - resid.sum(axis=0) / resid.shape[0]
    what = "P⊥(f_θ*(x_i) − y_i) = 0" if pt.centered else "f_θ*(x_i) = y_i"
    sizes = [abs(r) for r in resid.flat]
    worst = max(sizes)
    if worst == 0:
        return Condition(
            f"θ* fits the targets exactly: {what} for each of the n = {pt.n} inputs (exact "
            "arithmetic), so the loss minus its minimum is (1/n)Σ_i‖f_θ(x_i) − f_θ*(x_i)‖²",
            True,
        )
    i, k = np.unravel_index(sizes.index(worst), resid.shape)
    mse = sum(r * r for r in resid.flat) / resid.shape[0]
    return Condition(
        f"θ* fits the targets exactly ({what} for every i): it does not; the largest residual is "
        f"{float(worst):.3g} (sample {i}, output {k}) and the mean squared residual "
        f"{float(mse):.3g}. λ of the loss on Y is then not decided by the ranks (the residuals "
        "enter its second derivatives); the value given is λ for the targets f_θ*(x_i) the "
        "network itself outputs",
        False,
    )
