"""Vectorised SGLD/MALA estimation of the local learning coefficient, with exact references.

Public API: ``estimate_llc``, ``estimate_llc_potential``, ``from_module``, ``expected_llc``,
``temperature_sweep``, ``hessian_trace``, ``hessian_top_eigenvalues`` and the result types.
"""

from numeric.diagnostics import Finding, ess, format_findings, split_rhat
from numeric.errors import DivergenceError, InvalidInputError, NumericError
from numeric.llc import estimate_llc, from_module
from numeric.potential import estimate_llc_potential
from numeric.result import FullDataLLC, LLCConfig, LLCEstimate

__all__ = [
    "DivergenceError",
    "Finding",
    "FullDataLLC",
    "InvalidInputError",
    "LLCConfig",
    "LLCEstimate",
    "NumericError",
    "ess",
    "estimate_llc",
    "estimate_llc_potential",
    "format_findings",
    "from_module",
    "split_rhat",
]
