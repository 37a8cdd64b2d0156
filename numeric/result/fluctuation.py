r"""WAIC, the singular fluctuation ν and susceptibilities χ of an estimate's observables
(``waic``, ``susceptibility``; the statistics and their maths: ``numeric.stats.fluctuation``).

::

    est = estimate_llc(loss_fn, params, data, nbeta=n,
                       observables=[per_sample_losses()], ...)
    w = waic(est)        # w.waic, w.singular_fluctuation ± w.singular_fluctuation_stderr
    est = estimate_llc(..., observables={"phi": lambda w: w[:, 0] ** 2})
    chi = susceptibility(est, "phi")   # −Cov(φ, nβ·L_n), L_n from est.full_data
"""

from __future__ import annotations

from numeric.errors import InvalidInputError
from numeric.result.llc_estimate import LLCEstimate
from numeric.stats.fluctuation import (
    WAIC,
    Susceptibility,
    susceptibility_from_draws,
    waic_from_losses,
)

__all__ = ["susceptibility", "waic"]


def _observable(est: LLCEstimate, name: str) -> object:
    if name not in est.observables:
        have = ", ".join(repr(k) for k in est.observables) or "none"
        raise InvalidInputError(
            f"the estimate has no observable {name!r} (it has {have}): pass it in "
            "estimate_llc(..., observables=...)"
        )
    return est.observables[name]


def waic(est: LLCEstimate, name: str = "per_sample_loss") -> WAIC:
    """WAIC = T_n + β·V/n and ν = β·V/2 (β = nβ/n) from the per-sample losses ``name``
    [chain, draw, n] recorded at the draws (``numeric.per_sample_losses``)."""
    losses = _observable(est, name)
    if getattr(losses, "ndim", 0) != 3 or losses.shape[2] != est.config.n:
        raise InvalidInputError(
            f"observable {name!r} has shape {getattr(losses, 'shape', None)}, not [chain, draw, "
            f"n = {est.config.n}]: WAIC needs every sample's loss (numeric.per_sample_losses)"
        )
    return waic_from_losses(losses, est.nbeta)


def susceptibility(est: LLCEstimate, name: str) -> Susceptibility:
    """χ = −Cov_w(φ, nβ·L_n) of observable ``name`` [chain, draw, ...] with the full-data losses
    at the same draws (``est.full_data.loss_trace``: live chains; an observable thinned by
    ``max_draws``, or chains dropped after a divergence, do not line up and are refused)."""
    phi = _observable(est, name)
    if est.full_data is None:
        raise InvalidInputError("the estimate has no full-data losses (full_loss_every=0)")
    loss = est.full_data.loss_trace
    if getattr(phi, "shape", ())[:2] != loss.shape:
        raise InvalidInputError(
            f"observable {name!r} [chain, draw] = {getattr(phi, 'shape', ())[:2]} does not line "
            f"up with the full-data losses {loss.shape} (thinned by max_draws, or diverged "
            "chains dropped)"
        )
    return susceptibility_from_draws(phi, loss, est.nbeta)
