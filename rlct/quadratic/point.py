"""Points of a quadratic network, validated and converted to exact numbers.

A point θ = (W, V) (and b) with data X is held as a :class:`Point` of object arrays whose entries
are Python ints or Fractions. Floats are taken at their exact binary value (``Fraction(x)``:
0.1 is 3602879701896397/2^55, not 1/10); NaN and ±inf are refused.

Every column block of the Jacobian is homogeneous in (W, b), V and X, so scaling W and b by α,
V by β and X by γ (b by αγ) only rescales whole column blocks: :func:`integer_point` turns a
rational point into an integer one with a Jacobian of the same rank.
"""

from __future__ import annotations

import math
from fractions import Fraction
from math import lcm
from numbers import Integral, Rational
from typing import NamedTuple

import flint
import numpy as np
import sympy as sp

from .._validate import flag
from ..errors import InvalidShapeError, InvalidTypeError, NonFiniteError, TooLargeError

__all__ = [
    "MAX_JACOBIAN_ENTRIES",
    "Point",
    "check_jacobian_size",
    "data_rows",
    "den_lcm",
    "exact_array",
    "exact_entry",
    "has_float_entries",
    "integer_point",
    "jacobian_shape",
    "object_array",
    "parse_data",
    "parse_point",
]


MAX_JACOBIAN_ENTRIES = 4_000_000
"""The largest exact Jacobian built (rows × columns); the largest benchmarked shape, d = 14,
p = 7, K = 100 on modular-addition data, has 343 × 2,100 = 720,300 entries."""


def exact_entry(x: object, where: str) -> Fraction:
    """One entry as an exact Fraction; NaN / ±inf raise NonFiniteError, other types TypeError."""
    if isinstance(x, (bool, np.bool_)):
        raise InvalidTypeError(f"{where} is a boolean ({x!r}); give a number")
    if isinstance(x, Fraction):
        return x
    if isinstance(x, (Integral, np.integer)):
        return Fraction(int(x))
    if isinstance(x, (float, np.floating)):
        if not math.isfinite(x):
            raise NonFiniteError(f"{where} = {x!r} is not finite")
        return Fraction(*x.as_integer_ratio())  # exact at any width (long double included)
    if isinstance(x, flint.fmpz):
        return Fraction(int(x))
    if isinstance(x, flint.fmpq):
        return Fraction(int(x.p), int(x.q))
    if isinstance(x, sp.Basic):
        if x.has(sp.nan, sp.oo, -sp.oo, sp.zoo):
            raise NonFiniteError(f"{where} = {x} is not finite")
        if isinstance(x, sp.Rational):
            return Fraction(int(x.p), int(x.q))
        if isinstance(x, sp.Float):
            r = sp.Rational(x)
            return Fraction(int(r.p), int(r.q))
        raise InvalidTypeError(f"{where} = {x} is not a rational number")
    if isinstance(x, Rational):
        return Fraction(int(x.numerator), int(x.denominator))
    raise InvalidTypeError(f"{where} = {x!r} ({type(x).__name__}) is not a real rational number")


def object_array(value: object, name: str) -> np.ndarray:
    """``value`` as a numpy object array, entries not yet converted (cheap: shapes can be
    checked before the per-entry work); NaN / inf in float arrays and ragged lists are refused."""
    if value is None:
        raise InvalidShapeError(f"{name} is required")
    if isinstance(value, np.ndarray) and value.dtype.kind in "fc":
        bad = ~np.isfinite(value)
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            raise NonFiniteError(f"{name}{list(idx)} = {value[idx]!r} is not finite")
    try:
        arr = np.array(value, dtype=object)
    except ValueError as exc:  # ragged nested lists
        raise InvalidShapeError(f"{name} is not a rectangular array: {exc}") from None
    if arr.ndim == 0:
        raise InvalidShapeError(f"{name} must be an array, got {value!r}")
    return arr


