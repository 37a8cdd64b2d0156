r"""The estimator's hot loop: a block of SGLD steps as one function of pre-drawn randomness.

Nothing is drawn inside a block: ``draw_block`` draws the minibatch indices I_t [C, B] and the
normal draws ξ_t [C, D] of ``UNROLL`` steps up front (two generator calls per ``UNROLL`` steps
instead of two per step; memory UNROLL × C × D), and ``run`` applies ``sgld.update`` once per
step. Eagerly that is a Python
loop. With ``compiled=True`` the steps go through one ``torch.compile``d graph of ``UNROLL``
steps (forward, backward by ``torch.func.grad_and_value``, update and the per-step records fused
into one C++/Triton kernel set); a block of m steps runs ⌈m/UNROLL⌉ such calls, the steps past m
masked out (their state is not kept, their draws are zero padding, not taken from the
generator). Inductor runs with small matrix products written as fused loops
(``numeric._inductor``: 2× faster steps for reduced rank regression at 256 chains) and the
minibatches are gathered into buffers reused from block to block (``numeric.data.Gatherer``),
with the batch axis innermost in memory when the data's rows are narrow; products then build
their results batch-innermost too, and the loops vectorise along the batch (another 2.5× for
RRR at 256 chains).
The compiled function is cached per (loss function, shapes, settings), so repeated
estimates on one model compile once per process; inductor's generated code is cached on disk, so
a later process pays only the tracing (9–11 s instead of 20–35 s for the small models of
``benchmarks/bench_compile_time.py``). Eager and compiled runs consume the same random
numbers and agree up to floating-point rounding (eager runs of more than ``PREDRAW_NUMBERS``/UNROLL
chains × parameters draw step by step, another order of the numbers).

Per step the block records L_B(w_t) and L_B(w*) on the same minibatch and, where ``Record``
asks for them, ‖w_t − w*‖² (burn-in stationarity), the drift d_t = ∇Û(w_t) projected on
``probe`` (the slow-direction diagnostic) and sums of ‖move‖², ‖noise‖² (the step-size check).
Eagerly only the asked-for records are computed; the compiled graph computes all of them (they
fuse into the step for free, and one graph serves every phase).
"""

from __future__ import annotations

import gc
import math
import types
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, NamedTuple

import torch
from torch import Tensor
from torch.func import grad_and_value, vmap

from numeric import sgld
from numeric._engine import join_traces
from numeric._inductor import small_matmul_backend
from numeric.data import Gatherer, take, take_tiled

UNROLL = 8  # steps per compiled call
# eager runs draw the normals of UNROLL steps at once only while they fit in this many numbers
# (64 MB of float32); larger models draw one step's at a time (UNROLL × C × D would be 8 more
# copies of the state: 12 GB for 4 chains of 10⁸ parameters)
PREDRAW_NUMBERS = 2**24
CACHE_SIZE = 16  # compiled kernels kept per process (least recently used dropped)

FlatLoss = Callable[[Tensor, Any], Tensor]  # L_B(w) for one flat parameter vector [D]


@dataclass(frozen=True)
class KernelSpec:
    """Static settings a kernel is specialised on."""

    control_variate: bool  # ĝ = ∇L_B(w) − ∇L_B(w*) + ∇L_n(w*), else ĝ = ∇L_B(w)
    integrator: sgld.Integrator
    stacked: bool  # evaluate w and w* in one vmapped call (small models: dispatch-bound)
    # control variate centred at the nearer of w* and the chain's anchor r (``Constants``):
    # ĝ = ∇L_B(w) − ∇L_B(a) + ∇L_n(a), a = r if ‖w − r‖ < ‖w − w*‖ else w* (``centre``)
    anchored: bool = False


