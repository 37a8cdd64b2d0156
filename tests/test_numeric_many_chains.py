"""Any number of chains on every path the plan can choose (issue 65).

The minibatch-heating measurement looks at the first ``warmup.friction.INFLATION_CHAINS`` = 16 live
chains; it once took their anchors but not their anchor losses, so 17 or more chains at a singular
point crashed the estimate. Each path here runs at 1, 2, 15, 16, 17, 64 and 256 chains: the same
quantity is estimated (the noisy saddle y = x·w1·w2 at w* = 0), so every run must end with a finite
λ̂ of the right size and one value per chain.

What the chains share, so that a chain's numbers depend on how many run beside it: the noise and
the minibatches come from one generator in [step, chain] order (chain 0's draws differ between
C = 16 and C = 17), and where lengths, ε or friction are adapted, the adaptation reads every live
chain (the step size, the relaxation time) or the first 16 (the heating). With ε, friction,
lengths and the gradient all fixed nothing is adapted, and the chains are independent draws of one
process: ``test_fixed_chains_are_exchangeable_across_counts`` checks that the per-chain values at
16 chains and at 256 come from the same distribution.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import numeric
from verification.models import product_regression

COUNTS = (1, 2, 15, 16, 17, 64, 256)
N = 2000
NBETA = N / math.log(N)
FIXED = dict(nbeta=NBETA, step_size=1e-4, num_burnin=50, num_draws=150, progress=False)

# path name -> keyword arguments of estimate_llc (besides FIXED and num_chains)
PATHS = {
    "lm_control_variate": dict(integrator="lm", batch_size=32),
    "baoab_control_variate": dict(integrator="baoab", batch_size=32),
    "baoab_anchors": dict(integrator="baoab", batch_size=32, anchor_every=25),
    "lm_anchors": dict(integrator="lm", batch_size=32, anchor_every=25),
    "minibatch_gradient": dict(integrator="lm", batch_size=32, gradient="minibatch"),
    "euler": dict(integrator="euler", batch_size=32, gradient="minibatch"),
    "full_batch": dict(batch_size=N),
    "automatic_integrator": dict(batch_size=32),
}


@pytest.fixture(scope="module")
def saddle():
    prob = product_regression(N, torch.Generator().manual_seed(0))
    return prob.loss_fn, prob.params, prob.data


def _check(est: numeric.LLCEstimate, chains: int) -> None:
    assert est.per_chain.shape == (chains,)
    assert est.loss_trace.shape[0] == chains
    assert math.isfinite(est.mean)
    # λ of w1²w2² is 1/2; at nβ = n/log n and γ = 1 the target is ≈ 0.35 (quadrature); a short run
    # lands near it, and a run that mixed up its chains' constants reads nonsense or crashes
    assert 0.0 < est.mean < 1.0, est


@pytest.mark.parametrize("chains", COUNTS)
@pytest.mark.parametrize("path", sorted(PATHS))
def test_every_path_runs_at_any_number_of_chains(saddle, path: str, chains: int) -> None:
    loss_fn, params, data = saddle
    est = numeric.estimate_llc(
        loss_fn, params, data, num_chains=chains, seed=0, **FIXED, **PATHS[path]
    )
    _check(est, chains)


@pytest.mark.parametrize("chains", COUNTS)
def test_the_potential_estimator_runs_at_any_number_of_chains(chains: int) -> None:
    def K(w):
        return w[..., 0] ** 2 * w[..., 1] ** 2

    est = numeric.estimate_llc_potential(
        K, [0.0, 0.0], 10**4, num_chains=chains, num_burnin=100, num_draws=200, seed=0,
        progress=False,
    )  # fmt: skip
    assert est.per_chain.shape == (chains,)
    assert 0.0 < est.mean < 1.0, est


@pytest.mark.parametrize("chains", [17, pytest.param(64, marks=pytest.mark.slow)])
def test_automatic_lengths_at_many_chains(saddle, chains: int) -> None:
    """The defaults (adapted ε, friction, lengths, anchors where the plan asks for them): the
    path of the issue's crash, the heating measured on 16 of the chains."""
    loss_fn, params, data = saddle
    est = numeric.estimate_llc(
        loss_fn, params, data, nbeta=NBETA, batch_size=32, num_chains=chains, seed=0,
        progress=False,
    )  # fmt: skip
    _check(est, chains)


@pytest.mark.parametrize(
    "chains", [pytest.param(c, marks=() if c == 17 else pytest.mark.slow) for c in COUNTS]
)
def test_compiled_steps_run_at_any_number_of_chains(saddle, chains: int) -> None:
    loss_fn, params, data = saddle
    est = numeric.estimate_llc(
        loss_fn, params, data, num_chains=chains, seed=0, compile=True, integrator="baoab",
        batch_size=32, anchor_every=25, **FIXED,
    )  # fmt: skip
    _check(est, chains)


def test_fixed_chains_are_exchangeable_across_counts(saddle) -> None:
    """Nothing adapted (ε, lengths, integrator and gradient given): the first 16 chains of a
    256-chain run and a 16-chain run are draws of one distribution. Their per-chain λ̂ agree in
    mean within 4 combined standard errors and in spread within a factor of 2."""
    loss_fn, params, data = saddle
    kw = dict(integrator="lm", batch_size=32, gradient="minibatch", **FIXED)
    runs = {
        c: numeric.estimate_llc(loss_fn, params, data, num_chains=c, seed=c, **kw).per_chain
        for c in (16, 256)
    }
    a, b = runs[16], runs[256][:16]
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    assert abs(a.mean() - b.mean()) < 4 * se
    ratio = float(np.std(a, ddof=1) / np.std(runs[256], ddof=1))
    assert 0.5 < ratio < 2.0
