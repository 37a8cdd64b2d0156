"""Cross-checks of exact and estimated learning coefficients.

* :func:`crosscheck` — exact λ (``rlct``), an SGLD estimate (``numeric``) and a verdict for a case;
* :func:`check_closed_forms` — published closed forms against exact computations;
* :mod:`verification.strategies` — public hypothesis strategies producing cases with answers;
* :func:`assert_llc_matches` — a pytest helper for your own models;
* ``python -m verification`` — the verification report.
"""

from .catalogue import Settings, catalogue, crosscheck
from .closed_forms import ClosedFormCheck, ClosedFormSummary, check_closed_forms
from .crosscheck import CrossCheck, DecisionRule, decide
from .pytest_plugin import assert_llc_matches

__all__ = [
    "ClosedFormCheck",
    "ClosedFormSummary",
    "CrossCheck",
    "DecisionRule",
    "Settings",
    "assert_llc_matches",
    "catalogue",
    "check_closed_forms",
    "crosscheck",
    "decide",
]