def exact_array(value: object, name: str) -> np.ndarray:
    """An object array of exact numbers (Python ints where integral, else Fractions); shape
    problems raise InvalidShapeError."""
    arr = object_array(value, name)
    out = np.empty(arr.shape, dtype=object)
    for idx in np.ndindex(arr.shape):
        x = arr[idx]
        if isinstance(x, (list, tuple, np.ndarray)):
            raise InvalidShapeError(f"{name} is not a rectangular array (ragged rows)")
        f = exact_entry(x, f"{name}{list(idx)}")
        out[idx] = int(f) if f.denominator == 1 else f
    return out


class Point(NamedTuple):
    """A validated point: exact arrays (object dtype of ints / Fractions) and the shape."""

    W: np.ndarray  # d × K
    V: np.ndarray  # p × K
    X: np.ndarray | None  # n × d
    b: np.ndarray | None  # K
    centered: bool

    @property
    def d(self) -> int:
        return self.W.shape[0]

    @property
    def K(self) -> int:
        return self.W.shape[1]

    @property
    def p(self) -> int:
        return self.V.shape[0]

    @property
    def n(self) -> int | None:
        return None if self.X is None else self.X.shape[0]

    @property
    def bias(self) -> bool:
        return self.b is not None


def parse_point(
    W: object, V: object, X: object = None, centered: bool = False, b: object = None
) -> Point:
    """Validate shapes and convert every entry exactly (see the module docstring). Shapes and the
    Jacobian's size are checked before any entry is converted."""
    early_size_check(W, V, X, b is not None)
    Wa = object_array(W, "W")
    if Wa.ndim != 2 or 0 in Wa.shape:
        raise InvalidShapeError(f"W must be a non-empty d × K matrix, got shape {Wa.shape}")
    d, K = Wa.shape
    Va = object_array(V, "V")
    if Va.ndim == 1:
        Va = Va.reshape(1, -1)
    if Va.ndim != 2 or Va.shape[0] == 0 or Va.shape[1] != K:
        raise InvalidShapeError(
            f"V has shape {Va.shape} but W has shape {Wa.shape}: V must be p × K with K = {K} "
            "(one column per hidden unit) and p ≥ 1"
        )
    Xa = None
    if X is not None:
        Xa = object_array(X, "X")
        if Xa.ndim != 2 or Xa.shape[0] == 0 or Xa.shape[1] != d:
            raise InvalidShapeError(
                f"X has shape {Xa.shape} but W has shape {Wa.shape}: X must be n × d with d = {d} "
                "(one row per sample) and n ≥ 1"
            )
    ba = None
    if b is not None:
        ba = object_array(b, "b")
        if ba.shape != (K,):
            raise InvalidShapeError(
                f"b has shape {ba.shape} but W has shape {Wa.shape}: b must have shape ({K},)"
            )
    centered = flag(centered, "centered")
    if centered and Xa is None:
        raise InvalidShapeError(
            "centered=True needs a data matrix X (centring acts across samples)"
        )
    n = None if Xa is None else Xa.shape[0]
    check_jacobian_size(d, Va.shape[0], K, n, ba is not None)
    W_, V_ = exact_array(Wa, "W"), exact_array(Va, "V")
    X_ = None if Xa is None else exact_array(Xa, "X")
    b_ = None if ba is None else exact_array(ba, "b")
    return Point(W_, V_, X_, b_, centered)


def has_float_entries(*values: object) -> bool:
    """Whether any of the raw inputs holds a binary floating-point entry (read exactly, so 0.1 is
    3602879701896397/2⁵⁵ and 0.3 ≠ 3·0.1)."""
    for v in values:
        if v is None:
            continue
        if isinstance(v, np.ndarray) and v.dtype.kind == "f":
            return True
        arr = np.asarray(v, dtype=object) if not isinstance(v, np.ndarray) else v
        if arr.dtype == object and any(isinstance(x, (float, np.floating)) for x in arr.flat):
            return True
    return False


