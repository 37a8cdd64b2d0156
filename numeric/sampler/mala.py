r"""Metropolis-adjusted Langevin (MALA) for full-gradient targets, chains on a leading axis.

Proposal w' = w − (ε/2)∇U(w) + √ε·ξ, accepted with probability

    min(1, exp(−U(w') + U(w) − ‖w − w' + (ε/2)∇U(w')‖²/(2ε) + ‖ξ‖²/2)),

so the chain leaves exp(−U) exactly invariant for any ε (no discretisation bias). Non-finite
proposals are rejected (``MALAInfo.nonfinite`` says which): the chain then samples exp(−U)
restricted to where U is finite, which the caller should report. ``step_size`` may be a float or a tensor [C, 1] (one ε per chain).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import torch
from torch import Tensor

# potential_fn(w [C, D]) -> (U [C], ∇U [C, D], loss [C], *extra); "loss" is what the caller
# records; anything after it (e.g. ∇²U, for a position-dependent step) is handed back in
# ``MALAInfo.proposal_extra`` for the proposal.
PotentialFn = Callable[[Tensor], tuple[Tensor, ...]]


class MALAState(NamedTuple):
    position: Tensor  # [C, D]
    potential: Tensor  # [C] U(position)
    grad: Tensor  # [C, D] ∇U(position)
    loss: Tensor  # [C] recorded observable at position


class MALAInfo(NamedTuple):
    acceptance: Tensor  # [C] acceptance probability of the proposal
    accepted: Tensor  # [C] bool
    proposal_extra: tuple[Tensor, ...] = ()  # what potential_fn returned after the loss, at w'
    nonfinite: Tensor | None = None  # [C] bool: U(w') or ∇U(w') was NaN or inf (rejected)


def init(position: Tensor, potential_fn: PotentialFn) -> MALAState:
    u, g, loss, *_ = potential_fn(position)
    return MALAState(position.detach().clone(), u, g, loss)


def step(
    state: MALAState,
    generator: torch.Generator,
    potential_fn: PotentialFn,
    *,
    step_size: float | Tensor,
) -> tuple[MALAState, MALAInfo]:
    w, u, g = state.position, state.potential, state.grad
    xi = torch.randn(w.shape, generator=generator, device=w.device, dtype=w.dtype)
    eps = step_size
    sq = eps**0.5 if isinstance(eps, float) else eps.sqrt()
    prop = w - 0.5 * eps * g + sq * xi
    u2, g2, loss2, *extra = potential_fn(prop)
    with torch.no_grad():
        back = w - prop + 0.5 * eps * g2
        eps_c = eps if isinstance(eps, float) else eps.squeeze(-1)
        log_alpha = -u2 + u - back.square().sum(-1) / (2 * eps_c) + 0.5 * xi.square().sum(-1)
        log_alpha = torch.where(
            torch.isfinite(log_alpha), log_alpha, torch.full_like(log_alpha, -torch.inf)
        )
        log_unif = torch.rand(u.shape, generator=generator, device=w.device, dtype=w.dtype).log()
        acc = log_unif < log_alpha
        a = acc[:, None]
        new = MALAState(
            torch.where(a, prop, w),
            torch.where(acc, u2, u),
            torch.where(a, g2, g),
            torch.where(acc, loss2, state.loss),
        )
        prob = log_alpha.clamp(max=0.0).exp()
    nonfinite = ~(torch.isfinite(u2) & torch.isfinite(g2).all(-1))
    return new, MALAInfo(prob, acc, tuple(extra), nonfinite)
