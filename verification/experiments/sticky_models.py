"""Models linear in the data and polynomial in the parameters, SGD on many trajectories at once.

Seed 004 ("degeneracies are sticky for SGD"): y = Q(w)·x + ε with x, ε ~ N(0, 1) and truth Q = 0
(y independent of x), per-sample loss ℓ(w; x, y) = (x·Q(w) − y)² (torch's ``MSELoss``, as in the
authors' code). Then L(w) = E ℓ = Q(w)² + 1, so K(w) = Q(w)². On a data set of n pairs,

    L_n(w) = a·Q² − 2b·Q + c,   a = mean x², b = mean x·y, c = mean y²,

and a minibatch B has its own (a_B, b_B): ∇L_B(w) = 2(a_B·Q − b_B)·∇Q. Batches are drawn
uniformly with replacement, independently per trajectory and step (the authors shuffle epochs;
for B ≪ n the difference is immaterial and with-replacement draws make the noise covariance
exactly Cov_i(∇ℓ_i)/B).

Two families:

* ``Poly1D``: Q(w) = (w + w₀)^d₁ (w − w₀)^d₂, K has minima at −w₀ (λ = 1/(2d₁)) and +w₀
  (λ = 1/(2d₂)) separated by the maximum of K at Q'(w) = 0, w_b = w₀(d₁ − d₂)/(d₁ + d₂).
* ``Poly2D``: Q(w) = (w₁² + w₂²)² w₁^d, K = (w₁² + w₂²)⁴ w₁^(2d): zero on the line w₁ = 0, with
  λ = 1/(2d) on the line away from the origin and λ = 1/(4 + d) at the origin (``exact_lambdas``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import sympy as sp
import torch
from torch import Tensor

import rlct

from .records import Record

DTYPE = torch.float64


@dataclass(frozen=True)
class Poly1D(Record):
    """Q(w) = (w + w₀)^d₁ (w − w₀)^d₂ on w ∈ R."""

    w0: float
    d1: int
    d2: int

    def __post_init__(self) -> None:
        if not (self.w0 > 0 and self.d1 >= 1 and self.d2 >= 1):
            raise ValueError(f"need w0 > 0 and d1, d2 ≥ 1, got {self}")

    @property
    def dim(self) -> int:
        return 1

    @property
    def barrier(self) -> float:
        """w_b, where Q' = 0 between the minima (the maximum of K)."""
        return self.w0 * (self.d1 - self.d2) / (self.d1 + self.d2)

    @property
    def minima(self) -> tuple[tuple[float, ...], ...]:
        return ((-self.w0,), (self.w0,))

    def q(self, w: Tensor) -> Tensor:
        """Q at w [..., 1] → [...]."""
        u = w[..., 0]
        return (u + self.w0) ** self.d1 * (u - self.w0) ** self.d2

    def grad_q(self, w: Tensor) -> Tensor:
        """∇Q [..., 1]."""
        u, a, b = w[..., 0], self.d1, self.d2
        g = a * (u + self.w0) ** (a - 1) * (u - self.w0) ** b + b * (u + self.w0) ** a * (
            u - self.w0
        ) ** (b - 1)
        return g[..., None]

    def q_symbolic(self, w: Sequence[sp.Symbol]) -> sp.Expr:
        w0 = sp.Rational(Fraction(self.w0))
        return (w[0] + w0) ** self.d1 * (w[0] - w0) ** self.d2


@dataclass(frozen=True)
class Poly2D(Record):
    """Q(w) = (w₁² + w₂²)² w₁^d on w ∈ R²."""

    d: int

    def __post_init__(self) -> None:
        if self.d < 1:
            raise ValueError(f"need d ≥ 1, got {self.d}")

    @property
    def dim(self) -> int:
        return 2

    def q(self, w: Tensor) -> Tensor:
        r2 = w[..., 0] ** 2 + w[..., 1] ** 2
        return r2**2 * w[..., 0] ** self.d

    def grad_q(self, w: Tensor) -> Tensor:
        w1, w2 = w[..., 0], w[..., 1]
        r2 = w1**2 + w2**2
        g1 = 4 * w1 * r2 * w1**self.d + self.d * r2**2 * w1 ** (self.d - 1)
        g2 = 4 * w2 * r2 * w1**self.d
        return torch.stack([g1, g2], -1)

    def q_symbolic(self, w: Sequence[sp.Symbol]) -> sp.Expr:
        return (w[0] ** 2 + w[1] ** 2) ** 2 * w[0] ** self.d