class Constants(NamedTuple):
    """Per-run tensors and scalars a kernel reads (arguments, not closures: no recompiles)."""

    w_star: Tensor  # [D]
    g_star: Tensor  # [D] ∇L_n(w*)
    sqrt_m: Tensor | None  # [D, D] S = M^{1/2}, or None
    probe: Tensor  # [D, j] directions the drift is projected on (j may be 0)
    nbeta: float
    gamma: float
    alpha: float
    anchor: Tensor | None = None  # [C, D] r: each chain's anchor (``KernelSpec.anchored``)
    g_anchor: Tensor | None = None  # [C, D] ∇L_n(r)
    friction: float = math.inf  # ξ of the BAOAB integrator


def centre(w: Tensor, k: Constants, anchored: bool) -> tuple[Tensor, Tensor]:
    """The control variate's centre a and ∇L_n(a) per chain: w*, or (``anchored``) the chain's
    anchor r where ‖w − r‖ < ‖w − w*‖. Chosen from w before the minibatch is drawn, so ĝ stays
    unbiased; its variance grows with ‖w − a‖²."""
    if not anchored:
        return k.w_star, k.g_star
    use = ((w - k.anchor).square().sum(-1) < (w - k.w_star).square().sum(-1)).unsqueeze(-1)
    return torch.where(use, k.anchor, k.w_star), torch.where(use, k.g_anchor, k.g_star)


class Record(NamedTuple):
    """Which optional per-step records a block computes."""

    dist: bool  # ‖w_t − w*‖²
    obs: bool  # d_t·probe
    norms: bool  # Σ‖move‖², Σ‖noise‖²


ALL = Record(dist=True, obs=True, norms=True)


class BlockNoise(NamedTuple):
    idx: Tensor  # [m, C, B] minibatch indices
    xi: Tensor  # [m, C, D] standard normal draws


class BlockTrace(NamedTuple):
    """What a block of m steps saw: [C, m] traces and [C] sums (None: not recorded)."""

    loss: Tensor  # L_B(w_t) before step t
    ref: Tensor  # L_B(w*) on the same minibatch
    dist: Tensor | None  # ‖w_t − w*‖²
    obs: Tensor | None  # [C, m, j] d_t·probe
    drift_sq: Tensor | None  # Σ_t ‖(ε/2)·M^{1/2}d_t‖²
    noise_sq: Tensor | None  # Σ_t ‖noise increment‖²


def draw_block(
    gen: torch.Generator, steps: int, chains: int, n: int, batch: int, like: Tensor
) -> BlockNoise:
    """Indices uniform on [0, n) with replacement, one minibatch per chain and step; ξ ~ N(0, I)."""
    idx = torch.randint(n, (steps, chains, batch), generator=gen, device=like.device)
    xi = torch.randn(
        (steps, chains, like.shape[-1]), generator=gen, device=like.device, dtype=like.dtype
    )
    return BlockNoise(idx, xi)


def _value_and_grad_eager(f: FlatLoss) -> Callable[[Tensor, Any], tuple[Tensor, Tensor]]:
    """Losses [C'] and gradients [C', D] of f at positions [C', D], batches [C', B, ...]:
    one vmapped forward and one reverse pass (cheaper eagerly than vmap of grad)."""
    per_chain = vmap(f, randomness="different")

    def vg(w: Tensor, batch: Any) -> tuple[Tensor, Tensor]:
        with torch.enable_grad():
            ww = w.detach().requires_grad_(True)
            losses = per_chain(ww, batch)
            (g,) = torch.autograd.grad(losses.sum(), ww)
        return losses.detach(), g

    return vg


GradientAt = Callable[[Tensor, Tensor, Constants, Any], sgld.GradientEval]
PairedGradient = Callable[[Tensor, Any, Constants], sgld.GradientEval]


