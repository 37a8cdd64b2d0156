"""Vectorised SGLD/MALA estimation of the local learning coefficient, with exact references.

Public API: ``estimate_llc``, ``estimate_llc_potential``, ``hmc_llc_potential`` (an exact
reference for potentials), ``from_module``, ``expected_llc``,
``temperature_sweep``, ``hessian_trace``, ``hessian_top_eigenvalues``, ``restrict`` (the
weight-restricted LLC), ``estimate_llc_series`` with ``CheckpointRecorder`` (the LLC along
training) and the result types.
"""

from numeric.checkpoints import Checkpoint, CheckpointRecorder
from numeric.diagnostics import ess, split_rhat
from numeric.errors import ConvergenceError, DivergenceError, InvalidInputError, NumericError
from numeric.findings import Finding, format_findings
from numeric.hessian import HessianTrace, hessian_top_eigenvalues, hessian_trace
from numeric.hmc import HMCReference, hmc_llc_potential
from numeric.llc import estimate_llc, from_module
from numeric.potential import estimate_llc_potential
from numeric.reference import ExpectedLLC, GaussianLinear, expected_llc
from numeric.restrict import RestrictedLoss, restrict
from numeric.result import FullDataLLC, LLCConfig, LLCEstimate
from numeric.series import estimate_llc_series
from numeric.series_result import LLCSeries
from numeric.sweep import SweepResult, temperature_sweep

__all__ = [
    "Checkpoint",
    "CheckpointRecorder",
    "ConvergenceError",
    "DivergenceError",
    "ExpectedLLC",
    "Finding",
    "FullDataLLC",
    "GaussianLinear",
    "HMCReference",
    "HessianTrace",
    "InvalidInputError",
    "LLCConfig",
    "LLCEstimate",
    "LLCSeries",
    "NumericError",
    "RestrictedLoss",
    "SweepResult",
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
    "restrict",
    "split_rhat",
    "temperature_sweep",
]
