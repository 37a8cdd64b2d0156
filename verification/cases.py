"""Named verification cases: a model, the exact answer it must have, and how to build it.

A case is a frozen dataclass. Potential cases (normal crossing, Newton polynomials) expose the
population loss K as a sympy expression; regression cases (reduced rank regression, deep linear
networks) expose their shapes and true rank. The torch side (:mod:`verification.models`) turns
either into something :mod:`numeric` can sample.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import sympy as sp

import rlct
from rlct import RLCT


@dataclass(frozen=True)
class PotentialCase:
    """K(w) ≥ 0 with K(0) = 0, prior Π|w_j|^(h_j), and its exact λ, m at w* = 0.

    ``expected`` is derived independently of :mod:`rlct` (by construction); ``degenerate`` marks a
    K whose Newton polyhedron is degenerate in the coordinates it is written in (the Newton step
    alone gives only the bound ``newton_upper``; the exact value comes from a resolution or a change
    of coordinates).
    """

    name: str
    K: sp.Expr
    variables: tuple[sp.Symbol, ...]
    prior: tuple[sp.Rational, ...]
    expected_lam: sp.Rational | None
    expected_mult: int | None
    degenerate: bool = False
    newton_upper: sp.Rational | None = None

    @property
    def dim(self) -> int:
        return len(self.variables)

    def exact(self) -> RLCT:
        """The exact side as the package computes it (Newton polyhedron)."""
        return rlct.from_polynomial(self.K, self.variables, self.prior)


def network_dim(widths: tuple[int, ...]) -> int:
    """Parameters of a linear network with these widths (input first): Σ h_(k−1)·h_k."""
    return sum(a * b for a, b in itertools.pairwise(widths))


@dataclass(frozen=True)
class RRRCase:
    """Reduced rank regression y = BAx (A: H×M, B: N×H) with a true map of rank r."""

    M: int
    N: int
    H: int
    r: int

    @property
    def name(self) -> str:
        return f"rrr(M={self.M},N={self.N},H={self.H},r={self.r})"

    @property
    def widths(self) -> tuple[int, ...]:
        return (self.M, self.H, self.N)

    @property
    def dim(self) -> int:
        """The number of parameters: Σ h_(k−1)·h_k over the layers."""
        return network_dim(self.widths)

    def exact(self) -> RLCT:
        return rlct.reduced_rank_regression(self.M, self.N, self.H, self.r)


@dataclass(frozen=True)
class DLNCase:
    """Deep linear network f = W_L⋯W_1 x, widths input → output, true map of rank r."""

    widths: tuple[int, ...]
    r: int
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def dim(self) -> int:
        """The number of parameters: Σ h_(k−1)·h_k over the layers."""
        return network_dim(self.widths)

    @property
    def name(self) -> str:
        return f"dln({'-'.join(map(str, self.widths))},r={self.r})"

    def exact(self) -> RLCT:
        return rlct.deep_linear_network(list(self.widths), self.r)


@dataclass(frozen=True)
class QuadraticCase:
    """A two-layer quadratic network f(x) = V (Wᵀx)² at the point (W, V), optional data X.

    ``kind`` names how the point was drawn: "generic" (random integers: the rank is the generic
    rank with probability one), or a special point where the rank can drop: "inactive unit"
    (v_:j = 0), "zero feature" (w_j = 0), "parallel features" (w_2 = 2·w_1).
    """

    W: tuple[tuple[int, ...], ...]
    V: tuple[tuple[int, ...], ...]
    X: tuple[tuple[int, ...], ...] | None
    kind: str
    data: str = "none"

    @property
    def shape(self) -> tuple[int, int, int]:
        return len(self.W), len(self.V), len(self.W[0])

    @property
    def name(self) -> str:
        d, p, K = self.shape
        return f"quadratic(d={d},p={p},K={K}, {self.kind}, data: {self.data})"

    def exact(self, search_seconds: float = 10.0) -> RLCT:
        """λ at the teacher (``search_seconds``: the exact layer's limit at a rank drop)."""
        return rlct.quadratic_llc(self.W, self.V, self.X, search_seconds=search_seconds)


@dataclass(frozen=True)
class FactorisedCase:
    """A linear network at the factorisation ``layers`` = (W_1, …, W_L) (input first, integer
    matrices, W_k of shape h_k × h_(k−1)) of its true map W* = W_L⋯W_1: a point of the zero set,
    not only the origin. Its local λ (``exact``: ``rlct.rrr_local_lambda`` for L = 2,
    ``rlct.dln_local_lambda`` otherwise) can exceed the global one (``global_exact``: Aoyagi's
    at rank W*). ``label`` says how the point was chosen (an inactive unit, ...)."""

    layers: tuple[tuple[tuple[int, ...], ...], ...]
    label: str = ""

    def __post_init__(self) -> None:
        from .errors import InvalidArgumentError, InvalidTypeError

        if not self.layers or any(not w or not w[0] for w in self.layers):
            raise InvalidArgumentError("layers must be non-empty integer matrices")
        for k, w in enumerate(self.layers):
            if any(len(row) != len(w[0]) for row in w):
                raise InvalidArgumentError(f"layers[{k}] has rows of different lengths")
            if not all(type(x) is int for row in w for x in row):
                raise InvalidTypeError(f"layers[{k}] must hold Python ints (exact products)")
            if k and len(w[0]) != len(self.layers[k - 1]):
                raise InvalidArgumentError(
                    f"layers[{k}] has {len(w[0])} columns, layers[{k - 1}] {len(self.layers[k - 1])}"
                    " rows (layers are listed input first)"
                )

    @property
    def widths(self) -> tuple[int, ...]:
        return (len(self.layers[0][0]), *(len(w) for w in self.layers))

    @property
    def dim(self) -> int:
        """The number of parameters: Σ h_(k−1)·h_k over the layers."""
        return network_dim(self.widths)

    def _matrices(self) -> list[sp.Matrix]:
        return [sp.Matrix(w) for w in self.layers]

    @property
    def true_map(self) -> sp.Matrix:
        out = sp.Matrix(self.layers[0])
        for w in self.layers[1:]:
            out = sp.Matrix(w) * out
        return out

    @property
    def r(self) -> int:
        return int(self.true_map.rank())

    @property
    def layer_ranks(self) -> tuple[int, ...]:
        return tuple(int(m.rank()) for m in self._matrices())

    @property
    def name(self) -> str:
        ranks = ",".join(map(str, self.layer_ranks))
        if len(self.layers) == 2:
            M, H, N = self.widths
            base = f"rrr(M={M},N={N},H={H},r={self.r}) at rank A, B = {ranks}"
        else:
            base = f"dln({'-'.join(map(str, self.widths))},r={self.r}) at layer ranks {ranks}"
        return f"{base} ({self.label})" if self.label else base

    def exact(self) -> RLCT:
        """The local λ and m at this factorisation (docs/exact/local.md)."""
        if len(self.layers) == 2:
            return rlct.rrr_local_lambda(*self.layers)
        return rlct.dln_local_lambda(list(self.layers))

    def global_exact(self) -> RLCT:
        """λ and m at the origin of the same network and rank (the global ones)."""
        return rlct.deep_linear_network(list(self.widths), self.r)
