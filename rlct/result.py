"""The result type of every exact computation: :class:`RLCT`.

λ is the real log canonical threshold (learning coefficient) of K ≥ 0 with prior φ: the largest pole
of ζ(z) = ∫ K(w)^z φ(w) dw sits at z = −λ, with order m. A result is *exact* only when every
condition it rests on was proven (status ``True``); otherwise it carries rigorous bounds
``lower ≤ λ ≤ upper`` and the undecided or failed conditions say why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Integral

import numpy as np
import sympy as sp

from ._validate import exact_rational, items
from .errors import InvalidResultError, InvalidTypeError

__all__ = ["RLCT", "Condition", "Solve", "as_rational", "condition_tuple", "rational_str"]


def as_rational(value: object, name: str = "value") -> sp.Rational:
    """Convert an int / Fraction / sympy Rational (or a string such as "3/4", parsed without
    evaluating code) to a sympy ``Rational``; floats are refused, never rationalised."""
    if isinstance(value, float):
        raise InvalidTypeError(
            f"{name} must be exact (int, Fraction or sympy Rational), got float {value!r}"
        )
    return exact_rational(value, name, InvalidTypeError)


def condition_tuple(value: object, name: str) -> tuple[Condition, ...]:
    """A sequence of :class:`Condition` as a tuple; anything else raises InvalidTypeError."""
    entries = items(value, name, InvalidTypeError, "Conditions")
    bad = [c for c in entries if not isinstance(c, Condition)]
    if bad:
        raise InvalidTypeError(f"{name} must hold Condition objects, got {bad[0]!r}")
    return tuple(entries)  # type: ignore[arg-type]


_STATUS = {True: "holds", False: "fails", None: "undecided"}
_FROM_STATUS = {v: k for k, v in _STATUS.items()}


def rational_str(value: sp.Rational | None) -> str | None:
    """An exact rational as a string such as "3/4" or "2" (None stays None)."""
    return None if value is None else str(value)


@dataclass(frozen=True)
class Condition:
    """A hypothesis a result rests on: ``status`` is True (proven), False (fails) or None (undecided)."""

    statement: str
    status: bool | None

    def __post_init__(self) -> None:
        if not isinstance(self.statement, str):
            raise InvalidTypeError(f"Condition.statement must be a string, got {self.statement!r}")
        if isinstance(self.status, np.bool_):
            object.__setattr__(self, "status", bool(self.status))
        if not (self.status is True or self.status is False or self.status is None):
            raise InvalidTypeError(
                f"Condition.status must be True, False or None, got {self.status!r}"
            )

    def __str__(self) -> str:
        return f"[{_STATUS[self.status]}] {self.statement}"

    def to_dict(self) -> dict[str, str]:
        """Plain JSON-able data: the statement and the status "holds", "fails" or "undecided"."""
        return {"statement": self.statement, "status": _STATUS[self.status]}

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Condition:
        """The inverse of :meth:`to_dict`."""
        if not isinstance(data, Mapping):
            raise InvalidTypeError(f"a condition must be a dict, got {data!r}")
        status = data.get("status")
        if status not in _FROM_STATUS:
            raise InvalidTypeError(
                f"status must be 'holds', 'fails' or 'undecided', got {status!r}"
            )
        return cls(data.get("statement"), _FROM_STATUS[status])  # type: ignore[arg-type]


@dataclass(frozen=True)
class RLCT:
    """An exact learning coefficient, or rigorous bounds on it.

    Attributes:
        lam: λ as a sympy Rational when ``exact``; otherwise None.
        mult: the multiplicity m when known (≥ 1), else None.
        exact: True only when every condition holds.
        lower, upper: rigorous bounds, lower ≤ λ ≤ upper (both equal ``lam`` when exact).
        method: how the value was obtained, including the case of a closed form.
        conditions: the hypotheses the value rests on, each proven / failed / undecided.
    """

    lam: sp.Rational | None
    mult: int | None
    exact: bool
    lower: sp.Rational
    upper: sp.Rational
    method: str
    conditions: tuple[Condition, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "lower", as_rational(self.lower, "lower"))
        object.__setattr__(self, "upper", as_rational(self.upper, "upper"))
        if self.lam is not None:
            object.__setattr__(self, "lam", as_rational(self.lam, "lam"))
            if self.lam < 0:
                raise InvalidResultError(f"lam = {self.lam} is negative: λ ≥ 0 always")
        if self.mult is not None:
            if not isinstance(self.mult, Integral) or isinstance(self.mult, bool) or self.mult < 1:
                raise InvalidTypeError(
                    f"mult must be a positive integer or None, got {self.mult!r}"
                )
            object.__setattr__(self, "mult", int(self.mult))
        if not isinstance(self.exact, (bool, np.bool_)):
            raise InvalidTypeError(f"exact must be True or False, got {self.exact!r}")
        object.__setattr__(self, "exact", bool(self.exact))
        if not isinstance(self.method, str):
            raise InvalidTypeError(f"method must be a string, got {self.method!r}")
        object.__setattr__(self, "conditions", condition_tuple(self.conditions, "conditions"))
        if self.lower < 0:
            raise InvalidResultError(f"lower bound {self.lower} is negative: λ ≥ 0 always")
        if self.lower > self.upper:
            raise InvalidResultError(f"lower bound {self.lower} exceeds upper bound {self.upper}")
        if self.exact:
            if self.lam is None:
                raise InvalidResultError("an exact result needs lam")
            if not (self.lower == self.lam == self.upper):
                raise InvalidResultError("an exact result must have lower == lam == upper")
            bad = [c for c in self.conditions if c.status is not True]
            if bad:
                raise InvalidResultError(
                    f"an exact result cannot rest on unproven conditions: {bad}"
                )
        elif self.lam is not None and self.lower != self.upper:
            raise InvalidResultError("a non-exact result with lower < upper must have lam=None")

    @classmethod
    def exact_value(
        cls,
        lam: object,
        mult: int,
        method: str,
        conditions: tuple[Condition, ...] = (),
    ) -> RLCT:
        """An exact result: λ = ``lam`` with multiplicity ``mult``."""
        r = as_rational(lam, "lam")
        return cls(r, mult, True, r, r, method, conditions)

    @classmethod
    def bounds(
        cls,
        lower: object,
        upper: object,
        method: str,
        conditions: tuple[Condition, ...] = (),
    ) -> RLCT:
        """A non-exact result: only ``lower ≤ λ ≤ upper`` is proven."""
        return cls(
            None,
            None,
            False,
            as_rational(lower, "lower"),
            as_rational(upper, "upper"),
            method,
            conditions,
        )

    def intersect(self, other: RLCT, joiner: str = "and") -> RLCT:
        """Two proven results on one λ, their bounds intersected (``self`` when it is exact)."""
        if self.exact:
            return self
        lower, upper = max(self.lower, other.lower), min(self.upper, other.upper)
        conditions = (*self.conditions, *other.conditions)
        return RLCT.bounds(lower, upper, f"{self.method}; {joiner} {other.method}", conditions)

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-able data (``json.dumps`` takes it as is): λ and its bounds as exact strings
        such as "3/4" (λ is None unless exact), m, the method, and each condition with its
        status "holds", "fails" or "undecided". :meth:`from_dict` reads it back."""
        return {
            "lam": rational_str(self.lam),
            "mult": self.mult,
            "exact": self.exact,
            "lower": rational_str(self.lower),
            "upper": rational_str(self.upper),
            "method": self.method,
            "conditions": [c.to_dict() for c in self.conditions],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> RLCT:
        """The inverse of :meth:`to_dict` (every field is validated again; strings such as
        "3/4" are read by the safe parser, never evaluated)."""
        if not isinstance(data, Mapping):
            raise InvalidTypeError(f"an RLCT must be read from a dict, got {data!r}")
        conditions = items(data.get("conditions", ()), "conditions", InvalidTypeError, "dicts")
        return cls(
            data.get("lam"),  # type: ignore[arg-type]
            data.get("mult"),  # type: ignore[arg-type]
            data.get("exact"),  # type: ignore[arg-type]
            data.get("lower"),  # type: ignore[arg-type]
            data.get("upper"),  # type: ignore[arg-type]
            data.get("method"),  # type: ignore[arg-type]
            tuple(Condition.from_dict(c) for c in conditions),  # type: ignore[arg-type]
        )

    @property
    def failed_conditions(self) -> tuple[Condition, ...]:
        """Conditions that fail or are undecided."""
        return tuple(c for c in self.conditions if c.status is not True)

    def __str__(self) -> str:
        if self.exact:
            head = f"λ = {self.lam}, m = {self.mult}"
        else:
            head = f"{self.lower} ≤ λ ≤ {self.upper} (not exact)"
        lines = [f"{head}  [{self.method}]"]
        lines += [f"  {c}" for c in self.conditions]
        return "\n".join(lines)


# A solver of an ideal: its generators and the prior's exponents h in, λ and m out.
Solve = Callable[[Sequence[sp.Poly], tuple[sp.Rational, ...]], RLCT]
