"""Vectorised SGLD/MALA estimation of the local learning coefficient, with exact references.

The API has three layers:

1. One call per question: ``estimate_llc``, ``estimate_llc_potential``, ``hmc_llc_potential``
   (an exact reference for potentials), ``from_module``, ``expected_llc``, ``temperature_sweep``,
   ``hessian_trace``, ``hessian_top_eigenvalues``, ``restrict`` (the weight-restricted LLC),
   ``estimate_llc_series`` with ``CheckpointRecorder`` (the LLC along training), every setting a
   keyword, and the result types.
2. Typed option groups built once and reused (``Target``, ``Sampler``, ``Budget``, ``Checks``,
   ``Runtime``: ``numeric.option_groups``), and the stages public (``numeric.stages``: set up the
   problem, plan, warm up, draw, check the step, summarise; no re-run policy).
3. The pure kernels: ``numeric.sgld`` and ``numeric.mala`` (``init`` / ``step`` over a state whose
   tensors have a leading chain axis).

The folders, in import order: each imports only from those above it (tests/test_structure.py
holds the order). The estimator's pipeline reads inputs → hessian → plan → sampler → warmup →
draws → findings → result → run; docs/architecture.md maps each rule to its file.

- top level: ``errors``, ``options`` (the arguments, validated once), ``types`` (the small types
  the stages hand on, ``Finding`` among them), ``budget`` (the time budget).
- ``backend/``: torch and platform workarounds (inductor, denormals, heap, memory, torch's limits).
- ``stats/``: numbers on [chain, draw] arrays: ESS, R-hat, λ̂'s statistics, the observable.
- ``inputs/``: what the user passes, turned into a ``Problem``: data, modules, restrictions.
- ``hessian/``: H(w*): dense, its extreme spectrum by Lanczos, the low-rank root, trace measures.
- ``sampler/``: the transitions (SGLD, MALA, position-dependent MALA), gradients, the hot loop.
- ``plan/``: what is decided before the first step: preconditioner, integrator, friction, anchors.
- ``warmup/``: step size, friction and burn-in, and the curvature and heating they measure.
- ``findings/``: one module per question a finding answers, and the registry of their codes.
- ``result/``: ``LLCEstimate`` and its ``LLCConfig``.
- ``draws/``: how many draws, their stopping rule, the burn-in extension, the step-size check.
- ``run/``: ``estimate_llc`` and the runs it starts again (divergence, heating, full batch).
- ``potential/``: ``estimate_llc_potential``, HMC and the exact references.
- ``series/``: the LLC over checkpoints (``estimate_llc_series``) and over temperatures.
"""

from numeric.draws.events import DrawsEvent, JsonLinesLogger
from numeric.draws.observables import Observable, per_sample_losses, positions
from numeric.errors import ConvergenceError, DivergenceError, InvalidInputError, NumericError
from numeric.findings.checks import format_findings
from numeric.hessian.measures import HessianTrace, hessian_top_eigenvalues, hessian_trace
from numeric.inputs.host_data import HostData
from numeric.inputs.lm_loss import causal_lm_loss
from numeric.inputs.module_loss import from_module
from numeric.inputs.restrict import RestrictedLoss, restrict
from numeric.option_groups import Budget, Checks, Runtime, Sampler, Target
from numeric.potential.estimate_llc_potential import estimate_llc_potential
from numeric.potential.hmc import HMCReference, hmc_llc_potential
from numeric.potential.reference import ExpectedLLC, GaussianLinear, expected_llc
from numeric.provenance import provenance_block
from numeric.result.fluctuation import susceptibility, waic
from numeric.result.llc_estimate import LLCConfig, LLCEstimate
from numeric.run import stages
from numeric.run.estimate_llc import estimate_llc
from numeric.sampler import mala, sgld
from numeric.series.checkpoints import Checkpoint, CheckpointRecorder
from numeric.series.estimate_llc_series import estimate_llc_series
from numeric.series.llc_series import LLCSeries
from numeric.series.sweep import SweepResult, temperature_sweep
from numeric.stats.chain_stats import FullDataLLC
from numeric.stats.diagnostics import ess, split_rhat
from numeric.types import Finding

__all__ = [
    "Budget",
    "Checkpoint",
    "CheckpointRecorder",
    "Checks",
    "ConvergenceError",
    "DivergenceError",
    "DrawsEvent",
    "ExpectedLLC",
    "Finding",
    "FullDataLLC",
    "GaussianLinear",
    "HMCReference",
    "HessianTrace",
    "HostData",
    "InvalidInputError",
    "JsonLinesLogger",
    "LLCConfig",
    "LLCEstimate",
    "LLCSeries",
    "NumericError",
    "Observable",
    "RestrictedLoss",
    "Runtime",
    "Sampler",
    "SweepResult",
    "Target",
    "__version__",
    "causal_lm_loss",
    "ess",
    "estimate_llc",
    "estimate_llc_potential",
    "estimate_llc_series",
    "expected_llc",
    "format_findings",
    "from_module",
    "hessian_top_eigenvalues",
    "hessian_trace",
    "hmc_llc_potential",
    "mala",
    "per_sample_losses",
    "positions",
    "provenance_block",
    "restrict",
    "sgld",
    "split_rhat",
    "stages",
    "susceptibility",
    "temperature_sweep",
    "waic",
]


def _version() -> str:
    """The installed distribution's version (``slt-check``); "unknown" run from a bare tree."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("slt-check")
    except PackageNotFoundError:
        return "unknown"


__version__ = _version()