Poly = Poly1D | Poly2D


@dataclass(frozen=True)
class LocalLambda(Record):
    """λ and m of K = Q² at a point of the zero set, from ``rlct`` (two routes that must agree)."""

    where: str
    point: tuple[float, ...]
    lam: sp.Rational
    mult: int
    method: str

    def to_dict(self) -> dict:
        return {
            "where": self.where,
            "point": self.point,
            "lam": str(self.lam),
            "mult": self.mult,
            "method": self.method,
        }


def _local(model: Poly, point: Sequence[float], where: str) -> LocalLambda:
    """λ at ``point`` from K translated to the origin: the Newton polyhedron of K
    (``rlct.from_polynomial``) and of the ideal ⟨Q⟩ (``rlct.from_ideal``) must agree."""
    syms = sp.symbols(f"u1:{model.dim + 1}", real=True)
    shifted = [s + sp.Rational(Fraction(float(c))) for s, c in zip(syms, point)]
    q = sp.expand(model.q_symbolic(shifted))
    by_k = rlct.from_polynomial(sp.expand(q**2), syms)
    by_ideal = rlct.from_ideal([q], syms)
    if not (by_k.exact and by_ideal.exact):
        raise ArithmeticError(f"rlct could not decide λ at {point}: {by_k}; {by_ideal}")
    if (by_k.lam, by_k.mult) != (by_ideal.lam, by_ideal.mult):
        raise ArithmeticError(f"rlct disagrees with itself at {point}: {by_k} vs {by_ideal}")
    return LocalLambda(
        where, tuple(float(c) for c in point), by_k.lam, int(by_k.mult), "Newton polyhedron"
    )


def exact_lambdas(model: Poly, line_point: float = 0.5) -> tuple[LocalLambda, ...]:
    """λ, m at each minimum of a ``Poly1D``; at the origin and at (0, ``line_point``) of a
    ``Poly2D``. One-dimensional minima are also checked against ``rlct.normal_crossing``."""
    if isinstance(model, Poly1D):
        out = []
        for (w,), d in zip(model.minima, (model.d1, model.d2)):
            loc = _local(model, (w,), f"w = {w:g}")
            nc = rlct.normal_crossing([d])
            if (nc.lam, nc.mult) != (loc.lam, loc.mult):
                raise ArithmeticError(f"normal_crossing([{d}]) = {nc.lam} but Newton gives {loc}")
            out.append(loc)
        return tuple(out)
    return (
        _local(model, (0.0, 0.0), "origin"),
        _local(model, (0.0, line_point), f"line w₁ = 0 at w₂ = {line_point:g}"),
    )


@dataclass(frozen=True)
class Data(Record):
    """n pairs (x, y) of independent standard normals and their moments a, b, c."""

    x: np.ndarray
    y: np.ndarray

    @property
    def n(self) -> int:
        return self.x.size

    @property
    def a(self) -> float:
        return float(np.mean(self.x**2))

    @property
    def b(self) -> float:
        return float(np.mean(self.x * self.y))

    def to_dict(self) -> dict:
        return {"n": self.n, "a": self.a, "b": self.b}


def make_data(n: int, generator: torch.Generator) -> Data:
    x = torch.randn(n, generator=generator, dtype=DTYPE)
    y = torch.randn(n, generator=generator, dtype=DTYPE)
    return Data(x.numpy(), y.numpy())


@dataclass(frozen=True)
class SGDRun(Record):
    """M trajectories of SGD: positions at ``record_steps`` [S, M, dim] and, given a region
    (``inside``), the first step each trajectory left it (``steps`` + 1 if it never did)."""

    lr: float
    batch_size: int
    momentum: float
    steps: int
    seed: int
    record_steps: np.ndarray
    positions: np.ndarray
    exit_step: np.ndarray
    diverged: int

    def to_dict(self) -> dict:
        return {
            "lr": self.lr,
            "batch_size": self.batch_size,
            "momentum": self.momentum,
            "steps": self.steps,
            "seed": self.seed,
            "num_trajectories": self.positions.shape[1],
            "diverged": self.diverged,
        }


