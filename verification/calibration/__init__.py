"""The calibration battery and its harness: an LLC estimator scored against exact targets.

``battery()`` is the list of models with a known target (λ_β by quadrature, a closed form or
HMC on a linear network's closed-form loss, or λ with its finite-n shift and that shift's
uncertainty for the largest networks); ``calibrate(estimator, cases)`` runs an
estimator on them and returns a ``CalibrationReport``: each estimate's z against its target, the
confusion matrix of error findings against correct and wrong estimates, every finding code's
firing rates, coverage and wall times. ``paper_sgld_estimator`` (the paper procedure) and
``devinterp_estimator`` (devinterp 1.3.2) score other estimators on the same cases.
"""

from .adapters import devinterp_estimator, paper_sgld_estimator
from .cases import BatteryCase, Built, Target, battery
from .report import CalibrationRecord, CalibrationReport
from .run import calibrate, default_estimator

__all__ = [
    "BatteryCase",
    "Built",
    "CalibrationRecord",
    "CalibrationReport",
    "Target",
    "battery",
    "calibrate",
    "default_estimator",
    "devinterp_estimator",
    "paper_sgld_estimator",
]