def make_gradient(f: FlatLoss, spec: KernelSpec) -> GradientAt:
    """``gradient(w, idx, k, data)``: L_B(w), L_B(w*) and ĝ at positions w [C, D] on the
    minibatches ``take(data, idx)``, idx [C, B] (``KernelSpec`` says which ĝ; ``centre`` its
    centre a), by autograd: one vmapped forward and one reverse pass over the rows [w; a] (the
    control variate; with a = w* they give L_B(w*) too), [w; w*] (``spec.stacked``) or
    [w; a; w*] (both, anchored): the fewest dispatches eagerly. Otherwise L_B(w*) is a separate
    forward pass."""
    vg = _value_and_grad_eager(f)
    ref_only = vmap(f, in_dims=(None, 0), randomness="different")

    def gradient(w: Tensor, idx: Tensor, k: Constants, data: Any) -> sgld.GradientEval:
        c = w.shape[0]
        a, g_a = centre(w, k, spec.anchored)
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
        g = grads[:c] - grads[c : 2 * c] + g_a if spec.control_variate else grads[:c]
        return sgld.GradientEval(losses[:c], ref, g)

    return gradient


def make_paired_gradient(f: FlatLoss, spec: KernelSpec) -> PairedGradient:
    """``gradient(w, batch, k)`` on minibatches already gathered, [C, B, ...], with
    ``torch.func`` only (traceable by ``torch.compile`` without graph breaks): per chain the batch
    is used at w, at the control variate's centre a (its ∇L_B(a); with a = w* also L_B(w*)) and,
    anchored or without control variate, at w* for L_B(w*) alone: no backward pass at w* (2.3×
    faster per step than the stacked form once compiled, 256 chains)."""
    gv = grad_and_value(f)

    def per_chain(
        w: Tensor, a: Tensor, w_star: Tensor, batch: Any
    ) -> tuple[Tensor, Tensor, Tensor]:
        g, loss = gv(w, batch)
        if not spec.control_variate:
            return loss, f(w_star, batch), g
        g_a, loss_a = gv(a, batch)
        return loss, f(w_star, batch) if spec.anchored else loss_a, g - g_a

    batched = vmap(
        per_chain, in_dims=(0, 0 if spec.anchored else None, None, 0), randomness="different"
    )

    def gradient(w: Tensor, batch: Any, k: Constants) -> sgld.GradientEval:
        a, g_a = centre(w, k, spec.anchored)
        loss, ref, g = batched(w, a, k.w_star, batch)
        return sgld.GradientEval(loss, ref, g + g_a if spec.control_variate else g)

    return gradient


def make_block(f: FlatLoss, spec: KernelSpec, *, functional: bool) -> Callable[..., Any]:
    """``block(state, noise, mask, eps, consts, data, record) -> (state, BlockTrace)``.

    ``mask`` [m] bool or None: steps with mask False leave the state unchanged (compiled padding).
    ``record``: which optional records to compute (``Record``).
    ``functional``: ``data`` is the block's minibatches gathered up front (tensors with leading
    axes [m, C, B]: one contiguous ``index_select`` per block outside the compiled graph, which
    otherwise fuses a slow indirect gather into every loop that reads the batch); else ``data``
    is the data set and each step gathers its own.
    """
    gathered = make_paired_gradient(f, spec) if functional else None
    gradient = None if functional else make_gradient(f, spec)

    def block(
        state: sgld.SGLDState,
        noise: BlockNoise,
        mask: Tensor | None,
        eps: float | Tensor,
        k: Constants,
        data: Any,
        record: Record = ALL,
    ) -> tuple[sgld.SGLDState, BlockTrace]:
        loss, ref, dist, obs = [], [], [], []
        drift_sq = noise_sq = state.position.new_zeros(state.position.shape[0])
        for t in range(noise.idx.shape[0]):
            w = state.position
            if record.dist:
                dist.append((w - k.w_star).square().sum(-1))
            if gathered is not None:
                step_batch = tuple(x[t] for x in data) if isinstance(data, tuple) else data[t]
                ev = gathered(w, step_batch, k)
            else:
                ev = gradient(w, noise.idx[t], k, data)
            new, info = sgld.update(
                state,
                ev,
                noise.xi[t],
                step_size=eps,
                nbeta=k.nbeta,
                gamma=k.gamma,
                center=k.w_star,
                prior_precision=k.alpha,
                integrator=spec.integrator,
                friction=k.friction,
                preconditioner=k.sqrt_m,
                with_norms=record.norms,
            )
            if mask is not None:
                keep = mask[t]
                new = sgld.SGLDState(
                    torch.where(keep, new.position, state.position),
                    torch.where(keep, new.noise, state.noise),
                )
                info = info._replace(
                    drift_sq=torch.where(keep, info.drift_sq, 0.0),
                    noise_sq=torch.where(keep, info.noise_sq, 0.0),
                )
            if record.norms:
                drift_sq = drift_sq + info.drift_sq
                noise_sq = noise_sq + info.noise_sq
            state = new
            loss.append(info.loss)
            ref.append(info.ref_loss)
            if record.obs:
                obs.append(info.drift @ k.probe)
        trace = BlockTrace(
            torch.stack(loss, 1),
            torch.stack(ref, 1),
            torch.stack(dist, 1) if record.dist else None,
            torch.stack(obs, 1) if record.obs else None,
            drift_sq if record.norms else None,
            noise_sq if record.norms else None,
        )
        return state, trace

    return block


