"""The five Lau et al. claim functions: each on a tiny configuration, and each verdict's rule."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import sympy as sp
import torch

from verification.experiments import entropy_sgd, sgd
from verification.experiments.dln import DLNPoint, dln_claim, dln_verdict
from verification.experiments.entropy import MinimumPoint, entropy_claim, entropy_verdict
from verification.experiments.llc import LLCPoint, mse_loss
from verification.experiments.networks import relu_mlp
from verification.experiments.rescaling import (
    RescalingPoint,
    rescale,
    rescaling_claim,
    rescaling_verdict,
)
from verification.experiments.saddles import SaddlePoint, learned_rank, saddle_claim, saddle_verdict
from verification.experiments.sgld_mala import (
    SamplerPair,
    mlp_potential,
    sampler_pair,
    sampler_verdict,
)
from verification.experiments.teachers import dln_teacher

SHORT = dict(num_chains=2, num_burnin=40, num_draws=80)


def _pt(llc: float, se: float = 0.1, worst: str = "none", seconds: float = 1.0) -> LLCPoint:
    return LLCPoint(0, llc, se, 50.0, 1.0, 100.0, 0.0, 10, "", worst, seconds)


# ---- claim 1: deep linear networks


def test_dln_claim_on_one_tiny_network():
    t = dln_teacher([3, 2, 3], 1, seed=0)
    res = dln_claim([t], 500, trained=1, train_steps=50, **SHORT)
    true, trained = res.points
    assert (true.where, trained.where) == ("true", "trained")
    assert true.loss == 0.0 and trained.loss > 0
    assert true.estimate.num_params == 12 and math.isfinite(true.estimate.llc)
    assert true.rel_error == pytest.approx(true.estimate.llc / float(t.lam) - 1)
    assert res.verdict.outcome in ("reproduced", "not reproduced", "inconclusive")


def _dln_points(errors, worst="none"):
    t = dln_teacher([3, 2, 3], 1, seed=0)  # λ = 7/2
    lam = float(t.lam)
    return [DLNPoint(t, "true", _pt(lam * (1 + e), worst=worst), 0.0) for e in errors]


def test_dln_verdict_rule():
    assert dln_teacher([3, 2, 3], 1, seed=0).lam == sp.Rational(7, 2)  # Aoyagi–Watanabe case 1, odd
    assert dln_verdict(_dln_points([0.01, -0.02, 0.04, 0.1])).outcome == "reproduced"
    assert dln_verdict(_dln_points([0.01, -0.02, 0.2])).outcome == "inconclusive"
    assert dln_verdict(_dln_points([0.01, 0.02], worst="error")).outcome == "inconclusive"
    v = dln_verdict(_dln_points([-0.3, -0.4, -0.2]))
    assert v.outcome == "not reproduced"
    assert v.to_dict()["median |λ̂/λ − 1|"] == pytest.approx(0.3)
    # far from λ, but every estimate flagged unusable: no evidence either way
    assert dln_verdict(_dln_points([-0.3, -0.4, -0.2], worst="error")).outcome == "inconclusive"
    # one usable estimate of three is too few to refute; two of three are enough
    few = _dln_points([-0.3], worst="none") + _dln_points([0.4, -0.5], worst="error")
    assert dln_verdict(few).outcome == "inconclusive"
    enough = _dln_points([-0.3, 0.2], worst="none") + _dln_points([0.0], worst="error")
    v = dln_verdict(enough)
    assert v.outcome == "not reproduced"
    assert v.to_dict()["median |λ̂/λ − 1| without an error finding"] == pytest.approx(0.25)


# ---- claim 2: SGLD against MALA


def test_mlp_potential_equals_the_module_loss():
    net = relu_mlp([2, 3, 1], generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    x = torch.randn(9, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    y = torch.randn(9, 1, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    w = torch.cat([p.detach().flatten() for p in net.parameters()])
    K = mlp_potential(net, x, y)
    expected = mse_loss(net(x), y).item()
    assert K(w).item() == pytest.approx(expected, rel=1e-14)
    both = torch.tensor([expected, K(2 * w).item()], dtype=torch.float64)
    assert torch.allclose(K(torch.stack([w, 2 * w])), both)


TINY_PAIR = dict(
    num_chains=2, sgld=dict(num_burnin=40, num_draws=80), mala=dict(num_burnin=40, num_draws=80)
)


def test_sampler_pair_on_a_tiny_network():
    p = sampler_pair([1, 2, 1], 200, **TINY_PAIR)
    assert p.n == 200 and p.sgld.num_params == p.mala.num_params == 7
    assert p.z == pytest.approx(
        (p.sgld.llc - p.mala.llc) / math.hypot(p.sgld.stderr, p.mala.stderr)
    )
    assert p.hmc is None and math.isnan(p.z_hmc)


def test_sampler_pair_with_the_hmc_reference():
    """HMC on the same potential: a record with its own errors, and both differences from it."""
    p = sampler_pair([1, 2, 1], 200, **TINY_PAIR, hmc=dict(num_burnin=20, num_draws=40))
    assert p.hmc is not None and p.hmc.num_params == 7 and p.hmc.stderr > 0
    assert p.hmc.nbeta == pytest.approx(p.sgld.nbeta)
    assert p.z_hmc == pytest.approx(
        (p.sgld.llc - p.hmc.llc) / math.hypot(p.sgld.stderr, p.hmc.stderr)
    )
    assert p.z_mala_hmc == pytest.approx(
        (p.mala.llc - p.hmc.llc) / math.hypot(p.mala.stderr, p.hmc.stderr)
    )


def test_sampler_verdict_rule():
    def pair(n, a, b, worst="none", hmc=None, mala_worst="none"):
        p = SamplerPair(
            n, _pt(a, 0.1, worst, 1.0), _pt(b, 0.1, mala_worst, 4.0), (a - b) / math.hypot(0.1, 0.1)
        )
        if hmc is None:
            return p
        h, h_worst = hmc
        return dataclasses.replace(
            p,
            hmc=_pt(h, 0.1, h_worst, 8.0),
            z_hmc=(a - h) / math.hypot(0.1, 0.1),
            z_mala_hmc=(b - h) / math.hypot(0.1, 0.1),
        )

    v = sampler_verdict([pair(100, 1.0, 1.1), pair(1000, 2.0, 2.0)])
    assert v.outcome == "reproduced" and v.to_dict()["MALA time / SGLD time"] == 4.0
    assert sampler_verdict([pair(100, 1.0, 2.0)]).outcome == "not reproduced"
    assert sampler_verdict([pair(100, 1.0, 2.0, worst="error")]).outcome == "inconclusive"
    # MALA flagged: inconclusive without HMC; with a clean HMC that agrees, reproduced after a
    # correction (HMC stands in at that n only); a flagged HMC does not stand in
    flagged = pair(1000, 2.0, 1.7, mala_worst="error")
    assert sampler_verdict([pair(100, 1.0, 1.1), flagged]).outcome == "inconclusive"
    swapped = pair(1000, 2.0, 1.7, mala_worst="error", hmc=(2.05, "warning"))
    v = sampler_verdict([pair(100, 1.0, 1.1), swapped])
    assert v.outcome == "reproduced after a correction"
    assert "n = [1000]" in v.sentence and "HMC" in v.sentence
    assert v.to_dict()["z(SGLD − HMC) at n = 1000"] == pytest.approx(-0.05 / math.hypot(0.1, 0.1))
    assert v.to_dict()["HMC time / SGLD time"] == 8.0
    far = pair(1000, 2.0, 1.7, mala_worst="error", hmc=(2.6, "none"))
    assert sampler_verdict([pair(100, 1.0, 1.1), far]).outcome == "not reproduced"
    bad_hmc = pair(1000, 2.0, 1.7, mala_worst="error", hmc=(2.0, "error"))
    assert sampler_verdict([bad_hmc]).outcome == "inconclusive"
    # a clean MALA stays the reference even where HMC disagrees with SGLD
    assert sampler_verdict([pair(100, 1.0, 1.1, hmc=(3.0, "none"))]).outcome == "reproduced"


# ---- claim 3: rescaling


def test_rescale_keeps_the_function():
    net = relu_mlp([2, 3, 1], generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    x = torch.randn(5, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    params = {k: v.detach() for k, v in net.named_parameters()}
    out = torch.func.functional_call(net, rescale(params, 1e3), (x,))
    assert torch.allclose(out, net(x), rtol=1e-12, atol=1e-12)


def test_rescaling_claim_on_a_tiny_network():
    res = rescaling_claim([1, 2, 1], [0.1, 1.0], 300, variants=("invariant", "defaults"), **SHORT)
    assert [(p.variant, p.alpha) for p in res.points] == [
        ("invariant", 0.1),
        ("invariant", 1.0),
        ("defaults", 0.1),
        ("defaults", 1.0),
    ]
    assert all(math.isfinite(p.estimate.llc) for p in res.points)
    # each α its own seed (issue 62): the invariant series, equal in law, is no longer identical
    inv = res.series("invariant")
    assert abs(inv[0].estimate.llc - inv[1].estimate.llc) > 1e-9
    with pytest.raises(ValueError, match="two-layer"):
        rescaling_claim([1, 2, 2, 1], [1.0], 100)


def test_rescaling_verdict_rule():
    def pts(variant, values):
        return [RescalingPoint(a, variant, _pt(v)) for a, v in zip([0.01, 1.0, 100.0], values)]

    # issue 62: the verdict reads the package's defaults; the invariant series is a sanity check
    v = rescaling_verdict(pts("invariant", [1.0, 1.05, 0.95]) + pts("defaults", [0.2, 1.0, 0.3]))
    assert v.outcome == "not reproduced" and "defaults: not constant" in v.sentence
    assert "invariant (sanity check): constant" in v.sentence
    assert v.to_dict()["max |z| vs α = 1 (defaults)"] == pytest.approx(0.8 / math.hypot(0.1, 0.1))
    v = rescaling_verdict(pts("invariant", [1.0, 2.0, 1.0]) + pts("defaults", [1.0, 1.05, 0.95]))
    assert v.outcome == "reproduced"  # a broken sanity series does not count either way
    # within the errors but 20% apart: not constant (both conditions are required)
    wide = [RescalingPoint(a, "defaults", _pt(v, 1.0)) for a, v in zip([0.1, 1.0], [1.2, 1.0])]
    assert rescaling_verdict(wide).outcome == "not reproduced"
    failed = [RescalingPoint(0.01, "defaults", _pt(math.nan)), *pts("defaults", [1, 1, 1])[1:]]
    assert rescaling_verdict(failed).outcome == "not reproduced"
    # not constant, but an estimate has an error finding: inconclusive
    flagged = [
        RescalingPoint(0.01, "defaults", _pt(2.0, worst="error")),
        *pts("defaults", [1, 1, 1])[1:],
    ]
    assert rescaling_verdict(flagged).outcome == "inconclusive"


# ---- claim 4: saddle to saddle


def test_learned_rank_counts_singular_values_above_half_the_smallest():
    P = torch.diag(torch.tensor([3.0, 0.8, 0.3], dtype=torch.float64))
    assert learned_rank(P, s_min=1.0) == 2


def test_saddle_claim_on_a_tiny_network():
    res = saddle_claim([2, 2, 2], [2.0, 1.0], 200, 60, [0, 30], lr=0.1, init_scale=0.1, **SHORT)
    assert all(p.gamma == 1.0 for p in res.points)
    assert [p.step for p in res.points] == [0, 30, 60]
    # at step 0 nothing is learned: rank 0, whose λ is that of the zero map (Aoyagi: 3/2)
    assert res.points[0].rank == 0 and res.points[0].lam == 1.5
    assert res.run.losses.shape == (60,)
    # the quadratic target at each checkpoint is recorded (12 parameters: the dense Hessian) and
    # named in the verdict beside λ̂; it lies in [0, D/2]
    assert all(0.0 <= p.estimate.laplace <= 6.0 for p in res.points)
    assert f"{res.points[-1].estimate.laplace:.3g}" in res.verdict.sentence


def test_saddle_verdict_rule():
    def sp_(k, llc, gamma=1.0):
        return SaddlePoint(0, 1.0, k, float(k + 1), gamma, _pt(llc))

    up = [sp_(0, 0.9), sp_(1, 2.0), sp_(1, 2.1), sp_(2, 3.1)]  # λ_k = k + 1
    assert saddle_verdict(up).outcome == "reproduced"
    # steps up, but far below λ_k (λ̂/λ_k = 0.1, 0.25, 0.33): not "near the λ of the learned rank"
    low = [sp_(0, 0.1), sp_(1, 0.5), sp_(2, 1.0)]
    v = saddle_verdict(low)
    assert v.outcome == "not reproduced" and "near λ_k (within 25% at every rank): no" in v.sentence
    assert saddle_verdict([sp_(0, 0.1), sp_(1, 0.15)]).outcome == "not reproduced"
    assert saddle_verdict([sp_(0, 1.0), sp_(1, 0.2)]).outcome == "not reproduced"
    assert saddle_verdict([sp_(1, 1.0)]).outcome == "inconclusive"
    # negative at the saddles with γ = 1, rising with γ = 1000: after a correction
    negative = [sp_(0, -80.0), sp_(1, -20.0), sp_(2, 5.0)]
    held = [sp_(0, 0.9, 1000.0), sp_(1, 1.9, 1000.0), sp_(2, 2.8, 1000.0)]
    v = saddle_verdict(negative + held)
    assert v.outcome == "reproduced after a correction"
    assert "2 of 3 estimates invalid" in v.sentence


# ---- claim 5: SGD against entropy-SGD


def test_entropy_claim_on_tiny_data(capsys):
    from verification.experiments.datasets import Dataset

    g = torch.Generator().manual_seed(0)
    x = torch.rand(60, 4, generator=g)
    y = (x[:, 0] > 0.5).long()
    data = Dataset("toy", x[:40], y[:40], x[40:], y[40:], 2)
    res = entropy_claim(
        data,
        [3],
        sgd(0.1, 0.9, nesterov=True),
        entropy_sgd(0.5, inner_steps=2),
        20,
        [0, 1],
        batch_size=10,
        progress=True,
        **SHORT,
    )
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "λ̂ =" in ln]
    assert [ln.split(":")[0] for ln in lines] == [
        "SGD+Nesterov(0.9) seed 0",
        "entropy-SGD(L=2) seed 0",
        "SGD+Nesterov(0.9) seed 1",
        "entropy-SGD(L=2) seed 1",
    ]
    assert lines[0].endswith(
        f"{res.points[0].estimate.llc:.2f} ± {res.points[0].estimate.stderr:.2f}"
    )
    assert [(p.optimizer, p.seed) for p in res.points] == [
        ("SGD+Nesterov(0.9)", 0),
        ("entropy-SGD(L=2)", 0),
        ("SGD+Nesterov(0.9)", 1),
        ("entropy-SGD(L=2)", 1),
    ]
    assert all(0 <= p.test_accuracy <= 1 and math.isfinite(p.estimate.llc) for p in res.points)
    assert res.llcs("entropy-SGD(L=2)").shape == (2,)


def test_entropy_verdict_rule():
    def pts(label, values):
        return [MinimumPoint(label, i, 0.1, 1.0, 0.9, _pt(v)) for i, v in enumerate(values)]

    a, b = "SGD", "entropy-SGD"
    lower = pts(a, [10, 11, 12, 10.5]) + pts(b, [7, 8, 7.5, 8.2])
    v = entropy_verdict(lower, a, b)
    assert v.outcome == "reproduced"
    assert v.to_dict()["paired difference (entropy-SGD − SGD)"] == pytest.approx(7.675 - 10.875)
    # the same initialisation per seed: a small, consistent shift under a large spread between
    # seeds is significant paired (Welch's unpaired test would not see it)
    base = [10.0, 20.0, 30.0, 40.0]
    shifted = [v - 0.5 + e for v, e in zip(base, [0.05, -0.05, 0.1, -0.1], strict=True)]
    v = entropy_verdict(pts(a, base) + pts(b, shifted), a, b)
    d = np.array(shifted) - np.array(base)  # paired t by hand: mean/(sd/√k), df = 3
    t_hand = d.mean() / (d.std(ddof=1) / 2)
    assert v.to_dict()["paired t"] == pytest.approx(t_hand) and v.outcome == "reproduced"
    assert (
        entropy_verdict(pts(a, [7, 8, 7.5]) + pts(b, [10, 11, 12]), a, b).outcome
        == "not reproduced"
    )
    assert entropy_verdict(pts(a, [7, 12, 9]) + pts(b, [8, 11, 10]), a, b).outcome == "inconclusive"
