"""The registry of finding codes: what each says, when it is an error, what to do.

Every ``Finding`` an estimator returns has one of these codes (a test parses the package for
them). ``kind`` sorts them:

* ``accuracy``: λ̂ may be off its target λ_β = nβ·(E[L] − L(w*)) (mixing, bias, drift, rounding,
  reach). These are the findings the calibration battery scores (``verification.calibration``):
  an *error* among them says the number cannot be used as it is.
* ``premise``: the target itself is not a learning coefficient at w* (w* is not a minimum, or
  the chains settled elsewhere). They are right to fire however close λ̂ is to λ_β.
* ``process``: what the run did on its own (a restart, a switch, a skipped phase), or a property
  of the problem worth knowing (``beyond_quadratic``); never an error.

``python -m numeric.findings.codes`` prints the catalogue as Markdown (``docs/findings.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["accuracy", "premise", "process"]


@dataclass(frozen=True)
class Code:
    """One finding code: its ``kind``, when it is a warning or an error, what it means and what
    to do about it."""

    code: str
    kind: Kind
    severity: str
    meaning: str
    remedy: str


CODES: tuple[Code, ...] = (
    # ---- accuracy: λ̂ may be off its target ---------------------------------------------------
    Code(
        "chains_disagree",
        "accuracy",
        "warning",
        "per-chain λ̂ disagree beyond their standard errors (χ², p < 10⁻³)",
        "run longer; look for chains stuck in different regions",
    ),
    Code(
        "divergence",
        "accuracy",
        "error",
        "chains diverged (non-finite or exploding loss) and were dropped",
        "a smaller step_size, or leave it None for the automatic step",
    ),
    Code(
        "divergent",
        "accuracy",
        "warning",
        "HMC trajectories diverged (energy error above its bound)",
        "a smaller step or fewer leapfrog steps",
    ),
    Code(
        "drift",
        "accuracy",
        "warning",
        "the loss trace drifts between the first 20% and last 50% of the draws (|z| > 4)",
        "a longer num_burnin",
    ),
    Code(
        "drift_after_draws",
        "accuracy",
        "warning; error above 5% of λ̂",
        "λ̂ at ε moved across the step-size check: the chains had not settled",
        "longer num_burnin and num_draws",
    ),
    Code(
        "imprecise",
        "accuracy",
        "info",
        "automatic draws ended above their standard-error target (rtol or target_stderr)",
        "more draws or chains, or a looser rtol",
    ),
    Code(
        "interrupted",
        "accuracy",
        "warning; info where only the step-size check was dropped",
        "Ctrl-C ended the draws (the estimate is from the draws so far) or the step-size check "
        "(dropped)",
        "run again without interrupting, or with a time_budget",
    ),
    Code(
        "loss_resolution",
        "accuracy",
        "warning; error from 10% of λ̂",
        "nβ·ε_mach·|L(w*)| is not small against λ̂: λ̂ averages the loss's rounding",
        "dtype=torch.float64, or subtract the loss's constant part",
    ),
    Code(
        "low_acceptance",
        "accuracy",
        "warning; error at no acceptance",
        "MALA accepted few (or no) proposals",
        "a smaller step_size",
    ),
    Code(
        "low_ess",
        "accuracy",
        "warning; error below 30 effective draws, except in a run the time budget cut "
        "(where the spread was measured)",
        "few effective draws: the error bar is rough, or a guess",
        "more draws or chains",
    ),
    Code(
        "minibatch_noise",
        "accuracy",
        "warning; error above a predicted 2× heating",
        "minibatch gradient noise heats the chains and inflates λ̂",
        "a smaller step, a larger batch, or gradient='control_variate'",
    ),
    Code(
        "nonfinite_potential",
        "accuracy",
        "warning",
        "MALA proposals landed where U is NaN or inf and were rejected",
        "check K's domain; a bug or an overflow if K should be finite there",
    ),
    Code(
        "plain_mala_creeps",
        "accuracy",
        "warning",
        "plain MALA's positions mix far slower than its loss trace says",
        "metric=True (position-dependent steps)",
    ),
    Code(
        "rhat",
        "accuracy",
        "warning",
        "split R-hat above its limit: the chains have not mixed",
        "run longer",
    ),
    Code(
        "rounding_bias",
        "accuracy",
        "warning; error from 10% of λ̂ or an rms gap of 1",
        "the run's dtype changes nβ·(L(w) − L(w*)) against float64 at the chains' positions",
        "dtype=torch.float64, or rescale inputs and targets",
    ),
    Code(
        "slow_mixing",
        "accuracy",
        "info; warning where the run is shorter than one relaxation time",
        "the slowest relevant directions (or the positions) mix slowly",
        "run longer, or the Hessian preconditioner",
    ),
    Code(
        "soft_directions",
        "accuracy",
        "warning; error where the missing share is large",
        "directions with 0 < nβh < γ + α were not relaxed by the run",
        "run longer, or raise gamma",
    ),
    Code(
        "spreading",
        "accuracy",
        "warning; error with beyond_quadratic and a short run (capped draws, fewer given "
        "than the rule asks, or a burn-in the time budget cut)",
        "the chains' spread from w* still grew through the draws",
        "a longer num_burnin",
    ),
    Code(
        "step_size_bias",
        "accuracy",
        "warning",
        "λ̂ at ε/2 differs from λ̂ at ε: the estimate is the extrapolation to ε → 0",
        "a smaller step_scale or a larger batch_size shrink the bias and its error bar",
    ),
    Code(
        "step_size_drift",
        "accuracy",
        "warning",
        "the drift term is as large as the noise term: optimising, not sampling",
        "a smaller step size",
    ),
    Code(
        "stiffer_in_draws",
        "accuracy",
        "warning; error beyond ε·κ = 4, or for Euler steps the step-size check did not correct",
        "where the draws ended the curvature outgrew the step size (Euler inflates the variance "
        "there 1/(1 − εκ/4)×; LM and BAOAB are exact on quadratic directions below εκ = 4)",
        "a smaller step_scale, or raise gamma",
    ),
    Code(
        "still_relaxing",
        "accuracy",
        "warning; error above 5% of λ̂",
        "λ̂ moved between the halves of its draws: the chains were still relaxing",
        "a longer num_burnin, or raise gamma",
    ),
    Code(
        "time_budget",
        "accuracy",
        "warning where the burn-in or the draws were cut; info "
        "where only the step-size check was skipped or dropped",
        "the time budget cut a phase of the run short",
        "a larger time_budget",
    ),
    Code(
        "unreached_region",
        "accuracy",
        "warning; error where the region is about as probable as where the chains were",
        "the local posterior has a low-loss region behind a barrier that the chains never reached",
        "run longer or start chains there; raise gamma to exclude it",
    ),
    Code(
        "DivergenceError",
        "accuracy",
        "error",
        "(calibration only) the run raised instead of returning an estimate",
        "see the error",
    ),
    # ---- premise: the target is not an LLC at w* ---------------------------------------------
    Code(
        "below_reference_loss",
        "premise",
        "error",
        "the sampled loss is below L(w*) on average: w* is not a local minimum",
        "train further, or raise gamma to measure a saddle on purpose",
    ),
    Code(
        "gradient_at_w_star",
        "premise",
        "warning; error where the shift is half of λ̂",
        "w* is not a critical point: the chains' drift down ∇L_n(w*) shifts λ̂",
        "train further (∇L_n ≈ 0); a larger gamma shrinks the shift",
    ),
    Code(
        "off_centre",
        "premise",
        "warning",
        "the chains settled around a point other than w*",
        "check that w* is a minimum",
    ),
    # ---- process: what the run did, or a property of the problem ------------------------------
    Code(
        "batch_heating",
        "process",
        "info",
        "minibatch heating raised BAOAB's friction; the full batch could mix cheaper",
        "batch_size = n where it fits",
    ),
    Code(
        "beyond_quadratic",
        "process",
        "info; warning where λ̂ depends strongly on γ",
        "the chains left the quadratic region of w*: λ̂ depends on γ",
        "compare estimates at the same gamma and nbeta",
    ),
    Code(
        "divergence_restart",
        "process",
        "info",
        "a divergence restarted the run with a quarter of the step",
        "",
    ),
    Code(
        "draws_below_rule",
        "process",
        "info",
        "num_draws given below what the slowest direction asks for",
        "",
    ),
    Code(
        "draws_capped",
        "process",
        "warning",
        "the draws reached their cap while the slowest direction asked for more",
        "pass num_draws (and num_burnin), or the Hessian preconditioner",
    ),
    Code(
        "full_batch_diverged",
        "process",
        "info",
        "the switched full-batch run diverged; the estimate is the minibatch run's",
        "",
    ),
    Code(
        "full_batch_switch",
        "process",
        "info",
        "heated minibatches made the full batch the cheaper way to mix: the run switched",
        "",
    ),
    Code(
        "heating_restart",
        "process",
        "info",
        "the draws ran hotter than the warm-up measured: restarted with more friction",
        "",
    ),
    Code(
        "settling",
        "process",
        "info",
        "draws made burn-in while the chains still spread away from w*",
        "",
    ),
)

BY_CODE = {c.code: c for c in CODES}
PREMISE_CODES = frozenset(c.code for c in CODES if c.kind == "premise")


def markdown() -> str:
    """The catalogue as a Markdown page (``docs/findings.md``)."""
    lines = [
        "# Findings",
        "",
        "Every estimate carries findings (`est.diagnostics`): a code, a severity and a message "
        "that gives the numbers. An **error** says the number cannot be used as it is; a "
        "**warning** that it can, with the caveat said; **info** what the run did on its own. "
        "*Accuracy* findings say λ̂ may be off its target λ_β; *premise* findings that the target "
        "is not a learning coefficient at w*; *process* findings what happened. How often each "
        "fires on correct and on wrong estimates is measured on the calibration battery "
        "(`benchmarks/RESULTS.md`).",
        "",
    ]
    for kind in ("accuracy", "premise", "process"):
        lines += [f"## {kind.capitalize()}", "", "| code | severity | meaning | what to do |"]
        lines.append("|---|---|---|---|")
        lines += [
            f"| `{c.code}` | {c.severity} | {c.meaning} | {c.remedy or '—'} |"
            for c in CODES
            if c.kind == kind
        ]
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(), end="")