def run_sgd(
    model: Poly,
    data: Data | None,
    w_init: Tensor,
    *,
    lr: float,
    batch_size: int,
    steps: int,
    generator: torch.Generator,
    momentum: float = 0.0,
    inside: str | None = None,
    record_every: int = 1,
) -> SGDRun:
    """SGD from each row of ``w_init`` [M, dim]: w ← w − lr·v, v ← μ·v + ∇L_B(w) (torch's SGD).

    ``data=None`` streams: every batch is B fresh pairs from the population (its expected
    gradient is the population one, whose critical set is exactly Q = 0).

    ``inside``: "below_barrier" (``Poly1D``: w < w_b) marks the region whose first exit is
    recorded. Trajectories that overflow are frozen at NaN and counted in ``diverged``.
    """
    n_max = math.inf if data is None else data.n
    if not (lr > 0 and 1 <= batch_size <= n_max and steps >= 1 and record_every >= 1):
        raise ValueError(f"bad settings: lr={lr}, batch_size={batch_size}, steps={steps}")
    if w_init.dim() != 2 or w_init.shape[1] != model.dim:
        raise ValueError(f"w_init must be [M, {model.dim}], got {tuple(w_init.shape)}")
    draw = _batch_moments(data, w_init.shape[0], batch_size, generator)
    w = w_init.to(DTYPE).clone()
    v = torch.zeros_like(w)
    M = w.shape[0]
    never = steps + 1
    exit_step = torch.full((M,), never, dtype=torch.long)
    rec_steps, rec = [0], [w.clone()]
    for t in range(1, steps + 1):
        s = draw()
        grad = 2 * (s[:, :1] * model.q(w)[:, None] - s[:, 1:]) * model.grad_q(w)
        v = momentum * v + grad if momentum else grad
        w = w - lr * v
        if inside == "below_barrier":
            left = (w[:, 0] >= model.barrier) & (exit_step == never)  # type: ignore[union-attr]
            exit_step[left] = t
        if t % record_every == 0 or t == steps:
            rec_steps.append(t)
            rec.append(w.clone())
    pos = torch.stack(rec).numpy()
    diverged = int((~np.isfinite(pos[-1])).any(axis=1).sum())
    return SGDRun(
        lr,
        batch_size,
        momentum,
        steps,
        generator.initial_seed(),
        np.asarray(rec_steps),
        pos,
        exit_step.numpy(),
        diverged,
    )


def _batch_moments(
    data: Data | None, M: int, B: int, generator: torch.Generator
) -> Callable[[], Tensor]:
    """A function drawing (a_B, b_B) = (mean x², mean x·y) of one batch per trajectory [M, 2]."""
    if data is None:

        def fresh() -> Tensor:
            xy = torch.randn(2, M, B, generator=generator, dtype=DTYPE)
            return torch.stack([(xy[0] ** 2).mean(1), (xy[0] * xy[1]).mean(1)], 1)

        return fresh
    ab = torch.stack([torch.as_tensor(data.x**2), torch.as_tensor(data.x * data.y)], 1).to(DTYPE)
    return lambda: ab[torch.randint(data.n, (M, B), generator=generator)].mean(1)


def population_hessian(model: Poly, w: Tensor) -> Tensor:
    """H(w) = ∇²K = 2∇Q∇Qᵀ + 2Q·∇²Q (K = Q², the population loss up to a constant)."""
    return torch.autograd.functional.hessian(
        lambda ww: model.q(ww[None])[0] ** 2, w.to(DTYPE).reshape(model.dim)
    )


def batch_gradients(
    model: Poly, w: Tensor, batch_size: int, num_batches: int, generator: torch.Generator
) -> Tensor:
    """∇L_B(w) = 2(a_B·Q − b_B)·∇Q for ``num_batches`` fresh population batches [R, dim]."""
    w = w.to(DTYPE).reshape(1, model.dim)
    s = _batch_moments(None, num_batches, batch_size, generator)()
    return 2 * (s[:, :1] * model.q(w)[0] - s[:, 1:]) * model.grad_q(w)


def log_uniform(lo: float, hi: float, num: int) -> np.ndarray:
    """``num`` values evenly spaced in log between lo and hi."""
    return np.exp(np.linspace(math.log(lo), math.log(hi), num))
