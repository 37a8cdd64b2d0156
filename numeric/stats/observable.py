r"""λ̂'s observable per draw, with the first-order part of its minibatch noise regressed out.

Each draw compares losses on its own minibatch B_t: d_t = L_{B_t}(w_t) − L_{B_t}(w*), an unbiased
estimate of L_n(w_t) − L_n(w*) whose batch-to-batch noise is led, near w*, by the linear term
ℓ_t = (∇L_{B_t}(w*) − ∇L_n(w*))·(w_t − w*). ℓ_t has mean zero exactly (B_t is drawn with
replacement, independently of w_t), but its share of λ̂ = nβ·E[d] grows as √nβ: on a
least-squares fit (n = 200) λ̂'s standard error was 0.23 at nβ = 10⁶ and 0.66 at 10⁷, against 0.05
from full-data losses. With the gradient's control variate the step has L_{B_t} and ∇L_{B_t} at
its centre a_t anyway (w*, or a chain's anchor nearer to w_t: ``gradients.centre``), so it records
the first-order noise of d_t about a_t (``gradients.batch_noise``, ``sgld.GradientEval.linear``),

    ℓ_t = (L_{B_t}(a_t) − L_{B_t}(w*) − (L_n(a_t) − L_n(w*)))
          + (∇L_{B_t}(a_t) − ∇L_n(a_t))·(w_t − a_t),

ℓ_t above where a_t = w*, and again of mean zero (a_t is chosen before B_t). The estimate uses

    d_t − ĉ·ℓ_t,   ĉ = Σ (d_t − d̄)·ℓ_t / Σ ℓ_t²   (over the live chains' draws),

the coefficient that minimises the per-draw variance (E[ℓ] = 0 is known, so no intercept),
taken only where it is significant (|t| ≥ 4, ``linear_coefficient``; else ĉ = 0). Far from
w*, where d is no longer led by its linear term, ĉ falls towards 0 by itself: a fixed ĉ = 1
(tried first) raised R-hat on the report's quadratic network from 1.002 to 1.19. Estimating ĉ on
the same draws biases the mean by O(1/(C·T)) of ℓ's covariance with d, far below the error bar.
The estimate and the step-size check read this observable; the run's lengths (burn-in, added
draws) are still chosen from d itself, and the divergence check reads both (``chains.check_block``).
Plain minibatch gradients (``gradient="minibatch"``) compute no ∇L_B at a fixed point, so there
ℓ is not recorded and ĉ = 0.
"""

from __future__ import annotations

import math

import numpy as np

from numeric.types import Trace

T_MIN = 4.0  # the least |t| of ĉ at which ℓ is regressed out (``linear_coefficient``)


def linear_coefficient(delta: np.ndarray, lin: np.ndarray) -> float:
    """ĉ = Σ (d − d̄)·ℓ / Σ ℓ² over all entries of ``delta`` and ``lin`` (same shape), where ℓ
    explains d at |t| ≥ ``T_MIN`` (t² = ĉ²·Σ ℓ² / s², s² the residual variance); else 0, as where
    Σ ℓ² is zero or not finite. ℓ_t has mean zero given the past and w_t (B_t is drawn afresh),
    so under no relation t is about N(0, 1) whatever d's autocorrelation, and 4 is a 4σ
    detection; where ℓ matters (nβ ≫ n) t is in the hundreds. Below it ĉ fits chance or
    rounding: on a teacher with noise-free labels ℓ is ~10⁻¹⁸, ĉ came out ±5·10¹⁴, and λ̂ moved
    with the rounding (compiled 2.3403 against eager 2.3356, same draws)."""
    d = np.asarray(delta, dtype=np.float64)
    ell = np.asarray(lin, dtype=np.float64)
    if d.shape != ell.shape:
        raise ValueError(f"delta {d.shape} and lin {ell.shape} differ in shape")
    if d.size < 3:
        return 0.0
    ss = float(np.square(ell).sum())
    if not (math.isfinite(ss) and ss > 0.0):
        return 0.0
    centred = d - d.mean()
    c = float((centred * ell).sum()) / ss
    if not math.isfinite(c):
        return 0.0
    s2 = float(np.square(centred - c * ell).sum()) / (d.size - 2)
    return c if c * c * ss >= T_MIN**2 * s2 else 0.0


def references(trace: Trace, alive: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(L_B(w_t) [C, T], the reference R_t = L_B(w*) + ĉ·ℓ_t [C, T], ĉ), in float64, every chain
    (ĉ from the live ones and added to them only; ĉ = 0 where ℓ was not recorded)."""
    loss = trace.loss.double().cpu().numpy()
    ref = trace.ref.double().cpu().numpy()
    if trace.lin is None:
        return loss, ref, 0.0
    lin = trace.lin.double().cpu().numpy()
    c = linear_coefficient((loss - ref)[alive], lin[alive])
    if c == 0.0:
        return loss, ref, c
    return loss, np.where(alive[:, None], ref + c * lin, ref), c


def observable(trace: Trace, alive: np.ndarray) -> np.ndarray:
    """d_t − ĉ·ℓ_t [live chain, step] in float64 (the module docstring)."""
    loss, ref, _ = references(trace, alive)
    return (loss - ref)[alive]
