"""Statistics of the paper arms (issue 62): Welch comparisons at their true degrees of freedom,
an equivalence test (TOST) against a tolerance, and a one-way ANOVA across settings.

Every value here is a list of independent per-chain (per-run) estimates.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InvalidArgumentError
from .records import Record


@dataclass(frozen=True)
class WelchDiff(Record):
    """mean(a) − mean(b) with its Welch standard error, Welch–Satterthwaite df and two-sided p."""

    diff: float
    stderr: float
    df: float
    p: float

    def interval(self, level: float) -> tuple[float, float]:
        """The two-sided ``level`` confidence interval of the difference (t at ``df``)."""
        return t_interval(self.diff, self.stderr, self.df, level)


def t_interval(center: float, stderr: float, df: float, level: float) -> tuple[float, float]:
    """center ± t_{(1 + level)/2, df}·stderr: a two-sided Student-t interval."""
    from scipy import stats

    half = float(stats.t.ppf(0.5 + level / 2, df)) * stderr
    return center - half, center + half


def _values(name: str, values: Sequence[float]) -> np.ndarray:
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or x.size < 2 or not np.isfinite(x).all():
        raise InvalidArgumentError(f"{name} must list at least two finite values, got {values!r}")
    return x


def welch(a: Sequence[float], b: Sequence[float]) -> WelchDiff:
    """Welch's two-sample comparison of independent samples ``a`` and ``b``:
    se² = s_a²/n_a + s_b²/n_b, df = se⁴ / Σ (s_i²/n_i)²/(n_i − 1), t = diff/se."""
    from scipy import stats

    x, y = _values("a", a), _values("b", b)
    va, vb = x.var(ddof=1) / x.size, y.var(ddof=1) / y.size
    se = math.sqrt(va + vb)
    diff = float(x.mean() - y.mean())
    if se == 0:
        return WelchDiff(diff, 0.0, math.inf, 1.0 if diff == 0 else 0.0)
    df = (va + vb) ** 2 / (va**2 / (x.size - 1) + vb**2 / (y.size - 1))
    p = float(2 * stats.t.sf(abs(diff) / se, df))
    return WelchDiff(diff, se, float(df), p)


@dataclass(frozen=True)
class PairedDiff(Record):
    """mean(a) − mean(b) over the seeds in both, the standard error of the per-seed differences,
    the paired t at df = seeds − 1 and its two-sided p."""

    seeds: tuple[int, ...]
    mean_a: float
    mean_b: float
    diff: float
    stderr: float
    t: float
    p: float


def paired(a: Mapping[int, float], b: Mapping[int, float], what: str = "values") -> PairedDiff:
    """The paired t-test of a − b over the seeds run in both (each seed one initialisation)."""
    from scipy import stats

    seeds = tuple(sorted(set(a) & set(b)))
    if len(seeds) < 2:
        raise InvalidArgumentError(
            f"a paired test of {what} needs two or more seeds run in both arms, got {list(seeds)}"
        )
    x, y = np.array([a[k] for k in seeds]), np.array([b[k] for k in seeds])
    d = x - y
    res = stats.ttest_rel(x, y)
    se = float(d.std(ddof=1) / math.sqrt(d.size))
    return PairedDiff(
        seeds, float(x.mean()), float(y.mean()), float(d.mean()), se, float(res.statistic),
        float(res.pvalue),
    )  # fmt: skip


def equivalent(d: WelchDiff, tol: float, alpha: float = 0.05) -> bool:
    """TOST at level ``alpha``: the (1 − 2α) interval of the difference lies inside ±``tol``."""
    lo, hi = d.interval(1 - 2 * alpha)
    return -tol <= lo and hi <= tol


def anova_p(groups: Sequence[Sequence[float]]) -> float:
    """One-way ANOVA p-value: are the group means equal (independent values, equal variances)?"""
    from scipy import stats

    gs = [_values(f"group {i}", g) for i, g in enumerate(groups)]
    if len(gs) < 2:
        raise InvalidArgumentError("an ANOVA needs at least two groups")
    return float(stats.f_oneway(*gs).pvalue)


@dataclass(frozen=True)
class LogLogFit(Record):
    """The least-squares line log y = a + b·log x: slope b, its standard error and degrees of
    freedom (k − 2), the intercept a and the median of y/x."""

    slope: float
    stderr: float
    intercept: float
    df: int
    median_ratio: float

    def interval(self, level: float) -> tuple[float, float]:
        """The two-sided ``level`` confidence interval of the slope (t at ``df``)."""
        return t_interval(self.slope, self.stderr, self.df, level)


def loglog_fit(x: Sequence[float], y: Sequence[float]) -> LogLogFit:
    """Ordinary least squares of log y on log x (positive values, at least three with two or more
    distinct x): se(b)² = s²/Σ(log x − mean)², s² the residual variance at k − 2 df."""
    lx, ly = np.log(_values("x", x)), np.log(_values("y", y))
    if lx.size != ly.size or lx.size < 3 or not np.isfinite(lx).all() or not np.isfinite(ly).all():
        raise InvalidArgumentError("a log–log fit needs at least three pairs of positive values")
    sxx = float(((lx - lx.mean()) ** 2).sum())
    if sxx == 0:
        raise InvalidArgumentError("a log–log fit needs at least two distinct x")
    b = float(((lx - lx.mean()) * (ly - ly.mean())).sum() / sxx)
    a = float(ly.mean() - b * lx.mean())
    resid = ly - (a + b * lx)
    df = lx.size - 2
    se = math.sqrt(float((resid**2).sum()) / df / sxx)
    return LogLogFit(b, se, a, df, float(np.median(np.exp(ly - lx))))
