"""Typed records of experiments: the claim checked, the numbers measured, and the verdict.

Every record is a frozen dataclass with ``to_dict()`` returning flat, JSON-able values (floats,
ints, strings, tuples of them), so ``pandas.DataFrame([r.to_dict() for r in records])`` or
``csv.DictWriter`` takes a list of them without custom parsing (``records_table`` does the first).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

Outcome = Literal["reproduced", "not reproduced", "reproduced after a correction", "inconclusive"]
OUTCOMES: tuple[Outcome, ...] = (
    "reproduced",
    "not reproduced",
    "reproduced after a correction",
    "inconclusive",
)


def _plain(value: Any) -> Any:
    """A JSON-able copy: numpy scalars to Python numbers, arrays and sequences to tuples."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return tuple(_plain(v) for v in value.tolist())
    if isinstance(value, list | tuple):
        return tuple(_plain(v) for v in value)
    return value


class Record:
    """Mixin of the records: ``to_dict`` flattens nested records into ``outer.inner`` keys."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if isinstance(value, Record):
                out.update({f"{f.name}.{k}": v for k, v in value.to_dict().items()})
            else:
                out[f.name] = _plain(value)
        return out


@dataclass(frozen=True)
class Claim(Record):
    """A published claim: the paper, where in it (figure or table) and what it states."""

    paper: str
    where: str
    statement: str


@dataclass(frozen=True)
class Measurement(Record):
    """A measured number with its standard error (nan when it has none)."""

    name: str
    value: float
    stderr: float = math.nan

    def __str__(self) -> str:
        if math.isnan(self.stderr):
            return f"{self.name} = {self.value:.4g}"
        return f"{self.name} = {self.value:.4g} ± {self.stderr:.2g}"


@dataclass(frozen=True)
class Verdict(Record):
    """The outcome of checking a claim, the numbers it rests on, and one plain sentence."""

    claim: Claim
    outcome: Outcome
    numbers: tuple[Measurement, ...]
    sentence: str

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"outcome {self.outcome!r} is not one of {OUTCOMES}")

    def to_dict(self) -> dict[str, Any]:
        out = {f"claim.{k}": v for k, v in self.claim.to_dict().items()}
        out["outcome"] = self.outcome
        out["sentence"] = self.sentence
        for m in self.numbers:
            out[m.name] = m.value
            out[f"{m.name}.stderr"] = m.stderr
        return out

    def __str__(self) -> str:
        nums = "; ".join(str(m) for m in self.numbers)
        return (
            f"{self.claim.paper}, {self.claim.where}: {self.outcome.upper()}.\n"
            f"{self.sentence}\n{nums}"
        )


def records_table(records: Iterable[Record]) -> Any:
    """A ``pandas.DataFrame`` with one row per record (pandas imported here, lazily)."""
    import pandas as pd

    return pd.DataFrame([r.to_dict() for r in records])


def z_score(a: float, sa: float, b: float, sb: float) -> float:
    """(a − b)/√(sa² + sb²), the difference of two independent estimates in standard errors."""
    return (a - b) / math.hypot(sa, sb)


def mean_stderr(values: Sequence[float]) -> tuple[float, float]:
    """The mean of independent values and its standard error (nan with fewer than two)."""
    x = np.asarray(values, dtype=np.float64)
    se = float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else math.nan
    return float(x.mean()), se
