r"""Other LLC estimators in the shape :func:`~verification.calibration.calibrate` scores.

An estimator is ``estimator(case, built, seed)`` returning an object with ``mean``, ``stderr``,
``diagnostics`` (findings with ``code`` and ``severity``), ``nbeta`` and ``config.gamma``:

* :func:`paper_sgld_estimator` — the paper procedure (``verification.experiments.paper_sgld``) at
  the paper code's settings: ε = 10⁻⁵, γ = 10, 5,000 steps, B = 100, nβ = n/log n, minibatch loss
  trace, no burn-in, with 4 chains (the paper code runs 1) so that λ̂ has a standard error, the
  across-chain one. It has no findings: ``diagnostics`` is empty. Data cases and potentials.
* :func:`devinterp_estimator` — devinterp 1.3.2's ``estimate_learning_coeff_with_summary`` (the
  ``bench`` extra), ``settings="defaults"``: its documented defaults, SGLD at lr = 0.01,
  localization γ = 0, nβ = ``default_nbeta(loader)`` = B/log B, 10 chains × 100 draws, no
  burn-in, init_loss the mean minibatch loss at w* over 10 batches; or ``"recommended"``: the
  settings of its examples, lr = 4·10⁻⁴, γ = 100, 200 draws (the rest as the defaults). The loader
  (devinterp has no default batch size: a ``DataLoader``'s 1 gives nβ = 1) has B = 256,
  ``shuffle=True``. devinterp reports no standard error: ``stderr`` is the across-chain one,
  sd(λ̂_c)/√C (ddof 1). Data cases only. devinterp seeds each chain through torch's global
  generator; the adapter restores that generator's state afterwards.

Case ``kwargs`` that these estimators understand (``nbeta``, ``gamma``; ``batch_size`` and
``step_size`` for the paper procedure) are applied; any other raises, so that calibrate records a
failed run rather than an estimate at settings the target does not assume.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import torch
from torch import Tensor

from ..errors import InvalidArgumentError
from ..experiments.paper_sgld import PaperSGLDOptions, paper_sgld, paper_sgld_potential
from .cases import BatteryCase, Built

__all__ = ["DevinterpSettings", "ForeignEstimate", "devinterp_estimator", "paper_sgld_estimator"]

PAPER_KWARGS = ("nbeta", "gamma", "batch_size", "step_size")
DEVINTERP_KWARGS = ("nbeta", "gamma")


def _case_options(case: BatteryCase, allowed: tuple[str, ...], who: str) -> dict[str, Any]:
    extra = sorted(set(case.kwargs) - set(allowed))
    if extra:
        raise InvalidArgumentError(
            f"{who} cannot run case {case.name!r} as specified: settings {extra} have no "
            f"counterpart (it takes {list(allowed)})"
        )
    return dict(case.kwargs)


def paper_sgld_estimator(case: BatteryCase, built: Built, seed: int, **options: Any) -> Any:
    """The paper procedure on a battery case; ``options`` override ``PaperSGLDOptions`` fields
    (after the case's own ``nbeta``/``gamma``)."""
    fields = {**_case_options(case, PAPER_KWARGS, "paper_sgld_estimator"), **options}
    opts = replace(PaperSGLDOptions(), **fields)
    if case.kind == "potential":
        K, w_star, n = built.args
        return paper_sgld_potential(K, w_star, n, opts, seed=seed)
    loss_fn, params, data = built.args
    return paper_sgld(loss_fn, params, data, opts, seed=seed)


@dataclass(frozen=True)
class DevinterpSettings:
    """What devinterp ran at: SGLD's ``lr`` and ``localization`` (γ, also as ``gamma``), nβ, the
    loader's batch size, chains, draws and burn-in steps."""

    name: str
    lr: float
    gamma: float
    nbeta: float
    batch_size: int
    num_chains: int
    num_draws: int
    num_burnin_steps: int


@dataclass(frozen=True)
class ForeignEstimate:
    """Another library's λ̂ in calibrate's shape: no findings, the across-chain stderr."""

    mean: float
    stderr: float
    per_chain: tuple[float, ...]
    nbeta: float
    config: DevinterpSettings
    seconds: float
    diagnostics: tuple = field(default=())


DEVINTERP_SETTINGS = {
    "defaults": dict(lr=0.01, localization=0.0, num_chains=10, num_draws=100),
    "recommended": dict(lr=4e-4, localization=100.0, num_chains=10, num_draws=200),
}


class _Params(torch.nn.Module):
    """w* as a module: devinterp samples ``model.parameters()``; the loss gets them by name."""

    def __init__(self, params: Mapping[str, Tensor]) -> None:
        super().__init__()
        self.names = list(params)
        self.values = torch.nn.ParameterList(
            torch.nn.Parameter(v.detach().clone()) for v in params.values()
        )

    def as_dict(self) -> dict[str, Tensor]:
        return dict(zip(self.names, self.values))


def devinterp_estimator(
    case: BatteryCase,
    built: Built,
    seed: int,
    *,
    settings: Literal["defaults", "recommended"] = "defaults",
    batch_size: int = 256,
) -> ForeignEstimate:
    """devinterp 1.3.2's λ̂ on a data case (module docstring for the two ``settings``)."""
    try:
        from devinterp.optim.sgld import SGLD
        from devinterp.slt.sampler import estimate_learning_coeff_with_summary
        from devinterp.utils import default_nbeta
    except ImportError as exc:
        raise ImportError(
            "devinterp_estimator needs devinterp 1.3.2 (2.x samples only language models): "
            "pip install 'slt-check[bench]'"
        ) from exc
    if settings not in DEVINTERP_SETTINGS:
        raise InvalidArgumentError(
            f"settings must be one of {list(DEVINTERP_SETTINGS)}, got {settings!r}"
        )
    if case.kind != "data":
        raise InvalidArgumentError(
            f"devinterp_estimator runs data cases (a model and a loader), not the potential "
            f"{case.name!r}"
        )
    given = _case_options(case, DEVINTERP_KWARGS, "devinterp_estimator")
    loss_fn, params, data = built.args
    if not isinstance(data, tuple | list) or not all(isinstance(x, Tensor) for x in data):
        raise InvalidArgumentError("devinterp_estimator needs the data as a tuple of tensors")
    from torch.utils.data import DataLoader, TensorDataset

    base = DEVINTERP_SETTINGS[settings]
    loader = DataLoader(TensorDataset(*data), batch_size=batch_size, shuffle=True)
    nbeta = float(given.get("nbeta", default_nbeta(loader)))
    gamma = float(given.get("gamma", base["localization"]))
    model = _Params(params)

    def evaluate(m: _Params, batch: Any) -> Tensor:
        return loss_fn(m.as_dict(), tuple(batch))

    t0 = time.perf_counter()
    with warnings.catch_warnings(), torch.random.fork_rng():
        warnings.simplefilter("ignore")  # its deprecation and "more draws than burn-in" notes
        out = estimate_learning_coeff_with_summary(
            model,
            loader,
            evaluate=evaluate,
            sampling_method=SGLD,
            optimizer_kwargs=dict(lr=base["lr"], localization=gamma, nbeta=nbeta),
            num_chains=base["num_chains"],
            num_draws=base["num_draws"],
            num_burnin_steps=0,
            seed=seed,
            device="cpu",
            verbose=False,
        )
    seconds = time.perf_counter() - t0
    c = base["num_chains"]
    per_chain = tuple(float(out[f"llc-chain/{i}"]) for i in range(c))
    mean = sum(per_chain) / c
    sd = math.sqrt(sum((x - mean) ** 2 for x in per_chain) / (c - 1))
    config = DevinterpSettings(
        settings, base["lr"], gamma, nbeta, batch_size, c, base["num_draws"], 0
    )
    return ForeignEstimate(
        float(out["llc/mean"]), sd / math.sqrt(c), per_chain, nbeta, config, seconds
    )
