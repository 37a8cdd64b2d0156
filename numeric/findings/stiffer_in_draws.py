r"""Whether the chains ended where the step is too large for the curvature.

The automatic ε is c/κ (c = ``step_scale``), κ the largest curvature where the chains were when it
was set (``warmup.step_size``). Where the loss is flat along directions that lead to steeper
regions, the chains drift there: on a deep linear network at w* the GL(h) orbits (W1 → A·W1, W2 →
W2·A⁻¹, …) keep L constant, only γ holds the chains on them, and away from orthogonal W_i the
identifiable directions stiffen. There ε·κ grows past the range the rule certifies and the
integrator's bias raises λ̂. The automatic burn-in re-measures κ as the chains spread and shrinks ε;
a given ``num_burnin`` now does too (``warmup.burn_in.fixed_burn_in``); the draws themselves cannot
change ε, so κ is measured once more where they ended (``Draws.kappa_end``, on a stream of its own)
and ``check_stiffer_in_draws`` reads x = ε·κ_end. LM multiplies the mean along a direction of
curvature κ by 1 − εκ/2 per step (BAOAB's update matrix has the same factor in its trace,
``sgld.relaxation_steps``): stable for εκ < 4, overshooting past εκ = 2. An error above
``STIFF_ERROR`` = 2, a warning above ``STIFF_WARNING`` = 1 (4× the default c). The ratio κ_end/κ
alone says little: a preconditioned quadratic network ended at κ_end = 4.2·κ, εκ_end = 1.04,
with λ̂ within its error of the exact value.

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

STIFF_WARNING = 1.0  # ε·κ where the draws ended above this: a warning (4× the default c)
STIFF_ERROR = 2.0  # above this an error: the step overshoots (1 − εκ/2 < 0)
END_CHECK_ITERS = 10  # power-iteration steps of the κ measured where the draws ended


def check_stiffer_in_draws(tuning: Tuning, kappa_end: float) -> tuple[Finding, ...]:
    """x = ε·κ_end, κ_end measured where the draws ended (nan: no finding): a warning above
    ``STIFF_WARNING``, an error above ``STIFF_ERROR``; the message compares it with ε·κ at
    the κ the automatic ε was set for (``tuning.kappa``, nan for a given ε)."""
    kappa, eps = tuning.kappa, tuning.step_size
    if not (math.isfinite(kappa_end) and math.isfinite(eps)):
        return ()
    x = eps * kappa_end
    if x <= STIFF_WARNING:
        return ()
    severity = "error" if x > STIFF_ERROR else "warning"
    was = (
        f", {kappa_end / kappa:.1f}× the κ = {kappa:.3g} that ε was set for (ε·κ = {eps * kappa:.2g})"
        if math.isfinite(kappa) and kappa > 0
        else ""
    )
    return (
        Finding(
            "stiffer_in_draws",
            severity,
            f"the chains ended where the curvature is κ = {kappa_end:.3g}{was}: ε·κ = {x:.2g} "
            f"at ε = {eps:.3g}, where a step overshoots beyond ε·κ = 2 and diverges beyond 4. "
            "They drifted into steeper regions, along directions in which the loss is flat and "
            "only γ holds them, and there the step's bias raises λ̂. Leave num_burnin None (the "
            "automatic burn-in re-measures κ as the chains spread), pass a smaller step_size or "
            "step_scale, or a larger gamma to keep the chains nearer w*",
            {"kappa": kappa, "kappa_end": kappa_end, "step_kappa": x, "step_size": eps},
        ),
    )
