"""Cross-checks of exact and estimated learning coefficients.

* :func:`crosscheck` — exact λ (``rlct``), an SGLD estimate (``numeric``) and a verdict for a case;
* :func:`check_closed_forms` — published closed forms against exact computations (and
  :func:`check_dln_ideals`, Aoyagi's deep linear networks against their own ideals);
* :mod:`verification.strategies` — public hypothesis strategies producing cases with answers;
* :func:`assert_llc_matches` — fail unless an estimate agrees with an exact λ (an
  ``AssertionError``, any test runner); the pytest plugin, registered on install, adds the
  ``llc_check`` fixture and ``--llc-profile``;
* ``python -m verification`` — the verification report;
* :func:`calibrate` on the :func:`battery` — the estimator on models with exact targets: is λ̂
  right, and do its error findings fire when it is not (false-alarm and miss rates)?

Verdicts and reports convert to plain data with ``to_dict()``. Only
:mod:`verification.pytest_plugin` needs pytest: this package and every other module in it
import on a plain install.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import InvalidArgumentError, InvalidTypeError, VerificationError

# public name → the module that defines it, imported on first use (PEP 562): importing the
# package, or its pytest plugin in any project's test run, costs no torch and no sympy
_LAZY = {
    "LLCMismatch": "assertions",
    "assert_llc_matches": "assertions",
    "BatteryCase": "calibration",
    "CalibrationRecord": "calibration",
    "CalibrationReport": "calibration",
    "battery": "calibration",
    "calibrate": "calibration",
    "Settings": "crosschecks",
    "catalogue": "crosschecks",
    "crosscheck": "crosschecks",
    "ClosedFormCheck": "closed_forms",
    "ClosedFormSummary": "closed_forms",
    "check_closed_forms": "closed_forms",
    "check_dln_ideals": "closed_forms",
    "CrossCheck": "decision",
    "DecisionRule": "decision",
    "decide": "decision",
}

if TYPE_CHECKING:
    from .assertions import LLCMismatch, assert_llc_matches
    from .calibration import BatteryCase, CalibrationRecord, CalibrationReport, battery, calibrate
    from .closed_forms import (
        ClosedFormCheck,
        ClosedFormSummary,
        check_closed_forms,
        check_dln_ideals,
    )
    from .crosschecks import Settings, catalogue, crosscheck
    from .decision import CrossCheck, DecisionRule, decide


def __getattr__(name: str) -> Any:
    """A public name's value, its module imported on first use."""
    if name not in _LAZY:
        raise AttributeError(f"module 'verification' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "BatteryCase",
    "CalibrationRecord",
    "CalibrationReport",
    "ClosedFormCheck",
    "ClosedFormSummary",
    "CrossCheck",
    "DecisionRule",
    "InvalidArgumentError",
    "InvalidTypeError",
    "LLCMismatch",
    "Settings",
    "VerificationError",
    "__version__",
    "assert_llc_matches",
    "battery",
    "calibrate",
    "catalogue",
    "check_closed_forms",
    "check_dln_ideals",
    "crosscheck",
    "decide",
]


def _version() -> str:
    """The installed distribution's version (``slt-check``); "unknown" run from a bare tree."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("slt-check")
    except PackageNotFoundError:
        return "unknown"


__version__ = _version()
