"""The data model: the loss vectorised over chains, full-data means, and the problem (H(w*):
``numeric.hessian.at_w_star``).

``setup_problem`` turns the user's loss, w* and data into a ``Problem``: w* flattened onto the
device, the data moved there, the loss checked once on a small batch, L_n(w*) and ∇L_n(w*) on the
full data (their finiteness checked, naming the data tensors that hold NaN or inf), nβ and the
batch size. Nothing here draws from the run's generator.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor
from torch.func import vmap

from numeric.backend.memory import activation_bytes, require_memory
from numeric.errors import InvalidInputError
from numeric.inputs.data import (
    data_len,
    draw_indices,
    non_finite_parts,
    row_blocks,
    rows_of,
    signature,
    take,
)
from numeric.inputs.data_forms import as_data
from numeric.inputs.flat_params import ParamSpec, flatten_params
from numeric.inputs.host_data import HostData, place_data
from numeric.inputs.loss_checks import check_loss, full_grad_at_w_star
from numeric.inputs.module_loss import ModuleLoss, check_module_params
from numeric.options import LLCOptions, default_nbeta

LossFn = Callable[[dict[str, Tensor], Any], Tensor]
# copies of the chains' state a step holds at once (position, noise, gradients, drift, the
# pre-drawn normals of kernel.UNROLL steps, anchors): the memory check's working set
STATE_COPIES = 16
MAX_AUTOMATIC_DRAWS = 20_000  # per chain (numeric.types.MAX_DRAWS), for the memory check


class DataModel:
    """The loss vectorised over chains, its gradients, HVPs and full-data losses."""

    def __init__(
        self,
        loss_fn: LossFn,
        spec: ParamSpec,
        data: Any,
        n: int,
        batch: int,
        chain_block: int | None = None,
    ) -> None:
        self.spec, self.data, self.n, self.batch = spec, data, n, batch
        self.loss_fn = loss_fn
        # minibatch gradients and HVPs at chains' positions for at most this many chains at a
        # time (``LLCOptions.chain_block``; None: all at once)
        self.chain_block = chain_block

        def f(flat: Tensor, b: Any) -> Tensor:
            return loss_fn(spec.unflatten(flat), b)

        self.f = f
        self.per_chain = vmap(f, randomness="different")  # params [C, D], batch [C, B, ...]
        self.shared_batch = vmap(f, in_dims=(0, None), randomness="different")

    def indices(self, c: int, gen: torch.Generator, device: torch.device) -> Tensor:
        return draw_indices(self.n, (c, self.batch), gen, device)

    def hvp_at(
        self, w: Tensor, gen: torch.Generator, *, difference: bool = False
    ) -> Callable[[Tensor], Tensor]:
        """v ↦ ∇²L_B(w)·v per chain on a fresh minibatch [C, B]: by double backward, or
        (``difference``) by central differences of ∇L_B along v (where autograd's second
        derivative is NaN)."""
        batch = take(self.data, self.indices(w.shape[0], gen, w.device))
        if difference:
            return _difference_hvp(lambda x: self._grad(x, batch), w)
        blocks = self.blocks(w.shape[0])
        if len(blocks) > 1:  # memory for one block's graph: rebuilt at each product
            return lambda v: torch.cat(
                [_hvp_once(self.per_chain, w[s:e], rows_of(batch, s, e), v[s:e]) for s, e in blocks]
            )
        with torch.enable_grad():
            ww = w.detach().requires_grad_(True)
            losses = self.per_chain(ww, batch)
            (g,) = torch.autograd.grad(losses.sum(), ww, create_graph=True)

        def hvp(v: Tensor) -> Tensor:
            if not g.requires_grad:  # the gradient does not depend on w: a zero Hessian
                return torch.zeros_like(v)
            with torch.enable_grad():
                (hv,) = torch.autograd.grad(
                    g, ww, grad_outputs=v, retain_graph=True, allow_unused=True
                )
            return torch.zeros_like(v) if hv is None else hv.detach()

        return hvp

    def blocks(self, c: int) -> list[tuple[int, int]]:
        """Rows 0..c − 1 (chains, or probes) in blocks of at most ``chain_block`` (one block: all
        of them)."""
        return row_blocks(c, self.chain_block)

    def _grad(self, w: Tensor, batch: Any) -> Tensor:
        parts = []
        for s, e in self.blocks(w.shape[0]):
            part = batch if (s, e) == (0, w.shape[0]) else rows_of(batch, s, e)
            with torch.enable_grad():
                ww = w[s:e].detach().requires_grad_(True)
                (g,) = torch.autograd.grad(self.per_chain(ww, part).sum(), ww)
            parts.append(g)
        return parts[0] if len(parts) == 1 else torch.cat(parts)

    def chunks(self, c: int) -> list[tuple[int, int]]:
        size = max(self.batch, min(self.n, max(1, 65536 // max(c, 1))))
        return [(s, min(s + size, self.n)) for s in range(0, self.n, size)]

    def full_loss(self, w: Tensor) -> Tensor:
        """L_n at positions [C, D]."""
        return self._data_mean(w, self.shared_batch, w.shape[0], with_grad=False)[0]

    def full_loss_grad(self, w: Tensor) -> tuple[Tensor, Tensor]:
        """(L_n, ∇L_n) at positions [C, D]."""
        return self._data_mean(w, self.shared_batch, w.shape[0], with_grad=True)

    def full_grad(self, w: Tensor) -> tuple[Tensor, Tensor]:
        """(L_n(w), ∇L_n(w)) for one position [D]."""
        return self._data_mean(w, self.f, 1, with_grad=True)

    def _data_mean(
        self, w: Tensor, loss: Callable[[Tensor, Any], Tensor], rows: int, *, with_grad: bool
    ) -> tuple[Tensor, Tensor | None]:
        """Mean over the data of ``loss(w, chunk)`` (one value per position), chunk by chunk
        (``chunks(rows)``), and with ``with_grad`` its gradient (one reverse pass a chunk)."""
        total = w.new_zeros(w.shape[:-1])
        grad = torch.zeros_like(w) if with_grad else None
        for s, e in self.chunks(rows):
            part = take(self.data, torch.arange(s, e, device=w.device))
            if with_grad:
                with torch.enable_grad():
                    ww = w.detach().requires_grad_(True)
                    val = loss(ww, part)
                    (g,) = torch.autograd.grad(val.sum(), ww)
                grad += g * (e - s)
                val = val.detach()
            else:
                with torch.no_grad():
                    val = loss(w, part)
            total += val * (e - s)
        return total / self.n, None if grad is None else grad / self.n


def _row_numbers(data: Any) -> int:
    """Numbers in one sample of the data (all tensors of a tuple or dict, held on the host too)."""
    data = data.data if isinstance(data, HostData) else data
    parts = data.values() if isinstance(data, Mapping) else data
    if isinstance(parts, Tensor):
        parts = (parts,)
    try:
        return sum(math.prod(x.shape[1:]) for x in parts if isinstance(x, Tensor)) or 1
    except TypeError:
        return 1


DEFAULT_BATCH = 256  # samples per chain and step, unless the full data cost no more
# a step's fixed cost (dispatch, the update, the records), in parameter·rows of loss work: ≈ 0.6 ms
# of eager torch per step on a 2-core CPU, where one row of a 2-parameter loss costs ≈ 5 ns
STEP_OVERHEAD = 2**18
FULL_BATCH_COST = 2.0  # the full data where a step on it costs at most this many minibatch steps


def step_cost(rows: float, dim: int) -> float:
    """A step's cost in parameter·rows: ``STEP_OVERHEAD`` plus the loss's work on ``rows`` rows
    (forward and backward ∝ rows × parameters)."""
    return STEP_OVERHEAD + rows * dim


def default_batch_size(n: int, opts: LLCOptions, dim: int = 1) -> int:
    """B = 256, or the full data (B = n: exact gradients) where a step on all n samples costs at
    most ``FULL_BATCH_COST`` control-variate steps of 256 (``step_cost``): the chains share the
    data, so such a step evaluates (C + 1)·n rows against 2C·256, and for small models both are
    dwarfed by the step's fixed cost. Exact gradients do not heat the chains, so BAOAB stays at
    critical damping and no step-size check is needed: the noisy saddle y = x·w1·w2 (n = 10⁴, 4
    chains) took 15,000 burn-in steps at the friction the minibatch heating asked for (ξ = 79)
    and 428 on the full batch, at 0.9 ms a step against 0.6 (``benchmarks/RESULTS.md``)."""
    c = opts.num_chains
    cheap = (
        opts.gradient == "control_variate"
        and not opts.anchor_every  # anchors asked for: minibatches
        and step_cost((c + 1) * n, dim) <= FULL_BATCH_COST * step_cost(2 * c * DEFAULT_BATCH, dim)
    )
    return n if n <= DEFAULT_BATCH or cheap else DEFAULT_BATCH


def check_memory(
    opts: LLCOptions, w_star: Tensor, n: int, batch: int, data: Any, activations: int = 0
) -> None:
    """Refuse, before any work, a run whose chains, minibatches, traces and (once the loss has
    run, ``activation_bytes``) the activations its gradients keep cannot fit in the device's
    memory, saying how much it would need."""
    c, d, item = opts.num_chains, w_star.numel(), w_star.element_size()
    draws = opts.num_draws if opts.num_draws is not None else MAX_AUTOMATIC_DRAWS
    require_memory(
        {
            "the chains' state": c * d * item * STATE_COPIES,
            "the minibatches": c * batch * _row_numbers(data) * item * 3,
            "the traces": c * draws * (2 * item + 3 * 8),
            "the activations": activations,
        },
        w_star.device,
        f"num_chains = {c}, {d} parameters, batch_size = {batch} and "
        + (f"num_draws = {draws}" if opts.num_draws is not None else "automatic draws"),
    )


def _hvp_once(per_chain: Callable[..., Tensor], w: Tensor, batch: Any, v: Tensor) -> Tensor:
    """∇²L_B(w)·v per chain by double backward, the graph built for this product alone."""
    with torch.enable_grad():
        ww = w.detach().requires_grad_(True)
        (g,) = torch.autograd.grad(per_chain(ww, batch).sum(), ww, create_graph=True)
        if not g.requires_grad:  # the gradient does not depend on w: a zero Hessian
            return torch.zeros_like(v)
        (hv,) = torch.autograd.grad(g, ww, grad_outputs=v, allow_unused=True)
    return torch.zeros_like(v) if hv is None else hv.detach()


def _difference_hvp(grad: Callable[[Tensor], Tensor], w: Tensor) -> Callable[[Tensor], Tensor]:
    """v ↦ (∇(w + h·v) − ∇(w − h·v))/(2h) per chain, h = ε_mach^{1/3}·(1 + max|w|)/‖v‖."""
    scale = torch.finfo(w.dtype).eps ** (1 / 3) * (1 + w.abs().amax(-1, keepdim=True))

    def hvp(v: Tensor) -> Tensor:
        h = scale / v.norm(dim=-1, keepdim=True).clamp_min(1e-30)
        return (grad(w + h * v) - grad(w - h * v)) / (2 * h)

    return hvp


def flat_params(
    loss_fn: LossFn,
    params: Mapping[str, Tensor],
    *,
    dtype: torch.dtype | None,
    device: torch.device | str | None,
) -> tuple[Tensor, ParamSpec, LossFn]:
    """w* flattened (``flatten_params``), after a ``from_module`` loss's params are checked
    against its module (before flattening: a state_dict's integer buffer, num_batches_tracked,
    is named as a buffer, not as a dtype) and a restriction's against its u*, with the loss whose module state is on w*'s device
    and dtype (``on_run``): what ``estimate_llc`` and the Hessian measures start from."""
    if isinstance(loss_fn, ModuleLoss) and isinstance(params, Mapping):
        check_module_params(loss_fn, params)
    elif callable(check := getattr(loss_fn, "check_params", None)) and isinstance(params, Mapping):
        check(params)  # numeric.restrict's RestrictedLoss: u*, not the full w*
    w_star, spec = flatten_params(params, dtype=dtype, device=device)
    return w_star, spec, on_run(loss_fn, w_star.device, w_star.dtype)


def on_run(loss_fn: LossFn, device: torch.device, dtype: torch.dtype) -> LossFn:
    """``loss_fn`` with a module's fixed state (buffers, frozen parameters) on the run's device
    and dtype, where the loss knows how (``ModuleLoss``, and ``numeric.restrict``'s wrapper of
    one: ``with_fixed_state_on``); other losses as given."""
    cast = getattr(loss_fn, "with_fixed_state_on", None)
    return cast(device, dtype) if callable(cast) else loss_fn


@dataclass(frozen=True)
class Problem:
    """What a data estimate is about: the model, w* and what the full data say there."""

    model: DataModel
    loss_fn: LossFn
    spec: ParamSpec
    w_star: Tensor  # [D] on the run's device and dtype
    g_star: Tensor  # [D] ∇L_n(w*)
    init_loss: float  # L_n(w*)
    n: int
    nbeta: float
    nbeta_rule: str  # "n/log n" or "given"
    batch_size: int

    @property
    def dim(self) -> int:
        return self.spec.dim

    @property
    def full_batch(self) -> bool:
        """Every step sees all n samples (``data.draw_indices``): exact gradients."""
        return self.batch_size == self.n


def setup_problem(
    loss_fn: LossFn, params: Mapping[str, Tensor], data: Any, opts: LLCOptions
) -> Problem:
    """The ``Problem`` of ``estimate_llc(loss_fn, params, data, ...)`` (module docstring)."""
    w_star, spec, loss_fn = flat_params(loss_fn, params, dtype=opts.dtype, device=opts.device)
    data = as_data(data)
    n = data_len(data)
    if n < 1:
        raise InvalidInputError("data is empty (n = 0)")
    nbeta, nbeta_rule = default_nbeta(n, opts.nbeta)
    bsz = (
        default_batch_size(n, opts, w_star.numel()) if opts.batch_size is None else opts.batch_size
    )
    if bsz > n:
        raise InvalidInputError(
            f"batch_size = {bsz} is more than the n = {n} samples of the data (minibatches are "
            "drawn with replacement; batch_size = n uses the full data at every step)"
        )
    if bsz == n and opts.anchor_every:
        raise InvalidInputError(
            f"anchor_every = {opts.anchor_every} applies to minibatch gradients; batch_size = n "
            f"= {n} uses the full data (exact gradients, no control variate to anchor): pass "
            "anchor_every=None or 0, or a smaller batch_size"
        )
    check_memory(opts, w_star, n, bsz, data)
    data = place_data(data, w_star.device, w_star.dtype)  # on the host where it would not fit
    if opts.compile and signature(data) is None:
        raise InvalidInputError(
            "compile=True needs data as a tensor or a tuple of tensors (samples on the first axis)"
        )
    model = DataModel(loss_fn, spec, data, n, bsz, opts.chain_block)
    check_loss(model, w_star)
    w_grad = w_star.detach().requires_grad_(True)
    rows = torch.arange(min(n, 16), device=w_star.device)
    # the rows [w; w*] of every chain (``gradients``; of a block of chains with chain_block),
    # each keeping a minibatch's activations
    at_once = min(opts.num_chains, opts.chain_block or opts.num_chains)
    kept = activation_bytes(
        lambda b: model.f(w_grad, take(data, rows[:b])), w_grad, bsz, 2 * at_once, n
    )
    check_memory(opts, w_star, n, bsz, data, kept)
    init_loss_t, g_star = full_grad_at_w_star(model, w_star)
    init_loss = float(init_loss_t)
    if not math.isfinite(init_loss):
        where = f": {nan_data}" if (nan_data := _non_finite_data(data)) else ""
        raise InvalidInputError(f"L_n(w*) = {init_loss} is not finite{where}")
    if not bool(torch.isfinite(g_star).all()):
        k = int((~torch.isfinite(g_star)).nonzero()[0, 0])
        nan_data = _non_finite_data(data)
        raise InvalidInputError(
            f"∇L_n(w*) is not finite (first in entry {k} of the flattened parameters): "
            + (
                f"{nan_data}, which the loss's value hides (nan_to_num, masking) but its "
                "gradient does not"
                if nan_data
                else "the loss is not differentiable at w* (check for w ** p with p < 1, sqrt or "
                "abs at 0, log of 0)"
            )
        )
    return Problem(model, loss_fn, spec, w_star, g_star, init_loss, n, nbeta, nbeta_rule, bsz)


def _non_finite_data(data: Any) -> str:
    """'x has NaN or inf entries' for the data tensors that do ('' where none does)."""
    bad = non_finite_parts(data)
    return (
        f"{', '.join(bad)} {'has' if len(bad) == 1 else 'have'} NaN or inf entries" if bad else ""
    )
