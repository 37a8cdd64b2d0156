r"""WAIC, the singular fluctuation and susceptibilities from draws of the tempered posterior: of an
estimate's observables (``waic``, ``susceptibility``) and of plain arrays (``waic_from_losses``,
``susceptibility_from_draws``).

::

    est = estimate_llc(loss_fn, params, data, nbeta=n,
                       observables=[per_sample_losses()], ...)
    w = waic(est)        # w.waic, w.singular_fluctuation ± w.singular_fluctuation_stderr
    est = estimate_llc(..., observables={"phi": lambda w: w[:, 0] ** 2})
    chi = susceptibility(est, "phi")   # −Cov(φ, nβ·L_n), L_n from est.full_data

Draws w_s (s = 1…S, pooled over C chains of T draws) of p_β(w) ∝ φ(w)·exp(−β·Σ_i ℓ_i(w)) (β =
nβ/n, ℓ_i the per-sample loss: the negative log-likelihood −log p(x_i | w) up to a constant,
``numeric.draws.observables.PerSampleLosses``; with ``estimate_llc`` φ includes the localisation
exp(−(γ/2)‖w − w*‖²) and the prior). With E_w and Var_w the posterior mean and variance
(Watanabe 2010, JMLR 11, "Asymptotic equivalence of Bayes cross validation and widely
applicable information criterion"; Watanabe 2009, "Algebraic Geometry and Statistical Learning
Theory", ch. 6):

* Bayes training loss T_n = −(1/n)·Σ_i log E_w[exp(−ℓ_i(w))] (the constant of ℓ_i left out);
* Gibbs training loss G_t = (1/n)·Σ_i E_w[ℓ_i(w)] = E_w[L_n(w)];
* functional variance V = Σ_i Var_w[ℓ_i(w)] (constants drop out);
* WAIC = T_n + β·V/n, whose expectation equals that of the Bayes generalisation loss up to
  o(1/n);
* singular fluctuation ν = (β/2)·E[V] asymptotically (the expectation over data sets); the
  finite-sample quantity estimated here is ν_n = (β/2)·V for the data at hand. For a regular,
  realisable model with d parameters ν = d/2 (= λ); in general ν differs from λ.

Estimators: posterior means and variances by the pooled sample means and variances (ddof 1)
over the S draws, T_n by a log-mean-exp. Standard errors are between-chain: the same statistic
computed on each chain alone (c = 1…C), sd over chains / √C (chains independent; each chain's
own sample variance leans low by about its autocorrelation time over its length, which the
spread of the C values does not show: keep draws thinned past it, as the full-loss evaluations
are). nan for one chain.

Susceptibility of an observable φ: χ = −Cov_w(φ(w), nβ·L_n(w)) = dE_w[φ]/d log(nβ) (the
response of the posterior mean of φ to the inverse temperature, the prior and localisation held:
dE_w[φ]/d(nβ) = −Cov_w(φ, L_n)); estimated by the pooled sample covariance (ddof 1), with the
between-chain error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from numeric.errors import InvalidInputError
from numeric.result.llc_estimate import LLCEstimate

__all__ = [
    "WAIC",
    "Susceptibility",
    "susceptibility",
    "susceptibility_from_draws",
    "waic",
    "waic_from_losses",
]


@dataclass(frozen=True)
class WAIC:
    """WAIC and the singular fluctuation from per-sample losses at the draws (module docstring);
    ``*_stderr`` between-chain."""

    waic: float  # T_n + β·V/n
    waic_stderr: float
    training_loss: float  # T_n, the Bayes training loss
    gibbs_training_loss: float  # G_t = E_w[L_n]
    functional_variance: float  # V = Σ_i Var_w[ℓ_i]
    singular_fluctuation: float  # ν = β·V/2
    singular_fluctuation_stderr: float
    beta: float  # nβ/n
    n: int
    num_draws: int  # S, pooled over the chains


def _between_chain(per_chain: np.ndarray) -> float:
    c = per_chain.shape[0]
    return float(np.std(per_chain, ddof=1, axis=0) / math.sqrt(c)) if c >= 2 else math.nan


def _parts(losses: np.ndarray) -> tuple[float, float, float]:
    """(T_n, G_t, V) of draws ``losses`` [S, n]."""
    shifted = -losses - np.max(-losses, axis=0)  # log-mean-exp, sample by sample
    log_pred = np.log(np.mean(np.exp(shifted), axis=0)) + np.max(-losses, axis=0)
    return float(-log_pred.mean()), float(losses.mean()), float(losses.var(axis=0, ddof=1).sum())


def waic_from_losses(losses: np.ndarray, nbeta: float) -> WAIC:
    """``WAIC`` of per-sample losses ℓ_i(w) at the draws, [C, T, n] (β = nβ/n)."""
    x = np.asarray(losses, dtype=np.float64)
    if x.ndim != 3 or x.shape[1] < 2 or x.shape[2] < 1:
        raise InvalidInputError(
            f"per-sample losses must be [chain, draw, sample] with ≥ 2 draws, got {x.shape}"
        )
    if not np.isfinite(x).all():
        raise InvalidInputError("per-sample losses hold NaN or inf (diverged chains?)")
    if not (math.isfinite(nbeta) and nbeta > 0):
        raise InvalidInputError(f"nbeta must be a finite number > 0, got {nbeta!r}")
    c, t, n = x.shape
    beta = nbeta / n
    t_n, g_t, v = _parts(x.reshape(c * t, n))
    per_chain = np.array([_parts(x[k]) for k in range(c)])  # [C, 3]
    waic_c = per_chain[:, 0] + beta * per_chain[:, 2] / n
    nu_c = beta * per_chain[:, 2] / 2
    return WAIC(
        waic=t_n + beta * v / n,
        waic_stderr=_between_chain(waic_c),
        training_loss=t_n,
        gibbs_training_loss=g_t,
        functional_variance=v,
        singular_fluctuation=beta * v / 2,
        singular_fluctuation_stderr=_between_chain(nu_c),
        beta=beta,
        n=n,
        num_draws=c * t,
    )


@dataclass(frozen=True, eq=False)  # arrays: compared by identity
class Susceptibility:
    """χ = −Cov_w(φ, nβ·L_n) per component of φ (shape of one draw of φ; a float for a scalar
    φ), its between-chain standard error, and the draws S pooled."""

    value: np.ndarray | float
    stderr: np.ndarray | float
    num_draws: int


def _neg_cov(phi: np.ndarray, energy: np.ndarray) -> np.ndarray:
    """−Cov(φ, E) over axis 0 (ddof 1): φ [S, ...], E [S]."""
    e = energy - energy.mean()
    p = phi - phi.mean(axis=0)
    return -np.tensordot(e, p, axes=(0, 0)) / (e.shape[0] - 1)


def susceptibility_from_draws(
    phi: np.ndarray, full_loss: np.ndarray, nbeta: float
) -> Susceptibility:
    """``Susceptibility`` of an observable φ [C, T, ...] from L_n at the same draws [C, T]."""
    p = np.asarray(phi, dtype=np.float64)
    f = np.asarray(full_loss, dtype=np.float64)
    if f.ndim != 2 or p.shape[:2] != f.shape or f.shape[1] < 2:
        raise InvalidInputError(
            f"susceptibility needs φ [chain, draw, ...] and L_n [chain, draw] at the same draws "
            f"(≥ 2 each), got {p.shape} and {f.shape}"
        )
    if not (np.isfinite(p).all() and np.isfinite(f).all()):
        raise InvalidInputError("φ or L_n at the draws hold NaN or inf (diverged chains?)")
    c, t = f.shape
    energy = nbeta * f
    pooled = _neg_cov(p.reshape(c * t, *p.shape[2:]), energy.reshape(-1))
    per_chain = np.stack([_neg_cov(p[k], energy[k]) for k in range(c)])
    se = (
        np.std(per_chain, ddof=1, axis=0) / math.sqrt(c) if c >= 2 else np.full_like(pooled, np.nan)
    )
    scalar = p.ndim == 2
    return Susceptibility(float(pooled) if scalar else pooled, float(se) if scalar else se, c * t)


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
