"""Teachers with a known learning coefficient: deep linear networks with a true map of rank r.

The true parameter factors a rank-r map with every layer of rank exactly r: W_i = U_{i+1}·V_iᵀ
with Gaussian U, V of r columns (the product then has rank r with probability one). All such
points lie on one orbit of the symmetry W_i ↦ G_{i+1}·W_i·G_i⁻¹ (G ∈ GL of each hidden width), which
preserves the model, so the local λ there is the same as at the most singular point with zero
blocks that ``verification.models`` uses: Aoyagi's λ from ``rlct.deep_linear_network``. Labels
are noise-free, y = f*(x), so the true parameter is an exact minimum of L_n (L_n(w*) = 0) and
λ̂ at w* targets λ_β(γ) = nβ·E_p[L_n], which tends to λ as nβ grows (with noisy labels w* is not a
minimum of L_n and the target lies below λ by O(λ/log n): ``notebooks/llc_estimation.py``, §2).
At the nβ of a few thousand samples λ_β is well below λ: ``dln.dln_target`` measures it.

``DLNTeacher.loss_potential`` writes L_n in closed form: with P(w) = W_L···W_1 and noise-free
labels, L_n(w) = ½·mean_i ‖(P(w) − P*)x_i‖² = ½‖(P(w) − P*)·R‖²_F for any R with R·Rᵀ = Σ̂ =
mean_i x_i·x_iᵀ (R = Q·S^½ from Σ̂ = Q·S·Qᵀ), and Σ̂ = I gives the population loss.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import sympy as sp
import torch
from torch import Tensor, nn
from torch.nn.utils import parameters_to_vector

import rlct

from .._validate import check_int
from .networks import deep_linear, linear_product
from .records import Record


@dataclass(frozen=True)
class DLNTeacher(Record):
    """A deep linear network (widths input → output), the rank r of its true map, and λ, m."""

    widths: tuple[int, ...]
    rank: int
    lam: sp.Rational
    mult: int
    seed: int

    @property
    def num_params(self) -> int:
        return sum(a * b for a, b in itertools.pairwise(self.widths))

    def to_dict(self) -> dict:
        return {
            "widths": "-".join(map(str, self.widths)),
            "depth": len(self.widths) - 1,
            "rank": self.rank,
            "num_params": self.num_params,
            "lam": float(self.lam),
            "mult": self.mult,
            "seed": self.seed,
        }

    def true_state(self, dtype: torch.dtype = torch.float64) -> dict[str, Tensor]:
        """The true parameter (state dict of ``networks.deep_linear(widths)``), from ``seed``."""
        g = torch.Generator().manual_seed(self.seed)
        r = self.rank
        state = {}
        for i, (a, b) in enumerate(itertools.pairwise(self.widths)):
            U = torch.randn(b, r, generator=g, dtype=dtype)
            V = torch.randn(a, r, generator=g, dtype=dtype)
            # scaled so that a layer maps inputs with unit-variance entries to the same
            state[f"{i}.weight"] = U @ V.T / math.sqrt(max(r, 1) * a)
        return state

    def flat_true_parameter(self, dtype: torch.dtype = torch.float64) -> Tensor:
        """w* flat, in the order of the module's parameters (layer by layer, row-major)."""
        return parameters_to_vector(self.true_state(dtype).values())

    def loss_potential(self, x: Tensor | None = None) -> Callable[[Tensor], Tensor]:
        """L_n(w) = ½‖(P(w) − P*)·R‖²_F for flat w [..., D] (leading chain axes kept): the
        mean-square loss ½·mean_i ‖f_w(x_i) − y_i‖² on the inputs ``x`` [n, d_in] with noise-free
        labels (R·Rᵀ = mean_i x_i·x_iᵀ), or the population loss (R = I) when ``x`` is None."""
        dtype = torch.float64 if x is None else x.dtype
        if x is not None and (x.ndim != 2 or x.shape[1] != self.widths[0] or len(x) == 0):
            raise ValueError(f"x must be [n ≥ 1, {self.widths[0]}], got {tuple(x.shape)}")
        shapes = list(itertools.pairwise(self.widths))
        sizes = [a * b for a, b in shapes]

        def product(w: Tensor) -> Tensor:
            blocks = w.split(sizes, dim=-1)
            return linear_product(
                W.reshape(*w.shape[:-1], b, a) for W, (a, b) in zip(blocks, shapes)
            )

        state = self.true_state(dtype)
        target = linear_product(state[f"{i}.weight"] for i in range(len(shapes)))
        if x is None:
            root = torch.eye(self.widths[0], dtype=dtype)
        else:
            # R = Q·S^½ (also where n < d_in and Σ̂ is singular); S ≥ 0 up to rounding
            s, Q = torch.linalg.eigh(x.T @ x / len(x))
            root = Q * s.clamp_min(0).sqrt()
        num_params = self.num_params

        def loss(w: Tensor) -> Tensor:
            if w.shape[-1] != num_params:
                raise ValueError(f"w must end in {num_params} parameters, got {tuple(w.shape)}")
            return 0.5 * ((product(w) - target) @ root).square().sum((-1, -2))

        return loss

    def module(self, dtype: torch.dtype = torch.float64) -> nn.Sequential:
        """A ``deep_linear`` network holding the true parameter."""
        net = deep_linear(self.widths, generator=torch.Generator().manual_seed(0), dtype=dtype)
        net.load_state_dict(self.true_state(dtype))
        return net

    def sample(
        self, n: int, generator: torch.Generator, dtype: torch.dtype = torch.float64
    ) -> tuple[Tensor, Tensor]:
        """n inputs x ~ N(0, I) and their noise-free labels y = f*(x)."""
        x = torch.randn(n, self.widths[0], generator=generator, dtype=dtype)
        with torch.no_grad():
            y = self.module(dtype)(x)
        return x, y


def dln_teacher(widths: Sequence[int], rank: int, seed: int) -> DLNTeacher:
    """The teacher with these widths (input → output) and true rank, λ and m from Aoyagi (2024)."""
    exact = rlct.deep_linear_network(list(widths), rank)
    return DLNTeacher(tuple(int(w) for w in widths), rank, exact.lam, int(exact.mult), seed)


def random_dln_teacher(
    generator: torch.Generator, min_params: int, max_params: int, max_depth: int = 5
) -> DLNTeacher:
    """A teacher with random depth (2..max_depth layers), widths and rank.

    The target size D is log-uniform in [min_params, max_params]; widths are drawn around
    √(D/depth) (±50%) and the true rank uniformly in [0, min width] (a random rank reduction).
    Redrawn until the size lies in the range.
    """
    check_int("min_params", min_params, 1)
    check_int(f"max_params (min_params = {min_params})", max_params, min_params)
    check_int("max_depth", max_depth, 2)

    def uniform(lo: float, hi: float) -> float:
        return lo + (hi - lo) * float(torch.rand((), generator=generator, dtype=torch.float64))

    def integer(lo: int, hi: int) -> int:
        return int(torch.randint(lo, hi + 1, (), generator=generator))

    for _ in range(1000):
        depth = integer(2, max_depth)
        target = math.exp(uniform(math.log(min_params), math.log(max_params)))
        base = math.sqrt(target / depth)
        widths = [max(1, round(base * uniform(0.5, 1.5))) for _ in range(depth + 1)]
        size = sum(a * b for a, b in itertools.pairwise(widths))
        if min_params <= size <= max_params:
            rank = integer(0, min(widths))
            return dln_teacher(widths, rank, seed=integer(0, 2**31 - 1))
    raise ValueError(f"no network found with {min_params}..{max_params} parameters")
