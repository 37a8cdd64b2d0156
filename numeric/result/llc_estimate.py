"""The estimators' result types (frozen dataclasses): ``LLCEstimate``, with its ``LLCConfig`` and
``StepCheck``.

``make_estimate`` fills an ``LLCEstimate`` from the draws' summary (``numeric.findings.standard``:
the statistics and the findings every run gets) and the findings each estimator adds in its own
order; ``run_fields`` gives the ``LLCConfig`` fields both estimators fill alike.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from numeric.findings.checks import (
    format_findings,
)
from numeric.findings.standard import ChainSummary
from numeric.options import SamplerOptions
from numeric.provenance import provenance_block
from numeric.stats.chain_stats import FullDataLLC
from numeric.types import Draws, Finding, Warmup


def to_plain(x: Any) -> Any:
    """``x`` as plain Python data: dataclasses and mappings as dicts, arrays and tuples as lists,
    numpy scalars as Python numbers."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: to_plain(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, dict) or hasattr(x, "items"):
        return {str(k): to_plain(v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (list, tuple)):
        return [to_plain(v) for v in x]
    if isinstance(x, np.generic):
        return x.item()
    return x


@dataclass(frozen=True)
class LLCConfig:
    """Every setting a run used, including the ones chosen automatically (and the rule used)."""

    n: int
    nbeta: float
    nbeta_rule: str
    gamma: float
    prior_precision: float
    step_size: float
    step_size_rule: str
    curvature: float  # κ = nβ·max|eig ∇²L| + γ + α where the chains were (nan if ε was given)
    num_chains: int
    num_draws: int
    num_burnin: int
    batch_size: int | None  # None: exact gradients (potentials)
    seed: int
    sampler: str  # "sgld" or "mala"
    integrator: str  # "lm", "euler", "baoab" (SGLD) or "mala"
    gradient: str  # "control_variate", "minibatch" or "exact"
    acceptance_rate: float  # MALA: mean acceptance over the draws; nan for SGLD
    full_loss_every: int | None
    num_params: int
    device: str
    dtype: str
    # "hessian": M = (nβ·H⁺ + γ + α)⁻¹ (numeric.hessian.dense); "position_dependent": potentials'
    # extra step with metric |∇²U(w)| (numeric.sampler.mmala)
    preconditioner: str = "none"
    condition_number: float = float("nan")  # of nβ·H⁺ + γ + α at w* (nan: H not computed)
    # e-folding steps of the slowest relevant direction (2/(ε·κ_min) for LM; sgld, precondition)
    relaxation_steps: float = float("nan")
    laplace_llc: float = float("nan")  # ½Σ nβh⁺/(nβh⁺ + γ + α), the quadratic approximation
    # bounds on laplace_llc: equal where it is exact (dense Hessian); above 2,048 parameters
    # Lanczos quadrature's (numeric.hessian.spectrum), and laplace_llc nan where they are wide
    laplace_llc_bounds: tuple[float, float] = (float("nan"), float("nan"))
    metric_acceptance_rate: float = float("nan")  # of the position-dependent steps (potentials)
    anchor_every: int = 0  # steps between control-variate anchor refreshes (0: centred at w*)
    friction: float = float("nan")  # ξ of the BAOAB integrator (nan for the others)
    prior_exponents: tuple[float, ...] | None = None  # h of the prior Π|w_j − w*_j|^(h_j)
    # soft directions (0 < nβh < γ + α) the dense preconditioner scales at their own curvature,
    # the potential being quadratic along them (numeric.plan.soft_whitening); 0: none, or no dense M
    soft_whitened: int = 0


@dataclass(frozen=True)
class StepCheck:
    """λ̂ at the run's ε and at ε/2, the bias b at ε and the extrapolation λ₀ to ε → 0."""

    step_size: float  # ε of the draws; the check ran at ε/2
    num_relax: int  # steps at ε/2 before the check's draws (and at ε after them)
    num_draws: int  # draws per chain at ε/2 (and again at ε after them)
    llc_at_step: float  # λ̂(ε), the run's draws
    stderr_at_step: float
    llc_at_half_step: float  # λ̂(ε/2)
    stderr_at_half_step: float
    # b ≈ 2·(λ̂_ε − λ̂(ε/2)), λ̂_ε the mean of λ̂ over the last num_draws draws at ε before the
    # check and over num_draws at ε after it (a linear drift in time cancels)
    bias: float
    bias_stderr: float
    extrapolated: float  # λ₀ ≈ 2·λ̂(ε/2) − λ̂_ε
    extrapolated_stderr: float
    applied: bool  # the estimate is the extrapolation (|b| ≥ 3 se: numeric.draws.step_check)
    # λ̂ over the second half of the check's draws minus the first: away from 0 by more than its
    # error, the chains were still relaxing from ε when the check's draws began
    drift: float = float("nan")
    drift_stderr: float = float("nan")
    llc_after_check: float = float("nan")  # λ̂ at ε after the check
    stderr_after_check: float = float("nan")
    # λ̂ at ε after the check minus λ̂ over the run's last num_draws draws: away from 0 by more
    # than its error, the chains had not reached equilibrium (``drift_after_draws``)
    trend: float = float("nan")
    trend_stderr: float = float("nan")


@dataclass(frozen=True, eq=False)  # arrays: compared and hashed by identity
class LLCEstimate:
    r"""λ̂ = nβ·(E[L(w)] − L(w*)) from SGLD/MALA draws, with error bars and findings.

    ``per_chain[c] = nβ·mean_t(L_{B_t}(w_{c,t}) − R_t)``: each minibatch loss is compared with
    a reference on the same minibatch, R_t = L_B(w*) (a control variate that removes the
    batch-to-batch noise of L_B, which would otherwise be multiplied by nβ) plus, with the
    gradient's control variate, ĉ·ℓ_t, the first-order minibatch noise regressed out with
    coefficient ``linear_coefficient`` (``numeric.stats.observable``; 0 where not recorded).
    ``mean`` is their average; ``stderr = max(std/√C, nβ·sd/√ESS)`` (the more conservative of the
    between-chain and the autocorrelation-aware error). ``loss_trace``/``ref_loss_trace`` are
    L_B(w_t) and R_t [chain, draw] (burn-in excluded); ``init_loss`` is L_n(w*) on the full
    data. ``wbic`` is n·E[L_n(w)] when nβ = n/log n (the WBIC temperature), else None.
    ``full_data`` holds the estimate from full-data losses (data models only). ``slow_ess``/``slow_rhat`` are the smallest
    ESS and largest R-hat of the slow observables: for data models ∇U projected on the slowest
    relevant Hessian directions (nan when the Hessian was not computed); for potentials
    (w_i − w*_i)² per coordinate (‖w − w*‖² beyond 16 parameters).
    """

    mean: float
    std: float
    stderr: float
    per_chain: np.ndarray
    loss_trace: np.ndarray
    ref_loss_trace: np.ndarray
    init_loss: float
    nbeta: float
    ess: float
    rhat: float
    wbic: float | None
    diagnostics: tuple[Finding, ...]
    config: LLCConfig
    full_data: FullDataLLC | None = None
    slow_ess: float = float("nan")  # ESS / R-hat of the slow observables
    slow_rhat: float = float("nan")  # (diagnostics.direction_mixing)
    # predicted factor by which minibatch noise heats the chains (1 + ε·nβ²·Var(ĝ)/4 times
    # sgld.noise_heating), measured at the final positions; nan for exact gradients
    minibatch_inflation: float = float("nan")
    # λ̂ again at ε/2 and the extrapolation to ε → 0 (numeric.draws.step_check; None: not run).
    # Where it found a significant bias, mean, stderr, std and per_chain are the extrapolation's
    step_check: StepCheck | None = None
    linear_coefficient: float = 0.0  # ĉ of numeric.stats.observable (0: ℓ not recorded)
    # the options' observables at the full-loss evaluations, name → [chain, draw, ...]
    # (``numeric.draws.observables``; {} where none was asked for)
    observables: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    # [C] bool: the chains λ̂ averages (False: diverged and dropped); None where not recorded
    alive: np.ndarray | None = None

    @property
    def delta_trace(self) -> np.ndarray:
        """L_B(w_t) − R_t [chain, draw]."""
        return self.loss_trace - self.ref_loss_trace

    def to_inference_data(self) -> Any:
        """An ``arviz.InferenceData``: posterior ``loss`` and ``llc`` = nβ·(L_B(w_t) − R_t) per
        draw (and the observables), ``sample_stats`` R_t, the settings as attrs; diverged chains
        left out (``numeric.result.inference_data``; needs ``pip install 'slt-check[arviz]'``)."""
        from numeric.result.inference_data import to_inference_data

        return to_inference_data(self)

    def to_dict(self, *, traces: bool = False) -> dict[str, Any]:
        """Plain data (``json.dumps``-able; NaN stays a float NaN): every scalar field, the
        per-chain values, the config and the findings as dicts; the [chain, draw] traces (and
        the full-data loss trace and the observables) only with ``traces=True``; ``provenance``: the versions, the
        source commit and the run's device, dtype and seed (``numeric.provenance``)."""
        skip = () if traces else ("loss_trace", "ref_loss_trace", "observables")
        out = {
            f.name: to_plain(getattr(self, f.name))
            for f in dataclasses.fields(self)
            if f.name not in skip
        }
        if self.full_data is not None and not traces:
            out["full_data"].pop("loss_trace")
        c = self.config
        out["provenance"] = provenance_block(device=c.device, dtype=c.dtype, seed=c.seed)
        return out

    def __str__(self) -> str:
        c = self.config
        head = (
            f"LLC = {self.mean:.4g} ± {self.stderr:.2g} (stderr; std over {c.num_chains} chains "
            f"{self.std:.2g}), nβ = {self.nbeta:.4g} [{c.nbeta_rule}], γ = {c.gamma:g}, "
            f"ε = {c.step_size:.3g} [{c.step_size_rule}]"
            + (f", BAOAB friction ξ = {c.friction:.3g}" if c.integrator == "baoab" else "")
            + f", {c.num_burnin} burn-in + "
            f"{c.num_draws} draws, ESS {self.ess:.0f}, R-hat {self.rhat:.3f}"
        )
        if self.full_data is not None:
            head += f"\nfull-data LLC = {self.full_data.mean:.4g} ± {self.full_data.stderr:.2g}"
        if (c := self.step_check) is not None:
            head += (
                f"\nstep check: LLC = {c.llc_at_step:.4g} ± {c.stderr_at_step:.2g} at ε, "
                f"{c.llc_at_half_step:.4g} ± {c.stderr_at_half_step:.2g} at ε/2, "
                f"{c.llc_after_check:.4g} ± {c.stderr_after_check:.2g} at ε again; bias at ε "
                f"{c.bias:+.3g} ± {c.bias_stderr:.2g}"
                + ("; the LLC above is the extrapolation to ε → 0" if c.applied else "")
            )
        return head + "\n" + format_findings(self.diagnostics)


def make_estimate(
    summary: ChainSummary,
    *,
    init_loss: float,
    nbeta: float,
    findings: list[Finding],
    config: LLCConfig,
    full_data: FullDataLLC | None = None,
    slow_ess: float = float("nan"),
    slow_rhat: float = float("nan"),
    minibatch_inflation: float = float("nan"),
    step_check: StepCheck | None = None,
    observables: dict[str, np.ndarray] | None = None,
) -> LLCEstimate:
    """The ``LLCEstimate`` of a run; WBIC = n·(L_n(w*) + mean ΔL) at the WBIC temperature."""
    st = summary.stats
    wbic = (
        config.n * (init_loss + float(summary.delta.mean()))
        if config.nbeta_rule == "n/log n"
        else None
    )
    return LLCEstimate(
        mean=st.mean,
        std=st.std,
        stderr=st.stderr,
        per_chain=st.per_chain,
        loss_trace=summary.loss,
        ref_loss_trace=summary.ref,
        init_loss=init_loss,
        nbeta=nbeta,
        ess=st.ess,
        rhat=st.rhat,
        wbic=wbic,
        diagnostics=tuple(findings),
        config=config,
        full_data=full_data,
        slow_ess=slow_ess,
        slow_rhat=slow_rhat,
        minibatch_inflation=minibatch_inflation,
        step_check=step_check,
        linear_coefficient=summary.linear_coefficient,
        observables=dict(observables or {}),
        alive=np.asarray(summary.alive, dtype=bool).copy(),
    )


def run_fields(opts: SamplerOptions, warm: Warmup, drawn: Draws) -> dict[str, Any]:
    """The ``LLCConfig`` fields both estimators fill alike, from the options, the warm-up and
    the draws: γ, α, ε and its rule, κ, chains, draws, burn-in and seed."""
    tuning = warm.tuning
    return dict(
        gamma=float(opts.gamma),
        prior_precision=float(opts.prior_precision),
        step_size=tuning.step_size,
        step_size_rule=warm.step_size_rule,
        curvature=tuning.kappa,
        num_chains=opts.num_chains,
        num_draws=int(drawn.num_draws),
        num_burnin=warm.num_burnin,
        seed=opts.seed,
    )