_COMPILED: OrderedDict[Hashable, Callable[..., Any]] = OrderedDict()


def _compiled_block(
    f: FlatLoss, spec: KernelSpec, key: Hashable | None, *, batch_inner: bool
) -> Callable[..., Any]:
    """``torch.compile`` of ``make_block`` (functional gradients), cached under ``key``;
    ``batch_inner``: the minibatches come with the batch axis innermost in memory.

    Each cache entry gets its own code object: dynamo keeps compiled graphs per code object with
    guards on the closure, so entries sharing one would evict each other past its recompile limit.
    """
    key = None if key is None else (key, batch_inner)
    if key is not None and key in _COMPILED:
        _COMPILED.move_to_end(key)
        return _COMPILED[key]
    block = make_block(f, spec, functional=True)
    fresh = types.FunctionType(
        block.__code__.replace(co_name=f"sgld_block_{len(_COMPILED)}_{id(block):x}"),
        block.__globals__,
        argdefs=block.__defaults__,
        closure=block.__closure__,
    )
    compiled = _collect_after_first_call(
        torch.compile(
            fresh, dynamic=False, backend=small_matmul_backend(long_axis_inner=batch_inner)
        )
    )
    if key is not None:
        _COMPILED[key] = compiled
        while len(_COMPILED) > CACHE_SIZE:
            _COMPILED.popitem(last=False)
    return compiled