def early_size_check(W: object, V: object, X: object, bias: bool) -> None:
    """``check_jacobian_size`` from what the inputs' shapes say without converting them (numpy
    arrays; a list's length): an oversized W or X is refused before object arrays of its entries
    are built (a 10⁴ × 10⁴ W took 9 s and 4 GB to refuse). p is taken as 1 where V is not an
    array, a lower bound, so nothing is refused here that fits; the full check follows."""
    sw = np.shape(W) if isinstance(W, np.ndarray) else None
    if sw is None or len(sw) != 2:
        return
    sv = np.shape(V) if isinstance(V, np.ndarray) else ()
    p = sv[0] if len(sv) == 2 else 1
    n = None if X is None else data_rows(X)
    if X is not None and n is None:
        return
    check_jacobian_size(sw[0], max(p, 1), sw[1], n, bias)


def data_rows(X: object) -> int | None:
    """The number of samples of a data set X as given (its length), before any entry is
    converted; None where X has no length (the full validation names that)."""
    try:
        return len(X)  # type: ignore[arg-type]
    except TypeError:
        return None


def jacobian_shape(d: int, p: int, K: int, n: int | None, bias: bool) -> tuple[int, int]:
    """(rows, columns) of the Jacobian: p·m rows (m = d(d+1)/2, plus d + 1 with biases) without
    data, p·n with n samples; N = (d + p)K columns, plus K + p with biases."""
    rows = p * n if n is not None else p * (d * (d + 1) // 2 + ((d + 1) if bias else 0))
    return rows, (d + p) * K + ((K + p) if bias else 0)


def check_jacobian_size(d: int, p: int, K: int, n: int | None, bias: bool) -> None:
    """Refuse shapes whose exact Jacobian would exceed MAX_JACOBIAN_ENTRIES (TooLargeError)."""
    rows, cols = jacobian_shape(d, p, K, n, bias)
    if rows * cols > MAX_JACOBIAN_ENTRIES:
        data = "" if n is None else f", n = {n:,} samples"
        raise TooLargeError(
            f"the Jacobian for d = {d:,}, p = {p:,}, K = {K:,}{data} would need {rows:,} × "
            f"{cols:,} = {rows * cols:,} exact entries; at most {MAX_JACOBIAN_ENTRIES:,} are built"
        )


def parse_data(X: object, d: int, centered: object) -> np.ndarray | None:
    centered = flag(centered, "centered")
    if X is None:
        if centered:
            raise InvalidShapeError("centered=True needs a data matrix X")
        return None
    Xa = exact_array(X, "X")
    if Xa.ndim != 2 or Xa.shape[0] == 0 or Xa.shape[1] != d:
        raise InvalidShapeError(f"X has shape {Xa.shape}: it must be n × d with d = {d} and n ≥ 1")
    return Xa


def den_lcm(*arrays: np.ndarray | None) -> int:
    dens = [f.denominator for a in arrays if a is not None for f in a.flat]
    return lcm(*dens) if dens else 1


def integer_point(pt: Point) -> Point:
    """A point with integer entries whose Jacobian has the same rank (blockwise rescaling)."""
    gamma = den_lcm(pt.X)
    b1 = None if pt.b is None else pt.b * gamma
    alpha = den_lcm(pt.W, b1)
    beta = den_lcm(pt.V)

    def as_int(a: np.ndarray | None, s: int) -> np.ndarray | None:
        if a is None:
            return None
        out = np.empty(a.shape, dtype=object)
        for idx in np.ndindex(a.shape):
            v = a[idx] * s
            assert v.denominator == 1
            out[idx] = int(v)
        return out

    return Point(
        as_int(pt.W, alpha),
        as_int(pt.V, beta),
        as_int(pt.X, gamma),
        as_int(b1, alpha),
        pt.centered,
    )
