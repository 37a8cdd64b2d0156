r"""An ``LLCEstimate`` as an ArviZ ``InferenceData`` (``to_inference_data``; needs the ``arviz``
extra: ``pip install 'slt-check[arviz]'``).

Groups (dimensions ``chain``, ``draw``; ``chain`` holds the chains' indices in the run):

* ``posterior``:
  ``loss`` = L_B(w_t), the minibatch loss at each draw (``LLCEstimate.loss_trace``);
  ``llc`` = nβ·(L_B(w_t) − R_t), λ̂'s observable per draw, whose mean over chains and draws is λ̂
  (``LLCEstimate.mean``, unless the step-size check replaced it by its extrapolation:
  ``attrs["step_check_applied"]``). R_t = L_B(w*) + ĉ·ℓ_t compares each draw's minibatch loss with
  the loss at w* on the same minibatch and, with the gradient's control variate, regresses out
  the first-order minibatch noise ℓ_t (``numeric.stats.observable``); where ĉ = 0 (no ℓ recorded,
  or not significant: ``attrs["linear_coefficient"]``) it is nβ·(L_B(w_t) − L_B(w*)). Always
  ``llc`` = nβ·``LLCEstimate.delta_trace`` (live chains). nβ·(L_B(w_t) − L_n(w*)), the per-draw
  value some tools report, has the same mean but nβ times the batch-to-batch noise of L_B.
  Then each entry of ``LLCEstimate.observables`` (name → [chain, draw, ...], for every chain
  or the live ones; extra dimensions ``<name>_dim_0``, ...) with one row per draw.
* ``sample_stats``: ``reference_loss`` = R_t (so ``loss − reference_loss = llc / nβ``).
* ``full_data`` (data models with full-data losses only): ``loss`` = L_n(w_t) and
  ``llc`` = nβ·(L_n(w_t) − L_n(w*)), one draw every ``attrs["full_loss_every"]`` steps, and the
  observables recorded there (``numeric.draws.observables``), one row per evaluation.
* ``observable_<name>``: an observable with a draw axis of its own (thinned by ``max_draws``).
  Observables with no rows are left out.

Diverged chains (``on_divergence="continue"``) are left out: λ̂, its ESS and R-hat average over the
live chains only, and a dropped chain's trace after it diverged is NaN or runaway values that
would turn ArviZ's ESS and R-hat into NaN. ``chain`` keeps the run's indices (a dropped chain is a
gap) and ``attrs["diverged_chains"]`` lists the dropped ones. Which chains were dropped is
``LLCEstimate.alive``; for an estimate built without it, it is read from the ``divergence``
finding, or else from the divergence rule itself (a non-finite or exploding nβ·ΔL,
``numeric.sampler.chains.check_block``).

ESS and R-hat: ``LLCEstimate.ess`` is ``az.ess(idata, method="mean")["llc"]`` (Stan's ESS of the
mean on split chains, not ArviZ's default rank-normalised ``"bulk"``; see
``numeric.stats.diagnostics``), and ``LLCEstimate.rhat`` is
``az.rhat(idata, method="rank")["llc"]``, the R-hat of ``az.summary``.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np

from numeric.errors import InvalidInputError

__all__ = ["live_chains", "to_inference_data"]

# ``est`` below is an ``LLCEstimate`` (typed Any: llc_estimate imports this module in its method)

_DEAD_CHAINS = re.compile(r"chains \[([0-9, ]*)\] diverged")
_RESERVED = ("loss", "llc")


def _import_arviz() -> Any:
    try:
        with warnings.catch_warnings():  # arviz 0.2x announces its 1.0 refactor on import
            warnings.simplefilter("ignore", FutureWarning)
            import arviz
    except ImportError as exc:
        raise ImportError(
            "LLCEstimate.to_inference_data needs ArviZ: pip install 'slt-check[arviz]'"
        ) from exc
    return arviz


def live_chains(est: Any) -> np.ndarray:
    """[C] bool: the chains of ``est.loss_trace`` that λ̂ averages (all but the diverged ones).

    ``est.alive`` where the estimate recorded it (every estimate made by ``make_estimate``);
    otherwise ``per_chain`` has one entry per live chain, and where it is shorter than the
    trace the dropped chains are those the ``divergence`` finding names, or else those whose nβ·(L_B − R_t) is
    non-finite or passes the divergence limit 50·(d/2 + 10) somewhere."""
    loss = np.asarray(est.loss_trace, dtype=np.float64)
    num_chains, num_live = loss.shape[0], np.asarray(est.per_chain).size
    recorded = getattr(est, "alive", None)
    if recorded is not None:
        alive = np.asarray(recorded, dtype=bool)
        if alive.shape != (num_chains,) or int(alive.sum()) != num_live:
            raise InvalidInputError(
                f"the estimate's alive mask {alive.shape} with {int(alive.sum())} live chains "
                f"does not match its traces ({num_chains} chains) and per_chain ({num_live})"
            )
        return alive
    if num_live == num_chains:
        return np.ones(num_chains, dtype=bool)
    for f in est.diagnostics:
        m = _DEAD_CHAINS.search(f.message) if f.code == "divergence" else None
        if m is not None:
            dead = [int(s) for s in m.group(1).split(",") if s.strip()]
            alive = np.ones(num_chains, dtype=bool)
            alive[[c for c in dead if 0 <= c < num_chains]] = False
            if alive.sum() == num_live:
                return alive
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = est.nbeta * (loss - np.asarray(est.ref_loss_trace, dtype=np.float64))
        limit = 50.0 * (est.config.num_params / 2 + 10.0)
        alive = np.isfinite(scaled).all(axis=1) & ~(scaled > limit).any(axis=1)
    if alive.sum() != num_live:
        raise InvalidInputError(
            f"cannot tell which {num_chains - num_live} of the {num_chains} chains diverged: "
            f"per_chain has {num_live} entries, and neither the divergence finding nor the "
            f"traces name that many"
        )
    return alive


def _observables(est: Any, alive: np.ndarray) -> dict[str, np.ndarray]:
    """``est.observables`` (absent or empty: none) as [live chain, draw, ...] arrays."""
    found = getattr(est, "observables", None) or {}
    num_chains, num_live = est.loss_trace.shape[0], int(alive.sum())
    out = {}
    for name, value in found.items():
        x = np.asarray(value)
        if name in _RESERVED:
            raise InvalidInputError(
                f"observable {name!r} clashes with the posterior's own {name!r}"
            )
        if x.ndim < 2 or x.shape[0] not in (num_chains, num_live):
            raise InvalidInputError(
                f"observable {name!r} has shape {x.shape}; expected [chain, draw, ...] with "
                f"{num_chains} (or {num_live} live) chains"
            )
        out[str(name)] = x[alive] if x.shape[0] == num_chains else x
    return out


def _groups(est: Any, alive: np.ndarray) -> dict[str, dict[str, np.ndarray]]:
    """The variables of each group [live chain, draw, ...]: per-draw traces (and observables of
    as many draws) in ``posterior``, full-data ones in ``full_data``, other observables apart."""
    loss = np.asarray(est.loss_trace, dtype=np.float64)[alive]
    ref = np.asarray(est.ref_loss_trace, dtype=np.float64)[alive]
    groups: dict[str, dict[str, np.ndarray]] = {
        "posterior": {"loss": loss, "llc": est.nbeta * (loss - ref)},
        "sample_stats": {"reference_loss": ref},
    }
    full = est.full_data
    if full is not None and full.loss_trace.ndim == 2 and full.loss_trace.shape[0] == alive.sum():
        full_loss = np.asarray(full.loss_trace, dtype=np.float64)
        groups["full_data"] = {"loss": full_loss, "llc": est.nbeta * (full_loss - est.init_loss)}
    for name, x in _observables(est, alive).items():
        if x.shape[1] == 0:  # none taken (the draws ended before the first evaluation)
            continue
        if x.shape[1] == loss.shape[1]:
            groups["posterior"][name] = x
        elif "full_data" in groups and x.shape[1] == groups["full_data"]["loss"].shape[1]:
            groups["full_data"][name] = x
        else:  # thinned (``max_draws``): a draw axis of its own
            groups[f"observable_{name}"] = {name: x}
    return groups


def _attrs(est: Any, alive: np.ndarray) -> dict[str, Any]:
    """The run's settings and results as netCDF-safe attributes (numbers, strings, int arrays)."""
    c = est.config
    attrs: dict[str, Any] = {
        "inference_library": "slt-check",
        "nbeta": float(est.nbeta),
        "nbeta_rule": c.nbeta_rule,
        "gamma": c.gamma,
        "prior_precision": c.prior_precision,
        "step_size": c.step_size,
        "step_size_rule": c.step_size_rule,
        "n": c.n,
        "seed": c.seed,
        "sampler": c.sampler,
        "integrator": c.integrator,
        "gradient": c.gradient,
        "num_burnin": c.num_burnin,
        "init_loss": float(est.init_loss),
        "linear_coefficient": float(est.linear_coefficient),
        "llc": float(est.mean),
        "llc_stderr": float(est.stderr),
        "ess": float(est.ess),
        "rhat": float(est.rhat),
        "step_check_applied": int(est.step_check is not None and est.step_check.applied),
        "diverged_chains": np.flatnonzero(~alive).astype(np.int64),
    }
    if c.batch_size is not None:
        attrs["batch_size"] = c.batch_size
    if c.full_loss_every is not None:
        attrs["full_loss_every"] = c.full_loss_every
    return attrs


def to_inference_data(est: Any) -> Any:
    """``est`` as an ``arviz.InferenceData`` (the module docstring lists the groups; diverged
    chains are left out). Raises ImportError naming the ``arviz`` extra when ArviZ is missing."""
    az = _import_arviz()
    alive = live_chains(est)
    coords = {"chain": np.flatnonzero(alive)}
    groups = _groups(est, alive)
    idata = az.from_dict(
        posterior=groups.pop("posterior"), sample_stats=groups.pop("sample_stats"), coords=coords
    )
    if groups:
        idata.add_groups(
            {name: az.convert_to_dataset(v, coords=coords) for name, v in groups.items()}
        )
    attrs = _attrs(est, alive)
    for name in idata.groups():
        idata[name].attrs.update(attrs)
    return idata
