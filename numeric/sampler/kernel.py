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
(``numeric.backend.inductor``: 2× faster steps for reduced rank regression at 256 chains) and the
minibatches are gathered into buffers reused from block to block (``numeric.inputs.data.Gatherer``),
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
import types
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import torch
from torch import Tensor

from numeric.backend.heap import HeapTrimmer
from numeric.backend.inductor import small_matmul_backend
from numeric.hessian.spectrum import NUM_SLOW
from numeric.inputs.data import Gatherer, draw_indices, signature
from numeric.inputs.flat_params import ParamSpec
from numeric.sampler import sgld
from numeric.sampler.gradients import FlatLoss, make_gradient, make_paired_gradient
from numeric.types import ALL, BlockNoise, Constants, KernelSpec, Record, Trace

UNROLL = 8  # steps per compiled call
# eager runs draw the normals of UNROLL steps at once only while they fit in this many numbers
# (64 MB of float32); larger models draw one step's at a time (UNROLL × C × D would be 8 more
# copies of the state: 12 GB for 4 chains of 10⁸ parameters)
PREDRAW_NUMBERS = 2**24
CACHE_SIZE = 16  # compiled kernels kept per process (least recently used dropped)


def draw_block(
    gen: torch.Generator, steps: int, chains: int, n: int, batch: int, like: Tensor
) -> BlockNoise:
    """Indices uniform on [0, n) with replacement, one minibatch per chain and step (the full
    data where ``batch`` = n: ``data.draw_indices``); ξ ~ N(0, I)."""
    idx = draw_indices(n, (steps, chains, batch), gen, like.device)
    xi = torch.randn(
        (steps, chains, like.shape[-1]), generator=gen, device=like.device, dtype=like.dtype
    )
    return BlockNoise(idx, xi)