def _collect_after_first_call(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` followed, once, by a full garbage collection.

    The first call of a ``torch.compile``d function compiles it and leaves ~10⁶ Python objects
    behind; the first full collection after that takes ~0.5 s. It is paid in the compiling call
    rather than in the middle of a later estimate that reuses the cached kernel.
    """
    pending = True

    def call(*args: Any) -> Any:
        nonlocal pending
        out = fn(*args)
        if pending:
            pending = False
            gc.collect()
        return out

    return call


class Kernel:
    """Runs blocks of SGLD steps for one estimate: eager, or compiled and cached."""

    def __init__(
        self,
        f: FlatLoss,
        spec: KernelSpec,
        consts: Constants,
        data: Any,
        *,
        compiled: bool,
        cache_key: Hashable | None = None,
    ) -> None:
        self.data, self.compiled = data, compiled
        if compiled:
            like = consts.w_star
            # batch-innermost minibatches on CPU only (measured there; GPU kernels keep rows)
            self._gather = Gatherer(data, batch_inner=like.device.type == "cpu")
            self.block = _compiled_block(f, spec, cache_key, batch_inner=self._gather.batch_inner)
            self._full = torch.ones(UNROLL, dtype=torch.bool, device=like.device)
        else:
            self.block = make_block(f, spec, functional=False)
        self.consts = self._k = consts
        if compiled:  # the scalars as 0-d tensor arguments from the start
            self.update_constants(
                **{name: getattr(consts, name) for name in ("nbeta", "gamma", "alpha", "friction")}
            )

    def update_constants(self, **changes: Any) -> None:
        """Replace some ``Constants`` (new anchors, a new friction, ...) without a recompile:
        compiled, scalars are passed as 0-d tensors, so a new nβ, γ, α, ξ (or ε) is a new
        argument value, not a new graph."""
        self.consts = self.consts._replace(**changes)
        if self.compiled:
            like = self.consts.w_star
            changes = {
                name: torch.tensor(v, dtype=like.dtype, device=like.device)
                if isinstance(v, (int, float))
                else v
                for name, v in changes.items()
            }
        self._k = self._k._replace(**changes)

    def run_drawing(
        self,
        state: sgld.SGLDState,
        m: int,
        eps: float,
        gen: torch.Generator,
        n: int,
        batch: int,
        record: Record = ALL,
    ) -> tuple[sgld.SGLDState, BlockTrace]:
        """m steps, drawing their randomness from ``gen`` ``UNROLL`` steps at a time: the
        pre-drawn normals then take UNROLL × C × D numbers, a constant multiple of the state
        (drawing a whole block at once took 64 × C × D: 2.6 GB for one chain of 10⁷ floats).
        Eager runs with UNROLL × C × D > ``PREDRAW_NUMBERS`` draw one step at a time (another
        order of the same generator's numbers: such runs differ from those of the compiled
        kernel, which always draws UNROLL steps)."""
        c, d = state.position.shape
        per = UNROLL if self.compiled or UNROLL * c * d <= PREDRAW_NUMBERS else 1
        parts = []
        for s in range(0, m, per):
            noise = draw_block(gen, min(per, m - s), c, n, batch, self.consts.w_star)
            state, tr = self.run(state, noise, eps, record)
            parts.append(tr)
        return state, cat_traces(parts)

    def run(
        self, state: sgld.SGLDState, noise: BlockNoise, eps: float, record: Record = ALL
    ) -> tuple[sgld.SGLDState, BlockTrace]:
        """Apply the m ≤ ``UNROLL`` steps whose randomness is ``noise``.

        Compiled: one call of the ``UNROLL``-step graph (padded and masked when m < UNROLL),
        which computes every record; ``record`` only matters eagerly.
        """
        if not self.compiled:
            return self.block(state, noise, None, eps, self._k, self.data, record)
        m = noise.idx.shape[0]
        if m > UNROLL:
            raise ValueError(f"a compiled block runs at most {UNROLL} steps, got {m}")
        like = state.position
        eps_t = torch.tensor(eps, dtype=like.dtype, device=like.device)
        chunk, mask = (noise, self._full) if m == UNROLL else _pad(noise, m)
        batches = self._gather(chunk.idx)  # [UNROLL, C, B, ...], gathered outside the graph
        state, tr = self.block(state, chunk, mask, eps_t, self._k, batches)
        if m < UNROLL:
            tr = tr._replace(
                loss=tr.loss[:, :m], ref=tr.ref[:, :m], dist=tr.dist[:, :m], obs=tr.obs[:, :m]
            )
        return state, tr


def cat_traces(parts: list[BlockTrace]) -> BlockTrace:
    """Consecutive blocks' traces as one: per-step records joined by ``_engine.join_traces``,
    norms summed (None when a block did not record them)."""
    if len(parts) == 1:
        return parts[0]

    def total(field: str) -> Tensor | None:
        values = [getattr(p, field) for p in parts]
        return None if any(v is None for v in values) else sum(values)

    steps = join_traces(parts)
    return BlockTrace(
        steps.loss, steps.ref, steps.dist, steps.obs, total("drift_sq"), total("noise_sq")
    )


def _pad(noise: BlockNoise, m: int) -> tuple[BlockNoise, Tensor]:
    """The m < ``UNROLL`` steps of ``noise`` padded with zeros to ``UNROLL``, and the mask of the
    real ones."""
    idx, xi = noise.idx, noise.xi
    mask = torch.zeros(UNROLL, dtype=torch.bool, device=idx.device)
    mask[:m] = True
    pad = UNROLL - m
    idx = torch.cat([idx, idx.new_zeros((pad, *idx.shape[1:]))])
    xi = torch.cat([xi, xi.new_zeros((pad, *xi.shape[1:]))])
    return BlockNoise(idx, xi), mask
