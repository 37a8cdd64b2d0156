r"""A run's time budget and its interruption (``time_budget=``, Ctrl-C).

A run is warm-up, draws and the step-size check. With ``time_budget`` = T seconds the clock
starts when the estimate is called and each phase gets a deadline: the burn-in ends by
``WARMUP_SHARE``·T (after the step size is adapted: ``ADAPT_STEPS`` steps, which are not cut),
the draws by ``DRAWS_SHARE``·T, and the step-size check runs only where its projected cost
(steps at the measured seconds per step) fits in what is left, and is dropped where the clock
runs out during it (its extensions may outrun the projection). The sequential stopping rule
(``numeric.draws.sample``) usually ends the draws sooner; the deadline is what bounds a run whose
rules would go on. A phase cut by the clock is named in the ``time_budget`` finding, which says
what was left unmixed. Lengths then depend on the machine's speed: for lengths that do not, give
``num_burnin`` and ``num_draws``.

Ctrl-C (``KeyboardInterrupt``) during the draws ends them: the estimate is made from the draws so
far, with the ``interrupted`` finding; during the step-size check it drops the check. During warm-up there is nothing to estimate from and the
interrupt propagates; a second Ctrl-C while the estimate is being made does too.

``Chains.advance`` checks the clock after each block of ``chains.CHECK_EVERY`` steps and, where
the deadline passed or the draws were interrupted, raises ``Stopped`` holding the steps it did.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from numeric.types import Draws, Finding, Trace, Warmup

WARMUP_SHARE = 0.4  # of the budget, by which the burn-in ends
DRAWS_SHARE = 0.75  # by which the draws end where the step-size check is on (0.95 where off)
DRAWS_SHARE_NO_CHECK = 0.95


class Stopped(Exception):
    """Steps ended early by the clock (``reason`` "time_budget") or Ctrl-C ("interrupted");
    ``trace`` holds the steps done in the interrupted ``advance`` (None: none)."""

    def __init__(self, reason: str, trace: Trace | None) -> None:
        super().__init__(reason)
        self.reason, self.trace = reason, trace


@dataclass
class Clock:
    """The clock of one estimate: ``seconds`` (None: no limit) from ``start``."""

    seconds: float | None
    start: float = field(default_factory=time.monotonic)

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def deadline(self, share: float) -> float:
        """The monotonic time by which a phase ending at ``share`` of the budget ends (inf:
        no budget)."""
        return math.inf if self.seconds is None else self.start + share * self.seconds

    def left(self) -> float:
        return math.inf if self.seconds is None else self.seconds - self.elapsed()

    def rest(self) -> Clock:
        """A clock for a run that starts now with what is left (a restart plans afresh)."""
        return Clock(None if self.seconds is None else max(self.left(), 0.0))

    def can_rerun(self) -> bool:
        """At least half of the budget is left (or there is none): a second run fits."""
        return self.seconds is None or self.left() >= 0.5 * self.seconds


def budget_findings(warm: Warmup, drawn: Draws, seconds: float | None) -> tuple[Finding, ...]:
    """What the clock or Ctrl-C cut (module docstring): ``time_budget`` (a warning where the
    burn-in or the draws were cut, info where only the step-size check was skipped) and
    ``interrupted`` (a warning)."""
    out = []
    p = drawn.precision
    where = (
        f"λ̂ = {p.mean:.4g} ± {p.stderr:.2g} over {drawn.num_draws} draws per chain"
        if p is not None
        else f"{drawn.num_draws} draws per chain"
    )
    short = (
        ""
        if p is None or p.done
        else f", short of the stopping rule (standard error {p.stderr:.2g} against "
        f"{p.wanted:.2g}, loss-trace ESS {p.ess:.0f}"
        + ("" if p.settled else f", λ̂ still moving by {p.drift:+.3g} ± {p.drift_stderr:.2g}")
        + ")"
    )
    if warm.cut:
        out.append(
            Finding(
                "time_budget",
                "warning",
                f"the time budget ({seconds:g} s) ended the burn-in after {warm.num_burnin} steps, "
                "before its rules were met: the chains may not have relaxed, and λ̂ is then a "
                "transient's, low where they have not yet spread, high where they spread into "
                "regions stiffer than the step was set for; a larger time_budget, or num_burnin",
                {"num_burnin": float(warm.num_burnin)},
            )
        )
    if drawn.stopped == "time_budget":
        out.append(
            Finding(
                "time_budget",
                "warning",
                f"the time budget ({seconds:g} s) ended the draws: {where}{short}",
                {"num_draws": float(drawn.num_draws)},
            )
        )
    elif drawn.stopped == "check_skipped":
        out.append(
            Finding(
                "time_budget",
                "info",
                f"the step-size check did not fit in the time budget ({seconds:g} s) and was "
                "skipped: the step's bias is not measured",
                {},
            )
        )
    elif drawn.stopped == "check_cut":
        out.append(
            Finding(
                "time_budget",
                "info",
                f"the step-size check ran past the time budget ({seconds:g} s) and was dropped: "
                "the estimate is from the full draws, the step's bias is not measured",
                {},
            )
        )
    elif drawn.stopped == "check_interrupted":
        out.append(
            Finding(
                "interrupted",
                "info",
                "interrupted (Ctrl-C) during the step-size check, which was dropped: the "
                "estimate is from the full draws, the step's bias is not measured",
                {},
            )
        )
    elif drawn.stopped == "interrupted":
        out.append(
            Finding(
                "interrupted",
                "warning",
                f"interrupted (Ctrl-C) during the draws: the estimate is from {where}{short}; "
                "no step-size check was run",
                {"num_draws": float(drawn.num_draws)},
            )
        )
    return tuple(out)
