"""Exact Jacobian ranks and learning coefficients of two-layer quadratic networks.

Model (Cullen et al. 2026, seed paper 002): f_θ(x) = V σ(Wᵀx), σ(t) = t², W ∈ R^{d×K} (columns
w_j), V ∈ R^{p×K}. Output k is xᵀQ_k x with Q_k = Σ_j v_kj w_j w_jᵀ, and the identifiable
coordinates are Φ(W, V) = (Q_1, …, Q_p), each Q_k stored by its d(d+1)/2 upper-triangular entries.
With biases (``b`` given): f_k(x) = Σ_j v_kj (w_jᵀx + b_j)² + c_k = xᵀQ_k x + r_kᵀx + s_k with
r_k = 2 Σ_j v_kj b_j w_j and s_k = Σ_j v_kj b_j² + c_k; the output bias c ∈ R^p is always a
parameter, but the Jacobian does not depend on its value, so it is not an argument.

With a data matrix X (n × d) the relevant map is θ ↦ (f_θ(x_i)_k)_{k,i}; with ``centered=True``
the centring projection P⊥ = I − 11ᵀ/n is applied across samples (what a centred squared loss
sees). Parameters are ordered W (row-major), V (row-major), then b and c; rows are ordered
output-major. Orderings do not affect ranks.

Modules, each importing only those before it: :mod:`~rlct.quadratic.point` (exact validated
points) ← :mod:`~rlct.quadratic.jacobians` (Jacobian, exact rank, structural bounds) ←
:mod:`~rlct.quadratic.generic` (generic rank by random primes), and
:mod:`~rlct.quadratic.fit` (whether a trained point fits its targets, exactly) ←
:mod:`~rlct.quadratic.coefficient` (λ at a point); and :mod:`~rlct.quadratic.datasets` ←
:mod:`~rlct.quadratic.hypotheses` ← :mod:`~rlct.quadratic.theorems` (the paper's closed forms) ←
:mod:`~rlct.quadratic.check` (closed forms against the exact λ).
"""

from __future__ import annotations

from ..algebra.ranks import GenericRank
from . import theorems
from .check import TheoremCheck, check_theorems
from .coefficient import llc
from .datasets import modular_addition_data
from .generic import generic_rank, generic_rank_certificate
from .jacobians import jacobian, jacobian_rank, num_parameters
from .theorems import *  # noqa: F403 (TheoremValue and theorem_*: named in its __all__)

__all__ = [
    *theorems.__all__,
    "GenericRank",
    "TheoremCheck",
    "check_theorems",
    "generic_rank",
    "generic_rank_certificate",
    "jacobian",
    "jacobian_rank",
    "llc",
    "modular_addition_data",
    "num_parameters",
]
