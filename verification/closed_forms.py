"""Published closed forms checked against exact computations, with the smallest counterexample.

Checks (each over every shape of a grid, smallest first, so the first disagreement found is the
smallest counterexample by total size):

* ``rrr = dln``: Aoyagi–Watanabe reduced rank regression against Aoyagi's deep linear network
  with two layers (the same model).
* ``rrr full rank``: at a true map of full rank r = min(M, N, H), λ = rank J/2 for the Jacobian J
  of (A, B) ↦ BA at a random integer point, certified maximal (hence locally constant) when it
  reaches its upper bound min(MN, H(M+N) − H²) (the GL(H) symmetry removes H² directions).
* ``dln chain of ones``: widths all 1 is the normal crossing Π w_j², λ = 1/2, m = L.
* ``dln ideal``: every deep linear network with at most min(2·max_size,
  ``REPORT_IDEAL_PARAMETERS``) parameters (``check_dln_ideals`` alone: up to
  ``MAX_IDEAL_PARAMETERS``), at every true rank r, against ``rlct.from_ideal`` of the
  entries of P(w) − P(w*) (P the product of the layers), at the true parameter w* whose layers
  are all diag(1, …, 1, 0, …, 0) of rank r.
* quadratic networks: every theorem of Cullen et al. whose hypotheses hold at a generic point,
  against exact Jacobian ranks (:func:`rlct.check_theorems`), without data, on random integer
  inputs and on modular addition.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import flint
import sympy as sp

import rlct

from ._validate import check_int

MAX_SIZE = 10  # the grid holds max_size³ shapes; at 10 the checks take seconds
MAX_IDEAL_PARAMETERS = 10  # deep linear networks solved exactly as ideals (about 2.5 min for all)
REPORT_IDEAL_PARAMETERS = 8  # the report's share of them (about 13 s)

__all__ = ["ClosedFormCheck", "ClosedFormSummary", "check_closed_forms", "check_dln_ideals"]


@dataclass(frozen=True)
class ClosedFormCheck:
    """One formula at one shape: its value, the exact value, and whether they agree."""

    formula: str
    case: str
    formula_value: str
    exact_value: str
    agree: bool | None  # None: the exact side is a bound that contains the claim

    def to_dict(self) -> dict[str, object]:
        """Plain data: the formula, the shape, both values as exact text, the verdict."""
        return {
            "formula": self.formula,
            "case": self.case,
            "formula_value": self.formula_value,
            "exact_value": self.exact_value,
            "agree": self.agree,
        }


@dataclass(frozen=True)
class ClosedFormSummary:
    """All shapes of one formula: how many were checked, how many disagree, the smallest one."""

    formula: str
    checked: int
    disagreements: int
    undecided: int
    smallest_counterexample: ClosedFormCheck | None
    checks: tuple[ClosedFormCheck, ...]

    def to_dict(self) -> dict[str, object]:
        """Plain data, every check included (JSON-able)."""
        c = self.smallest_counterexample
        return {
            "formula": self.formula,
            "checked": self.checked,
            "disagreements": self.disagreements,
            "undecided": self.undecided,
            "smallest_counterexample": None if c is None else c.to_dict(),
            "checks": [x.to_dict() for x in self.checks],
        }


def _rrr_jacobian_rank(M: int, N: int, H: int, rng: random.Random) -> int:
    """Exact rank of d(BA) = dB·A + B·dA at a random integer point (A: H×M, B: N×H)."""
    A = [[rng.randint(-9, 9) for _ in range(M)] for _ in range(H)]
    B = [[rng.randint(-9, 9) for _ in range(H)] for _ in range(N)]
    rows = []
    for i, j in itertools.product(range(N), range(M)):  # entry (BA)_ij = Σ_h B_ih A_hj
        dA = [B[i][h] if jj == j else 0 for h in range(H) for jj in range(M)]
        dB = [A[h][j] if ii == i else 0 for ii in range(N) for h in range(H)]
        rows.append(dA + dB)
    return int(flint.fmpz_mat(rows).rank())


def _rrr_full_rank(M: int, N: int, H: int, rng: random.Random) -> ClosedFormCheck:
    r = min(M, N, H)
    formula = rlct.reduced_rank_regression(M, N, H, r).lam
    rank = _rrr_jacobian_rank(M, N, H, rng)
    bound = min(M * N, H * (M + N) - H * H) if H <= min(M, N) else M * N
    # λ = rank/2 holds only when the random point certifies maximal (so locally constant) rank.
    certified = rank == bound
    exact = str(sp.Rational(rank, 2)) if certified else f"rank {rank} < bound {bound}"
    return ClosedFormCheck(
        "Aoyagi–Watanabe RRR at full rank vs Jacobian rank",
        f"M={M}, N={N}, H={H}, r={r}",
        str(formula),
        exact,
        formula == sp.Rational(rank, 2) if certified else None,
    )


def _rrr_vs_dln(M: int, N: int, H: int, r: int) -> ClosedFormCheck:
    a = rlct.reduced_rank_regression(M, N, H, r)
    b = rlct.deep_linear_network([M, H, N], r)
    return ClosedFormCheck(
        "Aoyagi 2024 DLN (2 layers) vs Aoyagi–Watanabe RRR",
        f"M={M}, N={N}, H={H}, r={r}",
        f"{b.lam} (m={b.mult})",
        f"{a.lam} (m={a.mult})",
        (a.lam, a.mult) == (b.lam, b.mult),
    )


def _dln_ones(L: int) -> ClosedFormCheck:
    b = rlct.deep_linear_network([1] * (L + 1), 0)
    nc = rlct.normal_crossing([1] * L)
    return ClosedFormCheck(
        "Aoyagi 2024 DLN with unit widths vs normal crossing",
        f"L={L}",
        f"{b.lam} (m={b.mult})",
        f"{nc.lam} (m={nc.mult})",
        (b.lam, b.mult) == (nc.lam, nc.mult),
    )


def _dln_shapes(max_params: int) -> list[tuple[int, ...]]:
    """Widths (input first) with at least two layers and 2..``max_params`` parameters, smallest
    first (sorted by size, then widths): extended one width at a time while the size allows."""
    shapes = []
    stack = [((a,), 0) for a in range(1, max_params + 1)]
    while stack:
        widths, size = stack.pop()
        if len(widths) >= 3:
            shapes.append((size, widths))
        for b in range(1, (max_params - size) // widths[-1] + 1):
            stack.append(((*widths, b), size + widths[-1] * b))
    return [w for _, w in sorted(shapes)]


def dln_ideal(widths: Sequence[int], r: int) -> tuple[list[sp.Expr], list[sp.Symbol]]:
    """The non-zero entries of P(w) − P(w*) in the shifts w − w* (w* as in the module docstring;
    layer k maps width k to width k + 1, its entries named w{k}_{i}{j}), and those names."""
    product = star = sp.eye(widths[0])
    names = []
    for k, (a, b) in enumerate(itertools.pairwise(widths)):
        layer = sp.Matrix(b, a, lambda i, j, k=k: sp.Symbol(f"w{k}_{i}{j}"))
        true = sp.Matrix(b, a, lambda i, j: 1 if i == j < r else 0)
        names += list(layer)
        product, star = (layer + true) * product, true * star
    return [e for e in (sp.expand(x) for x in product - star) if e != 0], names


def _dln_ideal(widths: tuple[int, ...], r: int) -> ClosedFormCheck:
    """The closed form against the exact λ of ⟨entries of P(w) − P(w*)⟩ (:func:`dln_ideal`)."""
    exact = rlct.from_ideal(*dln_ideal(widths, r))
    formula = rlct.deep_linear_network(list(widths), r)
    if exact.exact:
        shown = f"{exact.lam} (m={exact.mult})"
        agree = (exact.lam, exact.mult) == (formula.lam, formula.mult)
    else:
        shown = f"{exact.lower} ≤ λ ≤ {exact.upper}"
        agree = None if exact.lower <= formula.lam <= exact.upper else False
    return ClosedFormCheck(
        "Aoyagi 2024 DLN vs the exact λ of its ideal",
        f"widths={list(widths)}, r={r}",
        f"{formula.lam} (m={formula.mult})",
        shown,
        agree,
    )


def check_dln_ideals(max_params: int = MAX_IDEAL_PARAMETERS) -> ClosedFormSummary:
    """Aoyagi's deep linear network formula against ``rlct.from_ideal`` of the network's ideal,
    every shape with 2..``max_params`` parameters (at most ``MAX_IDEAL_PARAMETERS``) at every
    true rank, smallest first (module docstring)."""
    max_params = check_int("max_params", max_params, 2, MAX_IDEAL_PARAMETERS)
    return _summarise(
        "Aoyagi 2024 DLN vs the exact λ of its ideal",
        (_dln_ideal(w, r) for w in _dln_shapes(max_params) for r in range(min(w) + 1)),
    )


def _summarise(formula: str, checks: Iterable[ClosedFormCheck]) -> ClosedFormSummary:
    checks = tuple(checks)
    bad = [c for c in checks if c.agree is False]
    undecided = sum(c.agree is None for c in checks)
    return ClosedFormSummary(
        formula, len(checks), len(bad), undecided, bad[0] if bad else None, checks
    )


def _quadratic_data(d: int, seed: int) -> list[tuple[str, object]]:
    """Data-free, random integer inputs (n = d + 2) and, when d is even, modular addition."""
    rng = random.Random(seed * 1000 + d)
    out: list[tuple[str, object]] = [("no data", None)]
    out.append(("random X", [[rng.randint(-3, 3) for _ in range(d)] for _ in range(d + 2)]))
    if d % 2 == 0 and d >= 4:
        out.append((f"modular addition q={d // 2}", rlct.modular_addition_data(d // 2)[0]))
    return out


def _quadratic_summaries(max_d: int, seed: int) -> list[ClosedFormSummary]:
    """Every theorem of Cullen et al. at generic points of each shape, smallest shapes first."""
    shapes = sorted(
        (
            (d, p, K)
            for d in range(1, max_d + 1)
            for p in range(1, 4)
            for K in range(1, d * (d + 1) // 2 + 2)
        ),
        key=lambda s: (sum(s), s),
    )
    by_theorem: dict[str, list[ClosedFormCheck]] = {}
    for d, p, K in shapes:
        for label, X in _quadratic_data(d, seed):
            for rec in rlct.check_theorems(d, p, K, X=X, seed=seed):
                if rec.hypotheses_hold is not True:
                    continue
                claim = (
                    str(rec.formula_lower)
                    if rec.formula_lower == rec.formula_upper
                    else f"[{rec.formula_lower}, {rec.formula_upper}]"
                )
                exact = (
                    str(rec.exact_lam)
                    if rec.exact_lam is not None
                    else f"[{rec.exact_lower}, {rec.exact_upper}]"
                )
                by_theorem.setdefault(rec.theorem, []).append(
                    ClosedFormCheck(
                        f"Cullen et al. {rec.theorem} vs exact Jacobian rank",
                        f"d={d}, p={p}, K={K}, {label}",
                        claim,
                        exact,
                        rec.agree,
                    )
                )
    return [
        _summarise(f"Cullen et al. {name} vs exact Jacobian rank", checks)
        for name, checks in sorted(by_theorem.items())
    ]


def check_closed_forms(max_size: int = 5, seed: int = 0) -> tuple[ClosedFormSummary, ...]:
    """Run every closed-form check over shapes up to ``max_size`` (1 to 10); smallest first."""
    max_size = check_int("max_size", max_size, 1, MAX_SIZE)
    seed = check_int("seed", seed, 0)
    rng = random.Random(seed)
    grid = sorted(itertools.product(range(1, max_size + 1), repeat=3), key=lambda s: (sum(s), s))
    out = [
        _summarise(
            "Aoyagi 2024 DLN (2 layers) vs Aoyagi–Watanabe RRR",
            (_rrr_vs_dln(M, N, H, r) for M, N, H in grid for r in range(min(M, N, H) + 1)),
        ),
        _summarise(
            "Aoyagi–Watanabe RRR at full rank vs Jacobian rank",
            (_rrr_full_rank(M, N, H, rng) for M, N, H in grid),
        ),
        _summarise(
            "Aoyagi 2024 DLN with unit widths vs normal crossing",
            (_dln_ones(L) for L in range(1, 2 * max_size + 1)),
        ),
    ]
    out.append(check_dln_ideals(min(2 * max_size, REPORT_IDEAL_PARAMETERS)))
    out += _quadratic_summaries(min(max_size, 4), seed)
    return tuple(out)
