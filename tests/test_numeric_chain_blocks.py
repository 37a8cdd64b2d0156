"""``chain_block=k``: the sampler's gradients (and the warm-up's curvature products) for at most k
chains at a time, one reverse pass per block, so that memory holds one block's activations. The
random draws (noise, minibatches) are made for all chains at once as before, and each chain's
loss depends on its own row only, so the estimate is the all-at-once estimate up to rounding."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import numeric
import numeric.sampler.gradients
from numeric.errors import InvalidInputError
from verification.models import product_regression

N = 2000
FIXED = dict(num_chains=8, seed=3, num_burnin=60, num_draws=120, progress=False)


@pytest.fixture(scope="module")
def saddle():
    prob = product_regression(N, torch.Generator().manual_seed(0))
    return prob.loss_fn, prob.params, prob.data


def _close(a: numeric.LLCEstimate, b: numeric.LLCEstimate) -> None:
    assert a.config.step_size == pytest.approx(b.config.step_size, rel=1e-9)
    np.testing.assert_allclose(a.loss_trace, b.loss_trace, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.per_chain, b.per_chain, rtol=1e-7, atol=1e-9)
    assert a.mean == pytest.approx(b.mean, rel=1e-7, abs=1e-9)


@pytest.mark.parametrize(
    "path",
    [
        dict(batch_size=32),  # control variate, automatic integrator and step size
        dict(batch_size=32, anchor_every=20, integrator="baoab"),  # anchored rows
        dict(batch_size=32, gradient="minibatch", integrator="euler"),
        dict(batch_size=N),  # the full batch, shared by the chains
    ],
    ids=["control_variate", "anchors", "minibatch", "full_batch"],
)
def test_blocks_give_the_all_at_once_estimate(saddle, path) -> None:
    loss_fn, params, data = saddle
    whole = numeric.estimate_llc(loss_fn, params, data, **FIXED, **path)
    blocked = numeric.estimate_llc(loss_fn, params, data, chain_block=3, **FIXED, **path)
    assert math.isfinite(whole.mean) and 0.0 < whole.mean < 1.0  # λ_β ≈ 0.35 here
    _close(blocked, whole)


def test_no_gradient_pass_sees_more_than_a_block(saddle, monkeypatch) -> None:
    """Every reverse pass over chains' positions with minibatches (the sampler's gradients,
    the warm-up's curvature products) takes at most chain_block chains' rows: 3 chains × at
    most 3 rows each ([w; a; w*]), where all at once they are 8 chains' (16 or 24 rows)."""
    loss_fn, params, data = saddle
    rows: list[int] = []
    real = torch.autograd.grad

    def spy(outputs, inputs, *a, **k):
        x = inputs[0] if isinstance(inputs, (tuple, list)) else inputs
        if x.dim() == 2:  # positions [rows, D]; w* alone is [D]
            rows.append(x.shape[0])
        return real(outputs, inputs, *a, **k)

    monkeypatch.setattr(torch.autograd, "grad", spy)
    numeric.estimate_llc(loss_fn, params, data, batch_size=32, **FIXED)
    assert max(rows) >= 16  # all at once
    rows.clear()
    numeric.estimate_llc(loss_fn, params, data, chain_block=3, batch_size=32, **FIXED)
    assert rows and max(rows) <= 9, sorted(set(rows))


def test_the_runtime_group_takes_chain_block(saddle) -> None:
    loss_fn, params, data = saddle
    a = numeric.estimate_llc(loss_fn, params, data, chain_block=2, batch_size=32, **FIXED)
    b = numeric.estimate_llc(
        loss_fn, params, data, runtime=numeric.Runtime(chain_block=2), batch_size=32, **FIXED
    )
    assert a.mean == b.mean  # the same run, by either spelling


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        (dict(chain_block=0), "chain_block"),
        (dict(chain_block=2.5), "chain_block"),
        (dict(chain_block=2, compile=True), "chain_block"),
    ],
)
def test_bad_chain_blocks_are_refused(saddle, kw, match) -> None:
    loss_fn, params, data = saddle
    with pytest.raises(InvalidInputError, match=match):
        numeric.estimate_llc(loss_fn, params, data, **FIXED, **kw)
