"""The data model: the loss vectorised over chains, full-data means, H(w*), and the problem.

``setup_problem`` turns the user's loss, w* and data into a ``Problem``: w* flattened onto the
device, the data moved there, the loss checked once on a small batch, L_n(w*) and ∇L_n(w*) on the
full data (their finiteness checked, naming the data tensors that hold NaN or inf), nβ and the
batch size. Nothing here draws from the run's generator.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn
from torch.func import functional_call, vmap

from numeric._params import ParamSpec, flatten_params
from numeric.data import data_len, non_finite_parts, signature, take, to_device
from numeric.errors import InvalidInputError
from numeric.memory import require_memory
from numeric.options import LLCOptions, default_nbeta
from numeric.precondition import dense_hessian, difference_hessian

LossFn = Callable[[dict[str, Tensor], Any], Tensor]
HESSIAN_SAMPLES = 16384  # at most this many samples (a fixed random subset) for H at w*
HESSIAN_CHUNK = 2048
# copies of the chains' state a step holds at once (position, noise, gradients, drift, the
# pre-drawn normals of kernel.UNROLL steps, anchors): the memory check's working set
STATE_COPIES = 16
MAX_AUTOMATIC_DRAWS = 20_000  # per chain (numeric.sampling.MAX_DRAWS), for the memory check


class FixedState:
    """The module's buffers and frozen parameters, cast to a run's device and dtype, for
    ``ModuleLoss`` (only where the module's own differ). Compared by identity: a loss holding
    copies is equal only to itself, so a compiled kernel never reuses stale copies."""

    def __init__(self, values: Mapping[str, Tensor]) -> None:
        self.values = dict(values)

    def __repr__(self) -> str:
        return f"FixedState({sorted(self.values)})"


@dataclass(frozen=True)
class ModuleLoss:
    """``loss(module(x...), y)`` with the module's parameters replaced by ``params``.

    Built with ``torch.func.functional_call``; the module's buffers and frozen parameters
    (``requires_grad=False``) are used as they are (held fixed), or as ``fixed`` holds them cast
    to the run's device and dtype (``on``). Two instances without ``fixed`` are equal when
    module and loss are the same objects, so a compiled kernel (``compile=True``) is reused by
    later estimates on the same module.
    """

    module: nn.Module
    loss: Callable[[Tensor, Tensor], Tensor]
    fixed: FixedState | None = None

    def __call__(self, params: dict[str, Tensor], batch: Sequence[Tensor]) -> Tensor:
        if isinstance(batch, Mapping):
            raise InvalidInputError(
                "from_module's loss takes batches as a tuple (x..., y), the module's inputs then "
                f"the target; the data is a dict (keys {list(batch)[:8]}), and which keys are "
                "inputs is not known: pass a tuple of tensors, or write loss_fn(params, batch) "
                "yourself with torch.func.functional_call"
            )
        *xs, y = batch
        state = params if self.fixed is None else {**self.fixed.values, **params}
        return self.loss(functional_call(self.module, state, tuple(xs)), y)

    def on(self, device: torch.device, dtype: torch.dtype) -> ModuleLoss:
        """This loss with the module's fixed state (floating buffers and frozen parameters in
        ``dtype``, all on ``device``) cast where it differs; ``self`` where nothing does."""
        fixed = {}
        for name, t in _fixed_state(self.module).items():
            want = dtype if t.is_floating_point() else t.dtype
            if t.device != device or t.dtype != want:
                fixed[name] = t.detach().to(device, want)
        if not fixed:
            return self
        return ModuleLoss(self.module, self.loss, FixedState(fixed))


def _fixed_state(module: nn.Module) -> dict[str, Tensor]:
    """Buffers and frozen parameters (``requires_grad=False``) of ``module``, by name."""
    state = dict(module.named_buffers())
    state.update((k, p) for k, p in module.named_parameters() if not p.requires_grad)
    return state


def from_module(
    module: nn.Module, loss: Callable[[Tensor, Tensor], Tensor]
) -> tuple[ModuleLoss, dict[str, Tensor]]:
    """``(loss_fn, w*)`` for an ``nn.Module``: ``loss_fn(params, (x..., y)) = loss(module(x...), y)``.

    ``w*`` is a detached copy of the module's trainable parameters (``requires_grad=True``);
    frozen ones are held fixed with the buffers, as in fine-tuning, where the LLC is that of the
    trained part. ``loss`` must return the mean over the batch.
    """
    if not isinstance(module, nn.Module):
        raise InvalidInputError(f"module must be a torch.nn.Module, got {type(module).__name__}")
    if not callable(loss):
        raise InvalidInputError(
            f"loss must be a function (output, target) -> mean loss, got {loss!r}"
        )
    params = {k: v.detach().clone() for k, v in module.named_parameters() if v.requires_grad}
    if not params:
        raise InvalidInputError(
            "the module has no trainable parameters (every one has requires_grad=False)"
        )
    return ModuleLoss(module, loss), params


def check_module_params(loss_fn: ModuleLoss, names: Sequence[str]) -> None:
    """``params`` given with a ``from_module`` loss name the module's trainable parameters, each
    once: no typo (an entry the module ignores would be sampled for nothing), no buffer, no
    tied alias twice, none left out (the module's value would be used silently)."""
    module = loss_fn.module
    canonical: dict[str, str] = {}  # every name of a parameter -> its first name
    first: dict[int, str] = {}
    for name, p in module.named_parameters(remove_duplicate=False):
        canonical[name] = first.setdefault(id(p), name)
    buffers = {k for k, _ in module.named_buffers()}
    if unknown := [k for k in names if k not in canonical and k not in buffers]:
        raise InvalidInputError(
            f"params has {unknown[:8]}, which are not parameters of the loss's module (its "
            f"parameters are {list(canonical)[:24]}): an entry the module does not use would be "
            "sampled without entering the loss"
        )
    if held := [k for k in names if k in buffers]:
        raise InvalidInputError(
            f"params has the module's buffer(s) {held[:8]}: buffers (batch-norm statistics and "
            "the like) are held fixed, not sampled; pass the parameters (from_module's w*), not "
            "state_dict()"
        )
    seen: dict[str, str] = {}
    for k in names:
        if (c := canonical[k]) in seen:
            raise InvalidInputError(
                f"params has {seen[c]!r} and {k!r}, which are the same (tied) parameter of the "
                "module: pass it once"
            )
        seen[c] = k
    trainable = [k for k, p in module.named_parameters() if p.requires_grad]
    if missing := [k for k in trainable if k not in seen]:
        raise InvalidInputError(
            f"params lacks the module's trainable parameter(s) {missing[:8]}, whose current "
            "values in the module would be used silently: pass all of from_module's w*, or "
            "estimate over a subset with numeric.restrict"
        )


# layers whose output in training mode is random or depends on the rest of the batch
TRAIN_MODE_LAYERS = (nn.modules.dropout._DropoutNd, nn.modules.batchnorm._BatchNorm, nn.RReLU)


def train_mode_layers(module: nn.Module) -> list[str]:
    """Names and types of the submodules in training mode that ``TRAIN_MODE_LAYERS`` lists."""
    return [
        f"'{name}' ({type(m).__name__})" if name else f"the module ({type(m).__name__})"
        for name, m in module.named_modules()
        if m.training and isinstance(m, TRAIN_MODE_LAYERS)
    ]


class DataModel:
    """The loss vectorised over chains, its gradients, HVPs and full-data losses."""

    def __init__(self, loss_fn: LossFn, spec: ParamSpec, data: Any, n: int, batch: int) -> None:
        self.spec, self.data, self.n, self.batch = spec, data, n, batch
        self.loss_fn = loss_fn

        def f(flat: Tensor, b: Any) -> Tensor:
            return loss_fn(spec.unflatten(flat), b)

        self.f = f
        self.per_chain = vmap(f, randomness="different")  # params [C, D], batch [C, B, ...]
        self.shared_batch = vmap(f, in_dims=(0, None), randomness="different")

    def indices(self, c: int, gen: torch.Generator, device: torch.device) -> Tensor:
        return torch.randint(self.n, (c, self.batch), generator=gen, device=device)

    def hvp_at(
        self, w: Tensor, gen: torch.Generator, *, difference: bool = False
    ) -> Callable[[Tensor], Tensor]:
        """v ↦ ∇²L_B(w)·v per chain on a fresh minibatch [C, B]: by double backward, or
        (``difference``) by central differences of ∇L_B along v (where autograd's second
        derivative is NaN)."""
        batch = take(self.data, self.indices(w.shape[0], gen, w.device))
        if difference:
            return _difference_hvp(lambda x: self._grad(x, batch), w)
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

    def _grad(self, w: Tensor, batch: Any) -> Tensor:
        with torch.enable_grad():
            ww = w.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(self.per_chain(ww, batch).sum(), ww)
        return g

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
    """Numbers in one sample of the data (all tensors of a tuple or dict)."""
    parts = data.values() if isinstance(data, Mapping) else data
    if isinstance(parts, Tensor):
        parts = (parts,)
    try:
        return sum(math.prod(x.shape[1:]) for x in parts if isinstance(x, Tensor)) or 1
    except TypeError:
        return 1


def check_memory(opts: LLCOptions, w_star: Tensor, n: int, batch: int, data: Any) -> None:
    """Refuse, before any work, a run whose chains, minibatches and traces cannot fit in the
    device's memory, saying how much it would need."""
    c, d, item = opts.num_chains, w_star.numel(), w_star.element_size()
    draws = opts.num_draws if opts.num_draws is not None else MAX_AUTOMATIC_DRAWS
    require_memory(
        {
            "the chains' state": c * d * item * STATE_COPIES,
            "the minibatches": c * batch * _row_numbers(data) * item * 3,
            "the traces": c * draws * (2 * item + 3 * 8),
        },
        w_star.device,
        f"num_chains = {c}, {d} parameters, batch_size = {batch} and "
        + (f"num_draws = {draws}" if opts.num_draws is not None else "automatic draws"),
    )


def _difference_hvp(grad: Callable[[Tensor], Tensor], w: Tensor) -> Callable[[Tensor], Tensor]:
    """v ↦ (∇(w + h·v) − ∇(w − h·v))/(2h) per chain, h = ε_mach^{1/3}·(1 + max|w|)/‖v‖."""
    scale = torch.finfo(w.dtype).eps ** (1 / 3) * (1 + w.abs().amax(-1, keepdim=True))

    def hvp(v: Tensor) -> Tensor:
        h = scale / v.norm(dim=-1, keepdim=True).clamp_min(1e-30)
        return (grad(w + h * v) - grad(w - h * v)) / (2 * h)

    return hvp


def hessian_subset(n: int, seed: int, device: torch.device) -> Tensor:
    """The samples H(w*) is computed on: all n up to ``HESSIAN_SAMPLES``, else that many drawn
    without replacement by a generator seeded ``seed`` (not the run's stream), in order."""
    m = min(n, HESSIAN_SAMPLES)
    if m < n:
        g = torch.Generator().manual_seed(seed)
        return torch.randperm(n, generator=g)[:m].sort().values.to(device)
    return torch.arange(n, device=device)


def full_data_hessian(
    model: DataModel, w_star: Tensor, seed: int, *, difference: bool = False
) -> Tensor:
    """∇²L_n(w*) [D, D] on at most ``HESSIAN_SAMPLES`` samples, chunk by chunk: by double
    backward, or (``difference``) by central differences of the gradient."""
    idx = hessian_subset(model.n, seed, w_star.device)
    m = idx.numel()
    total = w_star.new_zeros(w_star.numel(), w_star.numel())
    for s in range(0, m, HESSIAN_CHUNK):
        part = take(model.data, idx[s : s + HESSIAN_CHUNK])
        size = min(m, s + HESSIAN_CHUNK) - s
        hess = difference_hessian if difference else dense_hessian
        total += hess(lambda w, b=part: model.f(w, b), w_star) * (size / m)
    return total


def check_loss(model: DataModel, w_star: Tensor) -> None:
    """Call the loss once on a small batch, and once as the steps do (vmapped over two chains,
    with its gradient), turning shape errors and untraceable code into clear messages."""
    if not callable(model.loss_fn):
        raise InvalidInputError(
            f"loss_fn must be a function (params, batch) -> mean loss, got {model.loss_fn!r}"
        )
    module = _module_of(model.loss_fn)
    if module is not None and (stochastic := train_mode_layers(module)):
        raise InvalidInputError(
            f"the module is in training mode, where its layers {', '.join(stochastic)} make the "
            "loss random (dropout) or depend on the batch's own statistics (batch norm), so L_n(w) "
            "is not a function of w; call module.eval() before estimating (the LLC is that of the "
            "evaluated model)"
        )
    idx = torch.arange(min(model.n, 16), device=w_star.device)
    try:
        out = model.f(w_star, take(model.data, idx))
    except InvalidInputError:
        raise
    except (RuntimeError, IndexError, TypeError, ValueError, KeyError, AttributeError) as exc:
        raise InvalidInputError(
            f"loss_fn(params, batch) failed on a batch of the data at w*: {exc}. Check that the "
            "parameter shapes match the model and that data is a tuple of tensors whose first "
            "axis indexes samples"
        ) from exc
    if not isinstance(out, Tensor) or out.dim() != 0:
        shape = tuple(out.shape) if isinstance(out, Tensor) else type(out).__name__
        raise InvalidInputError(f"loss_fn must return the mean loss (a scalar), got {shape}")
    check_mean_and_deterministic(model, w_star, idx, out)
    idx = idx[:2]
    try:
        with torch.enable_grad():
            ww = w_star.detach().expand(2, -1).clone().requires_grad_(True)
            losses = model.per_chain(ww, take(model.data, idx.expand(2, -1)))
            torch.autograd.grad(losses.sum(), ww)
    except (RuntimeError, TypeError, ValueError) as exc:
        raise InvalidInputError(
            "loss_fn must be traceable by torch.func.vmap with gradients (the chains are one "
            "batch): no .item() or .numpy(), no Python if/while on tensor values, no in-place "
            f"updates of params or batch. It failed as the steps call it: {exc}"
        ) from exc


def _on_run(loss_fn: LossFn, device: torch.device, dtype: torch.dtype) -> LossFn:
    """``loss_fn`` with a ``from_module`` loss's fixed state on the run's device and dtype
    (``ModuleLoss.on``), also inside ``numeric.restrict``'s wrappers; other losses as given."""
    from numeric.restrict import RestrictedLoss

    if isinstance(loss_fn, ModuleLoss):
        return loss_fn.on(device, dtype)
    if isinstance(loss_fn, RestrictedLoss):
        inner = _on_run(loss_fn.loss_fn, device, dtype)
        if inner is not loss_fn.loss_fn:
            return RestrictedLoss(inner, loss_fn.free, loss_fn.frozen, loss_fn.order)
    return loss_fn


def _module_of(loss_fn: Any) -> nn.Module | None:
    """The module of a loss from ``from_module``, through ``numeric.restrict``'s wrappers."""
    from numeric.restrict import root_module  # restrict builds on this module

    return root_module(loss_fn)


def check_mean_and_deterministic(model: DataModel, w: Tensor, idx: Tensor, out: Tensor) -> None:
    """L(w, b) is a function of w and b (a second call gives the same value), and a mean over
    the batch, not a sum (b taken twice over gives L(w, b), not 2·L(w, b)). Tolerance: 10³
    machine epsilons of |L|, which summation order and GPU atomics stay well inside."""
    a = float(out)
    if not math.isfinite(a):
        return  # the full-data check names the non-finite data
    with torch.no_grad():
        again = float(model.f(w, take(model.data, idx)))
        doubled = float(model.f(w, take(model.data, torch.cat([idx, idx]))))
    tol = 1e3 * torch.finfo(w.dtype).eps * max(abs(a), abs(again), abs(doubled))
    if abs(again - a) > tol:
        raise InvalidInputError(
            f"loss_fn is random: two calls on the same batch at w* gave {a:.6g} and {again:.6g}. "
            "The estimator needs L(w, batch) to depend on w and the batch only: put a module in "
            "eval mode (dropout off), or draw any noise inside loss_fn from a fixed generator"
        )
    if a != 0 and abs(doubled - 2 * a) <= tol and abs(doubled - a) > tol:
        raise InvalidInputError(
            f"loss_fn returns the sum over the batch, not the mean: {a:.6g} on {len(idx)} "
            f"samples, {doubled:.6g} on the same samples twice over. nβ·L_n needs the mean loss "
            "(e.g. reduction='mean')"
        )


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


def setup_problem(
    loss_fn: LossFn, params: Mapping[str, Tensor], data: Any, opts: LLCOptions
) -> Problem:
    """The ``Problem`` of ``estimate_llc(loss_fn, params, data, ...)`` (module docstring)."""
    w_star, spec = flatten_params(params, dtype=opts.dtype, device=opts.device)
    if isinstance(loss_fn, ModuleLoss):
        check_module_params(loss_fn, spec.names)
    loss_fn = _on_run(loss_fn, w_star.device, w_star.dtype)
    n = data_len(data)
    if n < 1:
        raise InvalidInputError("data is empty (n = 0)")
    nbeta, nbeta_rule = default_nbeta(n, opts.nbeta)
    bsz = min(n, 256) if opts.batch_size is None else opts.batch_size
    if bsz > n:
        raise InvalidInputError(
            f"batch_size = {bsz} is more than the n = {n} samples of the data (minibatches are "
            "drawn with replacement; use at most n)"
        )
    check_memory(opts, w_star, n, bsz, data)
    data = to_device(data, w_star.device, w_star.dtype)
    if opts.compile and signature(data) is None:
        raise InvalidInputError(
            "compile=True needs data as a tensor or a tuple of tensors (samples on the first axis)"
        )
    model = DataModel(loss_fn, spec, data, n, bsz)
    check_loss(model, w_star)
    init_loss_t, g_star = model.full_grad(w_star)
    init_loss = float(init_loss_t)
    if not math.isfinite(init_loss):
        bad = non_finite_parts(data)
        verb = "has" if len(bad) == 1 else "have"
        where = f": {', '.join(bad)} {verb} NaN or inf entries" if bad else ""
        raise InvalidInputError(f"L_n(w*) = {init_loss} is not finite{where}")
    if not bool(torch.isfinite(g_star).all()):
        k = int((~torch.isfinite(g_star)).nonzero()[0, 0])
        raise InvalidInputError(
            f"∇L_n(w*) is not finite (first in entry {k} of the flattened parameters): the loss is "
            "not differentiable at w* (check for w ** p with p < 1, sqrt or abs at 0, log of 0)"
        )
    return Problem(model, loss_fn, spec, w_star, g_star, init_loss, n, nbeta, nbeta_rule, bsz)
