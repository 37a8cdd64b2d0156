r"""Whether the chains ended where the step is too large for the curvature.

The automatic ε is c/κ (c = ``step_scale``), κ the largest curvature where the chains were when it
was set (``warmup.step_size``). Where the loss is flat along directions that lead to steeper
regions, the chains drift there: on a deep linear network at w* the GL(h) orbits (W1 → A·W1, W2 →
W2·A⁻¹, …) keep L constant, only γ holds the chains on them, and away from orthogonal W_i the
identifiable directions stiffen. There ε·κ grows past the range the rule certifies and the
integrator's bias raises λ̂. The automatic burn-in re-measures κ as the chains spread and shrinks ε;
a given ``num_burnin`` now does too (``warmup.burn_in.fixed_burn_in``); the draws themselves cannot
change ε, so κ is measured once more where they ended (``Draws.kappa_end``, on a stream of its own)
and ``check_stiffer_in_draws`` reads x = ε·κ_end. Along a direction of curvature κ each step
multiplies the mean by 1 − εκ/2 (BAOAB's update matrix has the same factor in its trace,
``sgld.relaxation_steps``): stable for εκ < 4, overshooting past εκ = 2. What the step does to
λ̂ there depends on the integrator:

- **LM and BAOAB** sample a quadratic direction's Gaussian exactly at any stable step: their bias
  comes only from where the loss departs from quadratic, second order in ε. A warning above
  ``STIFF_WARNING`` = 1 (4× the default c); an error only past the stability edge,
  ``STIFF_UNSTABLE`` = 4, where no step size is sampling. Calibration battery (commit 6256ddb,
  seeds 0–1 on 63 cases, and the 58 before): every firing between 1 and 4 was on a correct
  estimate (the saddle y = x·w0·w1 at n = 10⁴ ended at εκ = 3.3 with λ̂ within 0.6 se of its
  quadrature value, where an error at εκ > 2 was a false alarm).
- **Euler** (overdamped SGLD) inflates the direction's variance to 1/(1 − εκ/4) of the truth, so
  its share of λ̂ (up to ½) rises by ½·(1/(1 − εκ/4) − 1): 0.17 at εκ = 1. An error above
  ``STIFF_WARNING`` unless the step-size check applied its extrapolation to ε → 0 (a warning
  then): a 3-parameter linear regression at εκ = 1.1 read λ̂ = 2.05 ± 0.08 against λ_β = 1.50
  (1/(1 − 0.275) = 1.38×) with only a warning, where the check's bias of 2.3 se fell short of
  its 3 se threshold.

Measured on ``bench_gpu_llc``'s deep linear network at h = 32 (3,072 parameters, 4 chains, batch
256, γ = 1, λ = 512, c = 0.25), before the fixed burn-in re-measured κ: 6,243 burn-in steps and
18,729 draws, no step check, ended at κ_end = 19.6·κ (εκ_end = 4.9) with λ̂ = 707 ± 4 (+38%) and
only warnings; 1,000 + 3,000 steps at 19.5·κ with λ̂ = 529 ± 5 (+3%); the automatic lengths at
2.0·κ with λ̂ = 515 ± 1. At h = 20 (1,200 parameters, λ = 200) the same: 18.7·κ, λ̂ = 285 ± 3
(+42%); 19.2·κ, 213 ± 3; automatic 2.5·κ, 200.8 ± 0.9. With the fixed burn-in's re-measured κ
the two fixed-length runs give 515 ± 2 and 517 ± 3 at h = 32, 202.1 ± 0.7 and 200.5 ± 1.1 at
h = 20.
"""

from __future__ import annotations

import math

from numeric.types import Finding, Tuning

STIFF_WARNING = 1.0  # ε·κ where the draws ended above this: a finding (4× the default c)
STIFF_UNSTABLE = 4.0  # beyond this no step samples (1 − εκ/2 < −1): an error for any integrator
END_CHECK_ITERS = 10  # power-iteration steps of the κ measured where the draws ended


def euler_inflation(x: float) -> float:
    """The variance of Euler's chain along a quadratic direction at ε·κ = x against the truth:
    the AR(1) w ← (1 − x/2)·w + √ε·ξ has stationary variance ε/(1 − (1 − x/2)²) = (1/κ)/(1 − x/4)
    (inf from x = 4)."""
    return math.inf if x >= STIFF_UNSTABLE else 1.0 / (1.0 - x / 4.0)


def check_stiffer_in_draws(
    tuning: Tuning, kappa_end: float, integrator: str = "lm", corrected: bool = False
) -> tuple[Finding, ...]:
    """x = ε·κ_end, κ_end measured where the draws ended (nan: no finding), above
    ``STIFF_WARNING``: an error past ``STIFF_UNSTABLE``, or for Euler steps whose bias the
    step-size check did not extrapolate away (``corrected``); else a warning (module docstring).
    The message compares x with ε·κ at the κ the automatic ε was set for (``tuning.kappa``, nan
    for a given ε)."""
    kappa, eps = tuning.kappa, tuning.step_size
    if not (math.isfinite(kappa_end) and math.isfinite(eps)):
        return ()
    x = eps * kappa_end
    if x <= STIFF_WARNING:
        return ()
    euler = integrator == "euler"
    severity = "error" if x > STIFF_UNSTABLE or (euler and not corrected) else "warning"
    was = (
        f", {kappa_end / kappa:.1f}× the κ = {kappa:.3g} that ε was set for (ε·κ = {eps * kappa:.2g})"
        if math.isfinite(kappa) and kappa > 0
        else ""
    )
    if x > STIFF_UNSTABLE:
        effect = "beyond ε·κ = 4 no step samples: the chains are held only by the loss's growth"
    elif euler:
        effect = (
            f"Euler steps inflate the variance along that direction {euler_inflation(x):.2f}×, "
            f"which raises λ̂ by up to {0.5 * (euler_inflation(x) - 1.0):.2g}"
            + (
                " (the step-size check's extrapolation removes it to first order)"
                if corrected
                else ""
            )
        )
    else:
        effect = (
            f"{integrator.upper()} samples a quadratic direction exactly below ε·κ = 4, so the bias "
            "is only from where the loss departs from quadratic, and is not measured"
        )
    return (
        Finding(
            "stiffer_in_draws",
            severity,
            f"the chains ended where the curvature is κ = {kappa_end:.3g}{was}: ε·κ = {x:.2g} "
            f"at ε = {eps:.3g}; {effect}. They drifted into steeper regions, along directions in "
            "which the loss is flat and only γ holds them. Leave num_burnin None (the automatic "
            "burn-in re-measures κ as the chains spread), pass a smaller step_size or "
            "step_scale, or a larger gamma to keep the chains nearer w*",
            {"kappa": kappa, "kappa_end": kappa_end, "step_kappa": x, "step_size": eps},
        ),
    )
