"""Optimizer specifications (SGD, momentum, Adam/AdamW, entropy-SGD) and entropy-SGD itself.

An ``OptimizerSpec`` is a frozen record of the optimizer and its settings; ``build(params,
generator)`` makes the torch optimizer. The generator is used by entropy-SGD's Langevin noise only
(the others are deterministic given the minibatches).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal, get_args

import torch
from torch import Tensor
from torch.optim import Optimizer

from .._validate import check_bool, check_int, check_real
from ..errors import InvalidArgumentError
from .records import Record

OptimizerKind = Literal["sgd", "adam", "adamw", "entropy_sgd"]
KINDS: tuple[str, ...] = get_args(OptimizerKind)


def with_momentum(state: dict, direction: Tensor, momentum: float, nesterov: bool) -> Tensor:
    """The step direction after (Nesterov) momentum, as torch's SGD: v ← m·v + d (v₀ = d), then
    d + m·v (Nesterov) or v; ``direction`` itself where m = 0. ``state`` is the parameter's
    optimizer state (its ``"velocity"`` is v)."""
    if not momentum:
        return direction
    v = state.get("velocity")
    if v is None:
        v = state["velocity"] = direction.clone()
    else:
        v.mul_(momentum).add_(direction)
    return direction.add(v, alpha=momentum) if nesterov else v


class EntropySGD(Optimizer):
    r"""Entropy-SGD (Chaudhari et al. 2017, Algorithm 1).

    One outer step at x, with ``L`` inner Langevin steps on f(x') + (γ/2)‖x − x'‖² from x' = x:

        g' = ∇f_B(x') − γ·(x − x'),   x' ← x' − η'·g' + √η'·ε·ξ,   μ ← (1 − α)·μ + α·x'   (μ₀ = x)

    with a fresh minibatch B per inner step (the closure draws it) and ξ ~ N(0, I); then the outer
    update with g = x − μ (the gradient of the local entropy up to the factor γ, which, as in the
    authors' code, is absorbed in η): v ← m·v + g (v₀ = g), x ← x − η·(g + m·v if Nesterov else v);
    m = 0 gives x ← x − η·g. The scope grows per outer step t: γ_t = γ₀·(1 + γ₁)^t.

    ``inner_momentum``: the inner steps move along the same momentum rule applied to g', with
    their velocity started afresh at each outer step (u₀ = g', u ← m·u + g'), as the code of Lau
    et al.'s entropy-SGD experiment runs it (``EntropySGD.py`` in
    ``edmundlth/scalable_learning_coefficient_with_sgld``: one ``momentum`` for both loops).
    """

    def __init__(
        self,
        params: Iterable[Tensor],
        lr: float,
        *,
        inner_steps: int = 20,
        inner_lr: float = 0.1,
        noise: float = 1e-4,
        scope: float = 1e-4,
        scope_growth: float = 1e-3,
        averaging: float = 0.75,
        momentum: float = 0.0,
        nesterov: bool = False,
        inner_momentum: bool = False,
        generator: torch.Generator | None = None,
    ) -> None:
        if inner_steps < 1:
            raise ValueError(f"inner_steps must be at least 1, not {inner_steps}")
        if not 0 < averaging <= 1:
            raise ValueError(f"averaging α must lie in (0, 1], not {averaging}")
        defaults = dict(lr=lr, inner_lr=inner_lr, noise=noise, momentum=momentum, nesterov=nesterov)
        super().__init__(params, defaults)
        self.inner_steps, self.scope, self.scope_growth = inner_steps, scope, scope_growth
        self.averaging, self.generator, self.outer_steps = averaging, generator, 0
        self.inner_momentum = inner_momentum

    def _params(self) -> list[tuple[dict, Tensor]]:
        return [(g, p) for g in self.param_groups for p in g["params"]]

    @torch.no_grad()
    def step(self, closure: Callable[[], Tensor] | None = None) -> Tensor:  # type: ignore[override]
        if closure is None:
            raise ValueError("EntropySGD.step needs a closure that draws a minibatch and backprops")
        pairs = self._params()
        x = [p.detach().clone() for _, p in pairs]
        mu = [p.detach().clone() for _, p in pairs]
        gamma = self.scope * (1 + self.scope_growth) ** self.outer_steps
        loss = torch.tensor(math.nan)
        inner: list[dict] = [{} for _ in pairs]  # the inner loop's velocities, fresh each step
        for _ in range(self.inner_steps):
            with torch.enable_grad():
                loss = closure()
            for (group, p), x0, m, state in zip(pairs, x, mu, inner):
                g = torch.zeros_like(p) if p.grad is None else p.grad.detach().clone()
                g.add_(x0 - p, alpha=-gamma)
                if self.inner_momentum:
                    g = with_momentum(state, g, group["momentum"], group["nesterov"])
                p.add_(g, alpha=-group["inner_lr"])
                if group["noise"]:
                    xi = torch.randn(p.shape, generator=self.generator, dtype=p.dtype)
                    p.add_(xi.to(p.device), alpha=math.sqrt(group["inner_lr"]) * group["noise"])
                m.mul_(1 - self.averaging).add_(p, alpha=self.averaging)
        for (group, p), x0, m in zip(pairs, x, mu):
            g = with_momentum(self.state[p], x0 - m, group["momentum"], group["nesterov"])
            p.copy_(x0 - group["lr"] * g)
        self.outer_steps += 1
        return loss


@dataclass(frozen=True)
class OptimizerSpec(Record):
    """An optimizer and its settings; the entropy-SGD fields are used by ``kind="entropy_sgd"``."""

    kind: OptimizerKind
    lr: float
    momentum: float = 0.0
    nesterov: bool = False
    weight_decay: float = 0.0
    inner_steps: int = 20
    inner_lr: float = 0.1
    noise: float = 1e-4
    scope: float = 1e-4
    scope_growth: float = 1e-3
    averaging: float = 0.75
    inner_momentum: bool = False

    def __post_init__(self) -> None:
        """Every setting checked (a bad one otherwise fails, or is used, at the first step)."""
        if self.kind not in KINDS:
            raise InvalidArgumentError(f"kind must be one of {KINDS}, got {self.kind!r}")
        put = functools.partial(object.__setattr__, self)
        put("lr", check_real("learning rate lr", self.lr, 0.0, open_lo=True))
        for name in ("momentum", "weight_decay", "noise", "scope", "scope_growth"):
            put(name, check_real(name, getattr(self, name), 0.0))
        put("inner_lr", check_real("inner_lr", self.inner_lr, 0.0, open_lo=True))
        put("averaging", check_real("averaging", self.averaging, 0.0, 1.0, open_lo=True))
        put("inner_steps", check_int("inner_steps", self.inner_steps, 1, 10**6))
        check_bool("nesterov", self.nesterov)
        check_bool("inner_momentum", self.inner_momentum)
        if self.nesterov and not self.momentum:
            raise ValueError("Nesterov momentum needs momentum > 0")
        if self.kind == "entropy_sgd" and self.weight_decay:
            raise ValueError("entropy-SGD here has no weight decay")

    @property
    def label(self) -> str:
        """A short name for plots: "SGD", "SGD+Nesterov(0.9)", "AdamW(wd=0.01)", "entropy-SGD"."""
        if self.kind == "entropy_sgd":
            return f"entropy-SGD(L={self.inner_steps})"
        name = {"sgd": "SGD", "adam": "Adam", "adamw": "AdamW"}[self.kind]
        if self.momentum:
            name += f"+{'Nesterov' if self.nesterov else 'momentum'}({self.momentum:g})"
        if self.weight_decay:
            name += f"(wd={self.weight_decay:g})"
        return name

    def build(self, params: Iterable[Tensor], generator: torch.Generator) -> Optimizer:
        """The torch optimizer over ``params``; ``generator`` drives entropy-SGD's noise."""
        if self.kind == "sgd":
            return torch.optim.SGD(
                params,
                lr=self.lr,
                momentum=self.momentum,
                nesterov=self.nesterov,
                weight_decay=self.weight_decay,
            )
        if self.kind == "adam":
            return torch.optim.Adam(params, lr=self.lr, weight_decay=self.weight_decay)
        if self.kind == "adamw":
            return torch.optim.AdamW(params, lr=self.lr, weight_decay=self.weight_decay)
        if self.kind == "entropy_sgd":
            return EntropySGD(
                params,
                self.lr,
                inner_steps=self.inner_steps,
                inner_lr=self.inner_lr,
                noise=self.noise,
                scope=self.scope,
                scope_growth=self.scope_growth,
                averaging=self.averaging,
                momentum=self.momentum,
                nesterov=self.nesterov,
                inner_momentum=self.inner_momentum,
                generator=generator,
            )
        raise ValueError(f"unknown optimizer kind {self.kind!r}")


def sgd(
    lr: float, momentum: float = 0.0, *, nesterov: bool = False, weight_decay: float = 0.0
) -> OptimizerSpec:
    """Plain SGD, or with (Nesterov) momentum and L2 weight decay."""
    return OptimizerSpec("sgd", lr, momentum=momentum, nesterov=nesterov, weight_decay=weight_decay)


def adam(lr: float, weight_decay: float = 0.0) -> OptimizerSpec:
    """Adam (weight decay added to the gradient, L2)."""
    return OptimizerSpec("adam", lr, weight_decay=weight_decay)


def adamw(lr: float, weight_decay: float = 0.01) -> OptimizerSpec:
    """AdamW (decoupled weight decay)."""
    return OptimizerSpec("adamw", lr, weight_decay=weight_decay)


def entropy_sgd(
    lr: float,
    *,
    inner_steps: int = 20,
    inner_lr: float = 0.1,
    noise: float = 1e-4,
    scope: float = 1e-4,
    scope_growth: float = 1e-3,
    averaging: float = 0.75,
    momentum: float = 0.0,
    nesterov: bool = False,
    inner_momentum: bool = False,
) -> OptimizerSpec:
    """Entropy-SGD (``EntropySGD``): ``inner_steps`` Langevin steps per outer step."""
    return OptimizerSpec(
        "entropy_sgd",
        lr,
        momentum=momentum,
        nesterov=nesterov,
        inner_momentum=inner_momentum,
        inner_steps=inner_steps,
        inner_lr=inner_lr,
        noise=noise,
        scope=scope,
        scope_growth=scope_growth,
        averaging=averaging,
    )
