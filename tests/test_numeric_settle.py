"""Draws made burn-in while the chains still spread (numeric.draws.burn_in_extension): the rule on
made-up draws whose spread is known, and on a deep linear network whose chains spread through short
draws."""

from __future__ import annotations

import math

import numpy as np
from _spreading import dln_868, spreads

from numeric.draws.burn_in_extension import MAX_ROUNDS, draw_until_settled, settling_finding
from numeric.findings.spreading import still_spreading
from numeric.types import Draws, Tuning, Warmup

ALIVE = np.ones(4, bool)


def _draws(rise: float, num_draws: int = 500, seed: int = 0) -> Draws:
    return Draws(None, num_draws, None, (math.nan, math.nan), spread=spreads(rise, seed=seed))


def test_a_growing_spread_is_read_and_a_flat_one_is_not() -> None:
    growth, z, _ = still_spreading(spreads(1.0), ALIVE)
    # 1 → 2 over the draws: quarters' means 1.125 and 1.875, growth 0.75/1.875 = 0.4
    assert 0.38 < growth < 0.42 and z > 10
    assert still_spreading(spreads(0.0), ALIVE) is None
    assert still_spreading(spreads(0.05), ALIVE) is None  # under GROWTH
    assert still_spreading(spreads(1.0)[:, :1], ALIVE[:1]) is None  # one chain: no z
    assert still_spreading(spreads(1.0)[:5], ALIVE) is None  # too few evaluations
    assert still_spreading(None, ALIVE) is None
    # a diverged chain is left out: three growing live chains still read as spreading
    spread = spreads(1.0)
    spread[:, 3] = spread[::-1, 3]
    assert still_spreading(spread, np.array([True, True, True, False])) is not None


class _Run:
    """Draws whose spread grows for the first ``grows`` calls, then stays flat; counts steps."""

    def __init__(self, grows: int) -> None:
        self.calls, self.grows, self.steps, self.retuned = 0, grows, 1000, 0
        self.seen: list[Warmup] = []
        self.settling: list[bool] = []

    def draw(self, warm: Warmup, settling: bool) -> Draws:
        self.seen.append(warm)
        self.settling.append(settling)
        self.calls += 1
        self.steps += 500
        return _draws(1.0 if self.calls <= self.grows else 0.0, seed=self.calls)

    def retune(self, tuning: Tuning) -> Tuning:
        self.retuned += 1
        return tuning._replace(friction=tuning.friction * 2)

    def settle(self, automatic: bool = True) -> tuple[Warmup, Draws]:
        warm = Warmup(Tuning(0.01, 10.0, 2.0, 0), None, 1000, "given")
        return draw_until_settled(
            self.draw,
            warm,
            automatic=automatic,
            alive=lambda: ALIVE,
            steps_done=lambda: self.steps,
            retune=self.retune,
        )


def test_draws_are_made_burn_in_until_the_spread_settles() -> None:
    run = _Run(grows=2)
    warm, drawn = run.settle()
    assert run.calls == 3 and run.retuned == 2
    assert [r[0] for r in drawn.settled] == [500, 500]
    assert all(g > 0.4 and z > 3 for _, g, z in drawn.settled)
    # the burn-in counts the draws made burn-in; each round follows the retuned warm-up
    assert warm.num_burnin == 2000 and [w.num_burnin for w in run.seen] == [1000, 1500, 2000]
    assert [w.tuning.friction for w in run.seen] == [2.0, 4.0, 8.0]
    # every round may be followed by another: none is drawn to precision before it is read
    assert run.settling == [True, True, True]
    (found,) = settling_finding(drawn.settled, warm.num_burnin)
    assert found.code == "settling" and found.severity == "info"
    assert found.values == {"rounds": 2.0, "num_burnin": 2000.0}
    assert "2 times" in found.message and "2,000 steps" in found.message


def test_at_most_max_rounds_and_never_with_a_given_burn_in() -> None:
    run = _Run(grows=100)
    _, drawn = run.settle()
    assert run.calls == MAX_ROUNDS + 1 and len(drawn.settled) == MAX_ROUNDS
    assert still_spreading(drawn.spread, ALIVE) is not None  # left to the spreading finding
    # the last round cannot be made burn-in: it alone is drawn to precision
    assert run.settling == [True] * MAX_ROUNDS + [False]
    (found,) = settling_finding(drawn.settled, 3000)
    assert "the most rounds made" in found.message and "3,000" in found.message
    given = _Run(grows=100)
    warm, drawn = given.settle(automatic=False)
    assert given.calls == 1 and drawn.settled == () and warm.num_burnin == 1000
    assert given.settling == [False]
    assert settling_finding((), 1000) == ()


def test_a_deep_linear_network_spreading_through_its_draws_is_drawn_again() -> None:
    """8-6-8 of full rank (n = 2,000): with given draws and the automatic burn-in the chains
    spread through 2,000 draws; made burn-in, the next draws no longer spread."""
    est = dln_868(num_draws=2000)
    found = {f.code: f for f in est.diagnostics}
    assert "spreading" not in found, est
    rounds = int(found["settling"].values["rounds"])
    assert 1 <= rounds <= MAX_ROUNDS
    assert est.config.num_burnin == found["settling"].values["num_burnin"]
    assert est.config.num_burnin >= rounds * 2000 and est.config.num_draws == 2000
    given = dln_868(num_burnin=100, num_draws=2000)  # lengths given: no round, the warning
    codes = {f.code for f in given.diagnostics}
    assert "settling" not in codes and "spreading" in codes
