"""The local λ at a trained (float) factorisation of a linear network, through a numerical rank
decision (issue 64, item 4).

The local λ of a deep linear network at a factorisation (W_1, …, W_L) is decided by the ranks of
its partial products r(i, j) = rank(W_j⋯W_(i+1)) (``rlct.dln_local_lambda``, docs/exact/local.md).
Trained weights are floats, so those ranks are decided numerically: the singular values σ of each
partial product count when σ > ``rel_tol``·σ_max. **This step is a numerical rank decision, not an
exact computation**: the result holds for the chain with these ranks, and the singular-value gap
(the smallest kept σ over the largest dropped one, over every product; inf when none is dropped)
says how clear the decision was. From the ranks the chain's intervals follow
(:func:`verification.factorisations.intervals_of`), and from them an exact integer chain with the
same ranks (:func:`~verification.factorisations.chain`), where the closed form is exact.

A trained point has a positive training loss, so it lies on the zero set of its *own* product
(the true map it realises), not on the teacher's: the λ returned is the local λ of the network
whose true map is the trained product, with that product's decided rank.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from ..cases import FactorisedCase
from ..errors import InvalidArgumentError
from ..factorisations import chain, intervals_of
from .records import Record

__all__ = ["LocalRank", "local_rank"]

DEFAULT_REL_TOL = 1e-6


@dataclass(frozen=True)
class LocalRank(Record):
    """The numerical rank decision at a float factorisation and the closed form at those ranks.

    ``layer_ranks`` are the decided ranks of W_1, …, W_L, ``product_rank`` that of W_L⋯W_1;
    ``gap`` = min over partial products of (smallest kept σ)/(largest dropped σ);
    ``largest_dropped`` / ``smallest_kept`` the extremes of σ/σ_max over the products;
    ``lam`` (float), ``lam_exact`` (text), ``mult`` and ``exact`` from the closed form. Where
    the decided ranks are those of no chain (a product's σ near the threshold, no gap), ``lam``
    is NaN, ``exact`` False and ``lam_exact`` says so: the decision failed, nothing is computed."""

    rel_tol: float
    layer_ranks: str
    product_rank: int
    gap: float
    largest_dropped: float
    smallest_kept: float
    lam: float
    lam_exact: str
    mult: int
    exact: bool
    # the closed form's bounds (both λ where exact; NaN where the decision failed)
    lower: float = math.nan
    upper: float = math.nan


def local_rank(layers: Sequence[torch.Tensor], rel_tol: float = DEFAULT_REL_TOL) -> LocalRank:
    """Decide the ranks of every partial product of ``layers`` (W_1, …, W_L, input first,
    W_k of shape h_k × h_(k−1)) at σ > ``rel_tol``·σ_max and return the closed-form local λ
    at those ranks (module docstring)."""
    if not 0 < rel_tol < 1:
        raise InvalidArgumentError(f"rel_tol must lie in (0, 1), got {rel_tol}")
    ws = [torch.as_tensor(w).detach().to("cpu", torch.float64) for w in layers]
    if not ws or any(w.ndim != 2 for w in ws):
        raise InvalidArgumentError("layers must be a non-empty sequence of matrices")
    for k in range(1, len(ws)):
        if ws[k].shape[1] != ws[k - 1].shape[0]:
            raise InvalidArgumentError(
                f"layers[{k}] has {ws[k].shape[1]} columns, layers[{k - 1}] "
                f"{ws[k - 1].shape[0]} rows (input first)"
            )
    L = len(ws)
    widths = [ws[0].shape[1], *(w.shape[0] for w in ws)]
    ranks = {(i, i): widths[i] for i in range(L + 1)}
    gap, dropped_max, kept_min = math.inf, 0.0, 1.0
    for i in range(L):
        product = ws[i]
        for j in range(i + 1, L + 1):
            if j > i + 1:
                product = ws[j - 1] @ product
            s = torch.linalg.svdvals(product)
            top = float(s[0]) if s.numel() else 0.0
            rel = (s / top).tolist() if top > 0 else [0.0] * s.numel()
            kept = [x for x in rel if x > rel_tol]
            out = [x for x in rel if x <= rel_tol]
            ranks[(i, j)] = len(kept)
            if kept:
                kept_min = min(kept_min, kept[-1])
            if out:
                dropped_max = max(dropped_max, out[0])
                if kept:
                    gap = min(gap, kept[-1] / out[0] if out[0] > 0 else math.inf)
    common = dict(
        rel_tol=rel_tol,
        layer_ranks=",".join(str(ranks[(k, k + 1)]) for k in range(L)),
        product_rank=ranks[(0, L)],
        gap=gap,
        largest_dropped=dropped_max,
        smallest_kept=kept_min,
    )
    try:
        intervals = intervals_of(ranks, L)
    except InvalidArgumentError:  # no gap: the products' decisions contradict each other
        shown = ", ".join(f"r({i},{j}) = {v}" for (i, j), v in ranks.items() if i < j)
        why = f"no chain has the decided ranks {shown}: the decisions contradict each other"
        return LocalRank(**common, lam=math.nan, lam_exact=why, mult=0, exact=False)
    exact = FactorisedCase(chain(intervals, L)).exact()
    return LocalRank(
        **common,
        lam=float(exact.lam) if exact.exact else math.nan,
        lam_exact=str(exact.lam) if exact.exact else f"[{exact.lower}, {exact.upper}]",
        mult=int(exact.mult or 1) if exact.exact else 0,
        exact=bool(exact.exact),
        lower=float(exact.lam if exact.exact else exact.lower),
        upper=float(exact.lam if exact.exact else exact.upper),
    )
