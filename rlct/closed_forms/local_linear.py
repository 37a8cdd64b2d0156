"""The local λ of a linear network at any factorisation of its true map (docs/exact/local.md).

A deep linear network f = W_L ⋯ W_1 x (layers listed input first, W_k: h_{k−1} → h_k) with
identity input covariance has K(W) = ‖W_L ⋯ W_1 − W*‖²_F (reduced rank regression is L = 2:
(W_1, W_2) = (A, B)). At a point W° with W_L° ⋯ W_1° = W* of rank r the local λ follows from
three reductions, each a local analytic change of coordinates with free directions split off:

1. *Full part* (Lemma 1). K ≍ Σ u_i² + ‖V_L ⋯ V_1‖² in independent coordinates, with
   r(M + N − r) coordinates u_i and the V_k near V_k°: W_k° restricted to the complements
   C_k = {x : W*ᵀ W_L⋯W_{k+1} x = 0} (widths h_k − r), whose product is 0. So
   λ = r(M + N − r)/2 + λ(V°), m = m(V°); when some h_k = r the second term is absent (m = 1).
2. *Merges* (Lemma 2). If V_k° is injective and space k is hidden, or surjective and space
   k − 1 is hidden, layers k and k ± 1 become one layer V_{k+1}°V_k° (or V_k°V_{k−1}°): same λ, m.
   An injective last layer or a surjective first layer is dropped: ‖V_L C‖² ≍ ‖C‖².
3. *Two layers at product 0* (Lemma 3). With a = rank V_1°, b = rank V_2°:
   λ = (aN' + bM' − ab)/2 + λ_RRR(M' − a, N' − b, H' − a − b; r = 0) (Aoyagi–Watanabe), m its m.

Also exact: every V_k° = 0 after step 1 (λ(V°) = Aoyagi's λ at rank 0). Any other case (three
or more layers left, not all zero) gives bounds: global λ of the reduced network ≤ λ(V°) ≤ half
its number of parameters, with ``exact=False``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from .._validate import items
from ..algebra.ranks import rational_rank
from ..errors import InvalidShapeError, InvalidTypeError
from ..result import RLCT, Condition, as_rational
from .literature import deep_linear_network, reduced_rank_regression

__all__ = ["dln_local_lambda", "rrr_local_lambda"]


def _matrix(value: object, name: str) -> sp.Matrix:
    """An exact rational matrix (sympy Matrix or nested sequences; floats refused)."""
    if isinstance(value, sp.MatrixBase):
        rows = value.tolist()
    else:
        rows = [
            items(r, f"{name} row", InvalidTypeError, "numbers")
            for r in items(value, name, InvalidTypeError, "rows")
        ]
    if not rows or not rows[0]:
        raise InvalidShapeError(f"{name} is empty: a layer needs at least one row and column")
    if any(len(r) != len(rows[0]) for r in rows):
        raise InvalidShapeError(f"{name} has rows of different lengths")
    return sp.Matrix(
        [[as_rational(v, f"{name}[{i}][{j}]") for j, v in enumerate(r)] for i, r in enumerate(rows)]
    )


def _layers(layers: object) -> list[sp.Matrix]:
    entries = items(layers, "layers", InvalidTypeError, "matrices")
    if not entries:
        raise InvalidShapeError("layers is empty: a network needs at least one layer")
    ws = [_matrix(w, f"layers[{k}]") for k, w in enumerate(entries)]
    for k in range(1, len(ws)):
        if ws[k].cols != ws[k - 1].rows:
            raise InvalidShapeError(
                f"layers[{k}] has {ws[k].cols} columns but layers[{k - 1}] has {ws[k - 1].rows} "
                "rows (layers are listed input first: W_k maps width h_(k−1) to h_k)"
            )
    return ws


def _product(ws: Sequence[sp.Matrix]) -> sp.Matrix:
    out = ws[0]
    for w in ws[1:]:
        out = w * out
    return out


def _widths(ws: Sequence[sp.Matrix]) -> list[int]:
    return [ws[0].cols, *(w.rows for w in ws)]


def _rank(m: sp.Matrix) -> int:
    """Exact rank over Q (``rlct.algebra.ranks.rational_rank``: denominators cleared, FLINT)."""
    return 0 if 0 in m.shape else rational_rank(m.tolist())


def _basis(vectors: list[sp.Matrix], size: int) -> sp.Matrix:
    return sp.Matrix.hstack(*vectors) if vectors else sp.zeros(size, 0)


def split_full_part(ws: Sequence[sp.Matrix]) -> tuple[int, list[sp.Matrix] | None]:
    """Lemma 1: (r, V°): r = rank of the product P and the layers restricted to the complements
    C_k = null(Pᵀ W_L⋯W_{k+1}) (widths h_k − r), or None when some h_k = r. In the bases
    [W_k⋯W_1 S | C_k] (S = col Pᵀ) every layer is block-diagonal diag(G_k, V_k), G_k invertible."""
    P = _product(ws)
    r = _rank(P)
    hs = _widths(ws)
    if r == min(hs):
        return r, None
    if r == 0:
        return 0, list(ws)
    S = _basis(P.T.columnspace(), hs[0])
    bases, through = [], S
    for k, h in enumerate(hs):
        after = _product(ws[k:]) if k < len(ws) else sp.eye(h)
        if k > 0:
            through = ws[k - 1] * through
        C = _basis((P.T * after).nullspace(), h)
        bases.append(sp.Matrix.hstack(through, C))
    vs = []
    for k, w in enumerate(ws):
        block = bases[k + 1].inv() * w * bases[k]
        # block[:r, r:] and block[r:, :r] are 0 (docs/exact/local.md, proof of 1)
        vs.append(block[r:, r:])
    return r, vs


def merge_layers(vs: Sequence[sp.Matrix]) -> tuple[list[sp.Matrix], list[str]]:
    """Lemma 2, repeated, for layers whose product is 0: an injective layer k before a hidden
    space k merges into layer k + 1, a surjective layer k after a hidden space k − 1 merges into
    layer k − 1 (the merged layer is the product); an injective last layer or a surjective first
    one is dropped (K ≍ K without it); returns the layers left and one line per step."""
    vs, notes = list(vs), []
    changed = True
    while changed and len(vs) > 1:
        changed = False
        for k, v in enumerate(vs):
            rank = _rank(v)
            if rank == v.cols and k < len(vs) - 1:
                notes.append(f"layer {k + 1} of {len(vs)} injective (rank {rank}): merged forward")
                vs[k : k + 2] = [vs[k + 1] * v]
            elif rank == v.rows and k > 0:
                notes.append(f"layer {k + 1} of {len(vs)} surjective (rank {rank}): merged back")
                vs[k - 1 : k + 1] = [v * vs[k - 1]]
            elif rank == v.cols and k == len(vs) - 1:
                notes.append(f"last layer injective (rank {rank}): ‖V_L·C‖² ≍ ‖C‖², dropped")
                vs.pop()
            elif rank == v.rows and k == 0:
                notes.append(f"first layer surjective (rank {rank}): ‖C·V_1‖² ≍ ‖C‖², dropped")
                vs.pop(0)
            else:
                continue
            changed = True
            break
    return vs, notes


def _rrr_origin(M: int, N: int, H: int) -> tuple[sp.Rational, int, str]:
    """λ, m of ‖BA‖² at A = B = 0 (Aoyagi–Watanabe, r = 0); a zero width: K ≡ 0, nothing added."""
    if min(M, N, H) == 0:
        return sp.Integer(0), 1, f"a zero width in (M, N, H) = ({M}, {N}, {H}): K ≡ 0 there"
    res = reduced_rank_regression(M, N, H, 0)
    return res.lam, res.mult, f"RRR at the origin (M, N, H) = ({M}, {N}, {H}): {res.method}"


def _two_layers_at_zero(v1: sp.Matrix, v2: sp.Matrix) -> tuple[sp.Rational, int, str]:
    """Lemma 3 for ‖V_2 V_1‖² at V° with V_2°V_1° = 0."""
    M, H, N = v1.cols, v1.rows, v2.rows
    a, b = _rank(v1), _rank(v2)
    lam, mult, note = _rrr_origin(M - a, N - b, H - a - b)
    regular = a * N + b * M - a * b
    text = f"two layers at product 0, ranks a = {a}, b = {b}: (aN+bM−ab)/2 = {regular}/2 + {note}"
    return sp.Rational(regular, 2) + lam, mult, text


def dln_local_lambda(layers: Sequence[object]) -> RLCT:
    """λ and m of K = ‖W_L⋯W_1 − W*‖²_F at the factorisation ``layers`` = (W_1, …, W_L)
    (input first, exact rational matrices) of W* = W_L⋯W_1, by the reductions of the module
    docstring (proofs in docs/exact/local.md); bounds with ``exact=False`` where they leave
    three or more non-zero layers."""
    ws = _layers(layers)
    hs = _widths(ws)
    M, N = hs[0], hs[-1]
    r, vs = split_full_part(ws)
    base = sp.Rational(r * (M + N - r), 2)
    conds = [Condition(f"widths {hs} (input first), rank W* = r = {r}: r(M+N−r)/2 = {base}", True)]
    if vs is None:
        conds.append(Condition(f"r = min(widths) = {r}: the product is a submersion", True))
        return RLCT.exact_value(base, 1, "local linear network: rank W* = min width", conds)
    vs, notes = merge_layers(vs)
    conds += [Condition(n, True) for n in notes]
    reduced = _widths(vs)
    conds.append(Condition(f"reduced network at product 0: widths {reduced}", True))
    if len(vs) == 1:
        lam, mult, note = sp.Rational(reduced[0] * reduced[1], 2), 1, "one layer: regular"
    elif len(vs) == 2:
        lam, mult, note = _two_layers_at_zero(vs[0], vs[1])
    elif all(v.is_zero_matrix for v in vs):
        res = deep_linear_network(reduced, 0)
        lam, mult, note = res.lam, res.mult, f"origin of the reduced network: {res.method}"
    else:
        ranks = [_rank(v) for v in vs]
        low = deep_linear_network(reduced, 0).lam
        size = sum(v.rows * v.cols for v in vs)
        conds.append(
            Condition(
                f"λ of the reduced network at layer ranks {ranks}: only its global λ {low} "
                f"(Aoyagi, a lower bound) and {size}/2 (its parameters) are proven",
                None,
            )
        )
        method = "local linear network: full part, merges; the rest bounded"
        return RLCT.bounds(base + low, base + sp.Rational(size, 2), method, conds)
    conds.append(Condition(note, True))
    method = f"local linear network: r(M+N−r)/2 + {note}"
    return RLCT.exact_value(base + lam, mult, method, conds)


def rrr_local_lambda(A: object, B: object) -> RLCT:
    """λ and m of K = ‖BA − W*‖²_F (A: H×M, B: N×H) at the factorisation W* = B A:

        λ = (aN + bM − ab)/2 + λ_RRR(M − a, N − b, H − a − b + r; rank 0),   m = its m,

    with a = rank A, b = rank B, r = rank BA; aN + bM − ab is the rank of the differential
    (dA, dB) ↦ B·dA + dB·A, and a zero width in the second term means it is 0 with m = 1."""
    Am, Bm = _layers([A, B])
    M, H, N = Am.cols, Am.rows, Bm.rows
    a, b, r = _rank(Am), _rank(Bm), _rank(Bm * Am)
    lam, mult, note = _rrr_origin(M - a, N - b, H - a - b + r)
    regular = a * N + b * M - a * b
    conds = (
        Condition(f"(M, N, H) = ({M}, {N}, {H}); rank A = {a}, rank B = {b}, rank BA = {r}", True),
        Condition(f"rank of (dA, dB) ↦ B·dA + dB·A: aN + bM − ab = {regular}", True),
        Condition(note, True),
    )
    method = f"local RRR: (aN+bM−ab)/2 + {note}"
    return RLCT.exact_value(sp.Rational(regular, 2) + lam, mult, method, conds)