def make_block(f: FlatLoss, spec: KernelSpec, *, functional: bool) -> Callable[..., Any]:
    """``block(state, noise, mask, eps, consts, data, record) -> (state, Trace)``.

    ``mask`` [m] bool or None: steps with mask False leave the state unchanged (compiled padding).
    ``record``: which optional records to compute (``Record``).
    ``functional``: ``data`` is the block's minibatches gathered up front (tensors with leading
    axes [m, C, B]: one contiguous ``index_select`` per block outside the compiled graph, which
    otherwise fuses a slow indirect gather into every loop that reads the batch); else ``data``
    is the data set and each step gathers its own. At the full batch (``spec.full_batch``)
    ``data`` is the data set either way, shared by every chain and step.
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
    ) -> tuple[sgld.SGLDState, Trace]:
        loss, ref, dist, obs, lin = [], [], [], [], []
        drift_sq = noise_sq = state.position.new_zeros(state.position.shape[0])
        for t in range(noise.idx.shape[0]):
            w = state.position
            if record.dist:
                dist.append((w - k.w_star).square_().sum(-1))
            if gathered is not None:
                if spec.full_batch:  # the data, shared by the chains at every step
                    step_batch = data
                elif isinstance(data, tuple):
                    step_batch = tuple(x[t] for x in data)
                else:
                    step_batch = data[t]
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
            if info.linear is not None:
                lin.append(info.linear)
            if record.obs:
                obs.append(info.drift @ k.probe)
        trace = Trace(
            torch.stack(loss, 1),
            torch.stack(ref, 1),
            torch.stack(dist, 1) if record.dist else None,
            torch.stack(obs, 1) if record.obs else None,
            drift_sq if record.norms else None,
            noise_sq if record.norms else None,
            torch.stack(lin, 1) if lin else None,
        )
        return state, trace

    return block


PROBE_WIDTH = NUM_SLOW  # the compiled kernel's probe columns (``_widened``)
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
    compiled = _CollectAfterFirstCall(
        torch.compile(
            fresh, dynamic=False, backend=small_matmul_backend(long_axis_inner=batch_inner)
        )
    )
    if key is not None:
        _COMPILED[key] = compiled
        while len(_COMPILED) > CACHE_SIZE:
            _COMPILED.popitem(last=False)
    return compiled


class _CollectAfterFirstCall:
    """``fn`` followed, once, by a full garbage collection.

    The first call of a ``torch.compile``d function compiles it and leaves ~10⁶ Python objects
    behind; the first full collection after that takes ~0.5 s. It is paid in the compiling call
    rather than in the middle of a later estimate that reuses the cached kernel.
    """

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn, self.pending = fn, True

    def __call__(self, *args: Any) -> Any:
        out = self.fn(*args)
        if self.pending:
            self.pending = False
            gc.collect()
        return out


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
            if spec.full_batch:  # nothing gathered: the block reads the data itself
                self._gather = None
                self.block = _compiled_block(f, spec, cache_key, batch_inner=False)
            else:  # batch-innermost minibatches on CPU only (measured there; GPU keeps rows)
                self._gather = Gatherer(data, batch_inner=like.device.type == "cpu")
                inner = self._gather.batch_inner
                self.block = _compiled_block(f, spec, cache_key, batch_inner=inner)
            self._full = torch.ones(UNROLL, dtype=torch.bool, device=like.device)
        else:
            self.block = make_block(f, spec, functional=False)
        self.consts = self._k = consts
        if compiled:  # one probe width for every plan: a checkpoint with another is no recompile
            self._k = consts._replace(probe=_widened(consts.probe))
        # CPU runs hand their freed temporaries back to the system (``numeric.backend.heap``)
        self._heap = HeapTrimmer() if consts.w_star.device.type == "cpu" else None
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
            if "probe" in changes:
                changes["probe"] = _widened(changes["probe"])
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
    ) -> tuple[sgld.SGLDState, Trace]:
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
            if self._heap is not None:
                self._heap.trim()
        return state, Trace.join(parts)

    def run(
        self, state: sgld.SGLDState, noise: BlockNoise, eps: float, record: Record = ALL
    ) -> tuple[sgld.SGLDState, Trace]:
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
        # [UNROLL, C, B, ...], gathered outside the graph; the full batch is the data
        batches = self.data if self._gather is None else self._gather(chunk.idx)
        state, tr = self.block(state, chunk, mask, eps_t, self._k, batches)
        if tr.obs is not None:  # the probe's own directions, not the zero columns of its width
            tr = tr._replace(obs=tr.obs[..., : self.consts.probe.shape[1]])
        if m < UNROLL:
            tr = tr.window(0, m)._replace(drift_sq=tr.drift_sq, noise_sq=tr.noise_sq)
        return state, tr


def _widened(probe: Tensor) -> Tensor:
    """``probe`` [D, j] with zero columns up to ``PROBE_WIDTH``, cut off again after each block
    (the graph is specialised on its shape: a series with j = 1, then 2, compiled twice)."""
    pad = probe.new_zeros(probe.shape[0], max(PROBE_WIDTH - probe.shape[1], 0))
    return torch.cat([probe, pad], 1)


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


def cache_key(
    loss_fn: Any, spec: ParamSpec, kspec: KernelSpec, data: Any, c: int, bsz: int
) -> tuple | None:
    """What a compiled kernel is specialised on; None when ``loss_fn`` is not hashable."""
    try:
        hash(loss_fn)
    except TypeError:
        return None
    return (loss_fn, spec, kspec, signature(data), c, bsz)


class AnchoredBlock:
    """``block(state, m, tuning, record) -> (state, Trace)`` for ``chains.Chains``: m steps of
    ``kernel`` at ``tuning``'s ε and friction, their randomness drawn from ``gen``, and (anchored
    kernels) each chain's anchor refreshed every ``tuning.anchor_every`` steps.

    Refresh: the chain's position becomes its anchor r, with L_n(r) − L_n(w*) and ∇L_n(r) on the
    full data (``full_loss_grad``: (L_n, ∇L_n) at positions [C, D]); the block is split at the
    refreshes. A new friction is pushed into the kernel's constants at the start of the next
    block (friction only enters the update).
    """

    def __init__(
        self,
        kernel: Kernel,
        full_loss_grad: Callable[[Tensor], tuple[Tensor, Tensor]],
        gen: torch.Generator,
        n: int,
        batch: int,
        anchored: bool,
    ) -> None:
        self.kernel, self.full_loss_grad, self.gen = kernel, full_loss_grad, gen
        self.loss_star: Tensor | None = None  # L_n(w*), at the first refresh
        self.n, self.batch, self.anchored = n, batch, anchored
        self.since_anchor = 0  # steps since the anchors were last set

    def __call__(
        self, state: sgld.SGLDState, m: int, tuning: Any, record: Record
    ) -> tuple[sgld.SGLDState, Trace]:
        kern = self.kernel
        if kern.consts.friction != tuning.friction:
            kern.update_constants(friction=tuning.friction)
        record = record._replace(obs=record.obs and kern.consts.probe.shape[1] > 0)
        eps = tuning.step_size
        if not self.anchored:
            return kern.run_drawing(state, m, eps, self.gen, self.n, self.batch, record)
        parts, done = [], 0
        while done < m:
            if self.since_anchor >= tuning.anchor_every:
                pos = state.position.detach().clone()
                if self.loss_star is None:  # L_n(w*) the way L_n(r) is computed: no offset
                    self.loss_star = self.full_loss_grad(kern.consts.w_star[None])[0]
                loss_r, g_r = self.full_loss_grad(pos)
                kern.update_constants(
                    anchor=pos, g_anchor=g_r, loss_anchor=(loss_r - self.loss_star).detach()
                )
                self.since_anchor = 0
            k = min(m - done, tuning.anchor_every - self.since_anchor)
            state, part = kern.run_drawing(state, k, eps, self.gen, self.n, self.batch, record)
            self.since_anchor += k
            done += k
            parts.append(part)
        return state, Trace.join(parts)
