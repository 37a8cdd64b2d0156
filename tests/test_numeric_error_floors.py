"""The two floors under λ̂'s error bar on minibatches: the draws last at least one relaxation
time of the slowest relevant direction (``sample.relaxation_floor``), and the standard error is at
least the one the full-data losses give (``chain_stats.full_data_stderr``)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

import numeric
from numeric.draws.sample import choose_num_draws, relaxation_floor
from numeric.draws.stopping_rule import precision_of
from numeric.options import LLCOptions
from numeric.sampler import sgld
from numeric.stats.chain_stats import chain_stats, full_data_stderr
from numeric.types import MAX_DRAWS, Tuning


def _slow_plus_noise(seed: int, chains: int, draws: int, noise: float) -> np.ndarray:
    """A level per chain (sd 1) under white noise of sd ``noise``: [chains, draws]."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=(chains, 1)) + noise * rng.normal(size=(chains, draws))


def test_full_data_stderr_is_the_chain_statistics_error_and_needs_four_evaluations() -> None:
    """The floor is ``chain_stats``' standard error of the full-data losses (scaled by nβ), and
    nan with fewer than four evaluations per chain or none at all."""
    full = _slow_plus_noise(0, 4, 12, 0.1)
    assert full_data_stderr(full, 3.0) == pytest.approx(chain_stats(full, 3.0).stderr, rel=1e-12)
    # chains whose levels differ: far above the white noise's own error (0.1/√48)
    assert full_data_stderr(full, 1.0) > 5 * 0.1 / math.sqrt(full.size)
    assert math.isnan(full_data_stderr(full[:, :3], 1.0))
    assert math.isnan(full_data_stderr(None, 1.0))


def test_precision_takes_the_larger_of_the_minibatch_and_full_data_errors() -> None:
    """A minibatch trace whose chains differ by little under large batch noise has a small error
    bar; full-data losses whose chains differ by ~1 raise it to theirs (and λ̂ stays the
    minibatch mean); full-data losses that agree leave it as it was."""
    rng = np.random.default_rng(1)
    delta = 5.0 + rng.normal(size=(4, 2000))  # white: se ≈ 1/√8000
    alone = precision_of(delta, 1.0, 0.1, None)
    assert alone.stderr < 0.05
    slow = 5.0 + _slow_plus_noise(2, 4, 40, 0.1)
    floored = precision_of(delta, 1.0, 0.1, None, full=slow)
    assert floored.stderr == pytest.approx(chain_stats(slow, 1.0).stderr, rel=1e-12)
    assert floored.stderr > 0.2 and floored.mean == alone.mean
    steady = 5.0 + 1e-3 * rng.normal(size=(4, 40))
    assert precision_of(delta, 1.0, 0.1, None, full=steady).stderr == alone.stderr


def test_relaxation_floor_is_one_relaxation_time_of_the_slowest_direction() -> None:
    """⌈2/(ε·κ_min)⌉ draws under LM (at most ``MAX_DRAWS``), none where there is no slowest
    relevant direction (κ_min nan: the chains spread, tracked by position); ``choose_num_draws``
    starts the automatic draws there when the burn-in's τ asks for fewer, and a given
    ``num_draws`` is kept."""
    tuning = Tuning(step_size=1e-3, kappa=1.0)
    warm = SimpleNamespace(tuning=tuning, tail=None)
    t = sgld.relaxation_steps(1e-3, 0.5, math.inf)
    assert t == pytest.approx(4000.0)
    assert relaxation_floor(warm, SimpleNamespace(kappa_min=0.5)) == math.ceil(t)
    assert relaxation_floor(warm, SimpleNamespace(kappa_min=1e-6)) == MAX_DRAWS
    assert relaxation_floor(warm, SimpleNamespace(kappa_min=math.nan)) == 0
    plan = SimpleNamespace(kappa_min=0.5)
    assert choose_num_draws(warm, plan, LLCOptions(), 4)[0] == math.ceil(t)  # not 1,000
    assert choose_num_draws(warm, plan, LLCOptions(num_draws=300), 4)[0] == 300


def test_a_minibatch_estimate_reports_at_least_its_full_data_error() -> None:
    """On minibatches the reported standard error is the larger of the minibatch trace's and the
    full-data floor (where that is defined): on y = x·w0·w1 at the origin (n = 10⁴, pure-noise
    responses, B = 64, L_n every 10 draws) the identity holds at two seeds, and the floor binds at
    one of them (the chains' slow spread moves L_n over several evaluations); on the full batch
    the error is the trace's own, not the thinned full-data one's."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(10_000, 1, generator=g, dtype=torch.float64)
    y = torch.randn(10_000, 1, generator=g, dtype=torch.float64)

    def loss(p, batch):
        return 0.5 * (batch[1] - batch[0] * p["w"][0] * p["w"][1]).square().mean()

    w = {"w": torch.zeros(2, dtype=torch.float64)}
    run = dict(num_chains=4, num_burnin=300, num_draws=1000, full_loss_every=10)
    bound = []
    for seed in (0, 1):
        est = numeric.estimate_llc(loss, w, (x, y), seed=seed, batch_size=64, **run)
        nbeta = float(est.nbeta)
        own = chain_stats(est.delta_trace, nbeta).stderr
        floor = full_data_stderr(est.full_data.loss_trace - est.init_loss, nbeta)
        assert est.stderr == max(own, floor if math.isfinite(floor) else 0.0)
        bound.append(math.isfinite(floor) and floor > own)
    assert any(bound)
    full = numeric.estimate_llc(loss, w, (x[:2000], y[:2000]), seed=0, batch_size=2000, **run)
    own = chain_stats(full.delta_trace, float(full.nbeta)).stderr
    thinned = full_data_stderr(full.full_data.loss_trace - full.init_loss, float(full.nbeta))
    assert thinned > own and full.stderr == own  # a floor that would bind, not applied
