r"""Minibatch gradient estimators ĝ of ∇L_n(w) for all chains at once (BlackJAX's
``sgmcmc/gradients.py``).

* plain: ĝ = ∇L_B(w) (``KernelSpec.control_variate`` False; Lau et al., devinterp);
* control variate (SGLD-CV, Baker et al. 2019): ĝ = ∇L_B(w) − ∇L_B(a) + ∇L_n(a), centred at
  a = w* (near w* its variance is tiny, so the minibatch noise that inflates the sampling
  temperature by ≈ 1 + ε·nβ²·Var(ĝ)/4, large at nβ = n/log n, is removed), or, anchored
  (SVRG-style, Dubey et al. 2016), at the nearer of w* and the chain's anchor r (``centre``):
  far from w* the w*-centred control variate does nothing, and on y = x·w1·w2 at the origin the
  inflated temperature put SGLD-CV's estimates 1–5 standard errors above the exact target.
  The anchors themselves are refreshed by ``kernel.AnchoredBlock``.

Every estimator also returns L_B(w) and L_B(w*) on the same minibatch (the estimate compares
them) and, with a control variate centred at a, the first-order minibatch noise ℓ of
L_B(w) − L_B(w*) about a (``batch_noise``), which λ̂'s observable regresses out
(``numeric.stats.observable``).
``make_gradient`` is the eager form (one vmapped forward and one reverse pass over stacked
rows); ``make_paired_gradient`` the ``torch.func`` form that ``torch.compile`` traces.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor
from torch.func import grad_and_value, vmap

from numeric.inputs.data import row_blocks, rows_of, take, take_all, take_tiled
from numeric.sampler import sgld
from numeric.types import Constants, KernelSpec

FlatLoss = Callable[[Tensor, Any], Tensor]  # L_B(w) for one flat parameter vector [D]


def centre(w: Tensor, k: Constants, anchored: bool) -> tuple[Tensor, Tensor, Tensor | None]:
    """The control variate's centre a, ∇L_n(a) and L_n(a) − L_n(w*) per chain: w* (and None:
    a is w* for every chain), or (``anchored``) the chain's anchor r where ‖w − r‖ < ‖w − w*‖.
    Chosen from w before the minibatch is drawn, so ĝ stays unbiased; its variance grows with
    ‖w − a‖²."""
    if not anchored:
        return k.w_star, k.g_star, None
    use = (w - k.anchor).square_().sum(-1) < (w - k.w_star).square_().sum(-1)
    zero = w.new_zeros(w.shape[:-1])
    gap = zero if k.loss_anchor is None else torch.where(use, k.loss_anchor, zero)
    use = use.unsqueeze(-1)
    return torch.where(use, k.anchor, k.w_star), torch.where(use, k.g_anchor, k.g_star), gap


def _value_and_grad_eager(
    f: FlatLoss, *, shared: bool = False, block: int | None = None
) -> Callable[[Tensor, Any], tuple[Tensor, Tensor]]:
    """Losses [C'] and gradients [C', D] of f at positions [C', D], batches [C', B, ...] (or,
    ``shared``, one batch [B, ...] for every row): one vmapped forward and one reverse pass
    (cheaper eagerly than vmap of grad); with ``block``, one of each per ``block`` rows (each
    row's loss depends on that row alone, so the gradients are the same; the activations of one
    block are held at a time)."""
    per_chain = vmap(f, in_dims=(0, None) if shared else 0, randomness="different")

    def one(w: Tensor, batch: Any) -> tuple[Tensor, Tensor]:
        with torch.enable_grad():
            ww = w.detach().requires_grad_(True)
            losses = per_chain(ww, batch)
            (g,) = torch.autograd.grad(losses.sum(), ww)
        return losses.detach(), g

    if block is None:  # the step's path: nothing added to it
        return one

    def vg(w: Tensor, batch: Any) -> tuple[Tensor, Tensor]:
        blocks = row_blocks(w.shape[0], block)
        if len(blocks) == 1:
            return one(w, batch)
        parts = [one(w[s:e], batch if shared else rows_of(batch, s, e)) for s, e in blocks]
        return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])

    return vg


def batch_noise(
    g_batch_a: Tensor,
    g_full_a: Tensor,
    a: Tensor,
    w: Tensor,
    loss_a: Tensor,
    ref: Tensor,
    gap: Tensor | None,
) -> Tensor:
    """ℓ = (L_B(a) − L_B(w*) − (L_n(a) − L_n(w*))) + (∇L_B(a) − ∇L_n(a))·(w − a) per chain (last
    axis summed): the first-order minibatch noise of L_B(w) − L_B(w*) about the control
    variate's centre a (``gap`` = L_n(a) − L_n(w*)). Zero on average, a being chosen from w
    before the batch is drawn. ``gap`` None: a is w* (``centre``), where the bracket is 0 and
    is not computed."""
    linear = (g_batch_a - g_full_a).mul_(w - a).sum(-1)
    return linear if gap is None else linear + (loss_a - ref - gap)


GradientAt = Callable[[Tensor, Tensor, Constants, Any], sgld.GradientEval]
PairedGradient = Callable[[Tensor, Any, Constants], sgld.GradientEval]


def make_gradient(f: FlatLoss, spec: KernelSpec) -> GradientAt:
    """``gradient(w, idx, k, data)``: L_B(w), L_B(w*) and ĝ at positions w [C, D] on the
    minibatches ``take(data, idx)``, idx [C, B] (``KernelSpec`` says which ĝ; ``centre`` its
    centre a), by autograd: one vmapped forward and one reverse pass over the rows [w; a] (the
    control variate; with a = w* they give L_B(w*) too), [w; w*] (``spec.stacked``) or
    [w; a; w*] (both, anchored): the fewest dispatches eagerly. Otherwise L_B(w*) is a separate
    forward pass."""
    if spec.full_batch:
        return _full_batch_gradient(f, spec)
    # a block of chains is a block of rows of each kind stacked below ([w; a; w*])
    ref_in_rows = spec.control_variate and not spec.anchored  # a = w*: L_B(w*) among the rows
    rows_per_chain = 1 + spec.control_variate + (spec.stacked and not ref_in_rows)
    block = None if spec.chain_block is None else spec.chain_block * rows_per_chain
    vg = _value_and_grad_eager(f, block=block)
    ref_only = vmap(f, in_dims=(None, 0), randomness="different")

    def gradient(w: Tensor, idx: Tensor, k: Constants, data: Any) -> sgld.GradientEval:
        c = w.shape[0]
        a, g_a, gap = centre(w, k, spec.anchored)
        rows = [w, a.expand(c, -1)] if spec.control_variate else [w]
        ref_in_rows = spec.control_variate and not spec.anchored  # a = w*
        if spec.stacked and not ref_in_rows:
            rows.append(k.w_star.expand(c, -1))
            ref_in_rows = True
        losses, grads = vg(torch.cat(rows), take_tiled(data, idx, len(rows)))
        if ref_in_rows:
            ref = losses[-c:]
        else:
            with torch.no_grad():
                ref = ref_only(k.w_star, take(data, idx))
        g = (grads[:c] - grads[c : 2 * c]).add_(g_a) if spec.control_variate else grads[:c]
        lin = None
        if spec.control_variate:
            lin = batch_noise(grads[c : 2 * c], g_a, a, w, losses[c : 2 * c], ref, gap)
        return sgld.GradientEval(losses[:c], ref, g, lin)

    return gradient


def _full_batch_gradient(f: FlatLoss, spec: KernelSpec) -> GradientAt:
    """``make_gradient`` where every step sees all n samples (idx [C, n] = 0..n − 1): ĝ =
    ∇L_n(w) exactly, the data shared by the chains (vmapped with the data not mapped: no copy per
    chain). L_n(w*) is one number for the whole run: one forward pass of w* on the first call,
    kept while w* and the data are the same objects (a row of [w; w*] in every step's forward
    and reverse pass had cost a fifth of a 4-chain step)."""
    vg = _value_and_grad_eager(f, shared=True, block=spec.chain_block)
    kept: list[tuple[Tensor, Any, Tensor]] = []  # (w*, data, L_n(w*)): the last one

    def reference(w_star: Tensor, data: Any, batch: Any) -> Tensor:
        if not (kept and kept[0][0] is w_star and kept[0][1] is data):
            with torch.no_grad():
                kept[:] = [(w_star, data, f(w_star, batch).detach())]
        return kept[0][2]

    def gradient(w: Tensor, idx: Tensor, k: Constants, data: Any) -> sgld.GradientEval:
        batch = take_all(data, idx[0])
        losses, grads = vg(w, batch)
        ref = reference(k.w_star, data, batch).expand(w.shape[0])
        return sgld.GradientEval(losses, ref, grads, None)

    return gradient


def make_paired_gradient(f: FlatLoss, spec: KernelSpec) -> PairedGradient:
    """``gradient(w, batch, k)`` on minibatches already gathered, [C, B, ...] (at the full
    batch, ``spec.full_batch``, the data [n, ...] every chain shares), with
    ``torch.func`` only (traceable by ``torch.compile`` without graph breaks): per chain the batch
    is used at w, at the control variate's centre a (its ∇L_B(a); with a = w* also L_B(w*)) and,
    anchored or without control variate, at w* for L_B(w*) alone: no backward pass at w* (2.3×
    faster per step than the stacked form once compiled, 256 chains)."""
    gv = grad_and_value(f)

    def per_chain(
        w: Tensor, a: Tensor, g_full_a: Tensor, gap: Tensor | None, w_star: Tensor, batch: Any
    ) -> tuple[Tensor, ...]:
        g, loss = gv(w, batch)
        if not spec.control_variate:
            return loss, f(w_star, batch), g
        g_a, loss_a = gv(a, batch)
        ref = f(w_star, batch) if spec.anchored else loss_a  # a = w*: L_B(a) is L_B(w*)
        # ℓ per chain, fused with the rest rather than ∇L_B(a) [C, D] handed out of vmap
        return loss, ref, g - g_a, batch_noise(g_a, g_full_a, a, w, loss_a, ref, gap)

    per_centre = 0 if spec.anchored else None
    batched = vmap(
        per_chain,
        in_dims=(0, per_centre, per_centre, per_centre, None, None if spec.full_batch else 0),
        randomness="different",
    )

    def gradient(w: Tensor, batch: Any, k: Constants) -> sgld.GradientEval:
        a, g_a, gap = centre(w, k, spec.anchored)
        loss, ref, g, *lin = batched(w, a, g_a, gap, k.w_star, batch)
        return sgld.GradientEval(
            loss, ref, g + g_a if spec.control_variate else g, lin[0] if lin else None
        )

    return gradient


def gradient_fn(
    f: FlatLoss,
    spec: KernelSpec,
    k: Constants,
    chains: Tensor,
    data: Any,
    indices: Callable[[int, torch.Generator, torch.device], Tensor],
) -> sgld.GradientFn:
    """ĝ, as the steps compute it, for the chains ``chains`` at positions [C', D] on fresh
    minibatches (``indices(C', gen, device)``) drawn from a generator (outside the hot loop)."""
    gradient = make_gradient(f, spec)
    if spec.anchored:
        k = k.for_chains(chains)

    def fn(w: Tensor, gen: torch.Generator) -> sgld.GradientEval:
        idx = indices(w.shape[0], gen, w.device)
        return gradient(w, idx, k, data)

    return fn
