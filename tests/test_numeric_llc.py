"""estimate_llc / estimate_llc_potential against exact λ and against expected_llc.

Tolerances are statistical: |λ̂ − target| ≤ 4·stderr (+ the quadrature error), after checking
that the effective sample size is large enough for the stderr to mean something (ESS ≥ 100).
Against the asymptotic λ the target is λ − (m−1)/log(nβ); every model here has m = 1 and
γ = 1 ≪ nβ·curvature, so the localisation bias is far below the error bar (checked against
expected_llc where that exists).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from _devices import DEVICES

import numeric
from numeric.errors import DivergenceError, InvalidInputError
from numeric.potential.reference import GaussianLinear, expected_llc
from numeric.sampler.sgld import relaxation_steps

N = 10_000
NBETA = N / math.log(N)


def _assert_close(est: numeric.LLCEstimate, target: float, extra: float = 0.0) -> None:
    assert est.ess >= 100, est
    assert abs(est.mean - target) <= 4 * est.stderr + extra, (est.mean, target, est.stderr)


def _linear(n: int = N, d: int = 4, seed: int = 0) -> tuple[GaussianLinear, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g)
    y = X @ torch.randn(d, generator=g) + torch.randn(n, generator=g)
    m = GaussianLinear(X, y)
    return m, m.minimiser()


def test_regular_linear_regression_recovers_d_over_2() -> None:
    m, w_hat = _linear()
    est = numeric.estimate_llc(m.loss_fn, {"w": w_hat}, m.data, num_chains=4, seed=0)
    _assert_close(est, 2.0)  # λ = d/2, m = 1
    ref = expected_llc(m, w_hat, nbeta=est.nbeta, gamma=est.config.gamma)
    _assert_close(est, ref.value)
    assert est.full_data is not None
    assert abs(est.full_data.mean - ref.value) <= 4 * est.full_data.stderr
    assert est.config.nbeta_rule == "n/log n" and est.nbeta == pytest.approx(NBETA)
    assert est.loss_trace.shape == (4, est.config.num_draws)
    assert est.wbic is not None
    assert not [f for f in est.diagnostics if f.severity != "info"], est.diagnostics


def test_baoab_by_request_at_a_minimum() -> None:
    """integrator='baoab' where the default is LM (a preconditioned minimum): critical damping of
    the slowest preconditioned direction (ξ = 2), and the estimate on the exact target."""
    m, w_hat = _linear(n=2000, d=4)
    est = numeric.estimate_llc(m.loss_fn, {"w": w_hat}, m.data, num_chains=4, integrator="baoab")
    assert est.config.integrator == "baoab" and est.config.friction == pytest.approx(2.0)
    assert not [f for f in est.diagnostics if f.severity == "error"], est.diagnostics
    ref = expected_llc(m, w_hat, nbeta=est.nbeta, gamma=est.config.gamma)
    _assert_close(est, ref.value)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_normal_crossing_monomials_at_origin(k: int) -> None:
    K = lambda w: w[..., 0] ** (2 * k)  # noqa: E731
    est = numeric.estimate_llc_potential(K, [0.0], N, num_chains=8, seed=k)
    _assert_close(est, 1 / (2 * k))  # λ = 1/(2k), m = 1
    ref = expected_llc(K, [0.0], nbeta=est.nbeta, gamma=est.config.gamma)
    _assert_close(est, ref.value, ref.abserr)
    assert est.config.sampler == "mala" and 0.5 < est.config.acceptance_rate < 0.95


def test_normal_crossing_product_agrees_with_quadrature() -> None:
    K = lambda w: w[..., 0] ** 2 * w[..., 1] ** 4  # noqa: E731  λ = 1/4, m = 1
    est = numeric.estimate_llc_potential(K, [0.0, 0.0], N, num_chains=16, seed=0)
    ref = expected_llc(K, [0.0, 0.0], nbeta=est.nbeta, gamma=est.config.gamma, num_points=401)
    _assert_close(est, ref.value, ref.abserr)


def test_axis_crossing_mixes_with_position_dependent_steps() -> None:
    """K = w1²w2² (λ = 1/2, m = 2): plain MALA creeps along the axes (the pilot sees it), so the
    position-dependent steps are added; the positions then mix (no slow_mixing finding) and the
    estimate agrees with quadrature. On K = w² the pilot leaves them off."""
    K = lambda w: w[..., 0] ** 2 * w[..., 1] ** 2  # noqa: E731
    est = numeric.estimate_llc_potential(K, [0.0, 0.0], N, num_chains=8, seed=0)
    assert est.config.preconditioner == "position_dependent"
    assert "pilot" in est.config.step_size_rule and "on" in est.config.step_size_rule
    assert 0.3 < est.config.metric_acceptance_rate < 0.9
    assert est.slow_ess >= 400, est.slow_ess
    assert not [f for f in est.diagnostics if f.severity != "info"], est.diagnostics
    ref = expected_llc(K, [0.0, 0.0], nbeta=est.nbeta, gamma=est.config.gamma, num_points=401)
    _assert_close(est, ref.value, ref.abserr)
    regular = numeric.estimate_llc_potential(lambda w: w[..., 0] ** 2, [0.0], N, num_chains=8)
    assert regular.config.preconditioner == "none"
    assert "off" in regular.config.step_size_rule
    assert math.isnan(regular.config.metric_acceptance_rate)


def test_unadjusted_langevin_on_potential() -> None:
    K = lambda w: w[..., 0] ** 4  # noqa: E731
    est = numeric.estimate_llc_potential(K, [0.0], N, num_chains=8, seed=5, metropolis=False)
    ref = expected_llc(K, [0.0], nbeta=est.nbeta, gamma=est.config.gamma)
    _assert_close(est, ref.value)


@pytest.mark.slow
def test_reduced_rank_regression_at_origin() -> None:
    """y = BAx, M = N = H = 2, true rank r = 0: λ = [2·2·4 − 0 − 4]/8 = 3/2, m = 1 (Aoyagi).

    Slow (30–40 s): at a singular minimum whose Hessian is 0 the chains spread along directions
    held only by γ, over 2/(ε·γ) steps, and ε is small (the loss is quartic), so the defaults
    run 20,000 burn-in steps and 20,000 draws.

    The responses are noise-free (y = 0), so L_n(w) = ½·mean‖BAx‖² is the population loss with
    the empirical input covariance and w* = 0 is its exact minimum.
    """
    g = torch.Generator().manual_seed(0)
    x = torch.randn(N, 2, generator=g)
    y = torch.zeros(N, 2)

    def loss_fn(p: dict[str, torch.Tensor], batch: tuple[torch.Tensor, torch.Tensor]):
        xb, yb = batch
        return 0.5 * (yb - xb @ p["A"].T @ p["B"].T).square().sum(-1).mean()

    w_star = {"A": torch.zeros(2, 2), "B": torch.zeros(2, 2)}
    est = numeric.estimate_llc(loss_fn, w_star, (x, y), num_chains=8, seed=0)
    _assert_close(est, 1.5)


@pytest.mark.parametrize("device", DEVICES)
def test_same_seed_identical_and_chains_differ(device: str) -> None:
    m, w_hat = _linear(n=500, d=3)
    kw = dict(num_chains=3, num_draws=50, num_burnin=20, seed=11, device=device)
    a = numeric.estimate_llc(m.loss_fn, {"w": w_hat}, m.data, **kw)
    b = numeric.estimate_llc(m.loss_fn, {"w": w_hat}, m.data, **kw)
    assert (a.loss_trace == b.loss_trace).all() and a.mean == b.mean
    assert len(set(a.per_chain.tolist())) == 3
    c = numeric.estimate_llc(m.loss_fn, {"w": w_hat}, m.data, **{**kw, "seed": 12})
    assert not (a.loss_trace == c.loss_trace).all()


def test_from_module_matches_functional_loss() -> None:
    m, w_hat = _linear(n=2000, d=3)
    lin = torch.nn.Linear(3, 1, bias=False)
    with torch.no_grad():
        lin.weight.copy_(w_hat[None])
    loss_fn, params = numeric.from_module(
        lin, lambda out, yy: 0.5 * (out[:, 0] - yy).square().mean()
    )
    kw = dict(num_chains=2, num_draws=30, num_burnin=10, seed=1, step_size=1e-4)
    a = numeric.estimate_llc(loss_fn, params, m.data, **kw)
    b = numeric.estimate_llc(m.loss_fn, {"w": w_hat}, m.data, **kw)
    assert a.loss_trace == pytest.approx(b.loss_trace, rel=1e-4, abs=1e-6)


def test_bad_inputs_raise_clear_errors() -> None:
    m, w_hat = _linear(n=100, d=3)
    ok = dict(num_chains=2, num_draws=5, num_burnin=0, step_size=1e-3)
    with pytest.raises(InvalidInputError, match="loss_fn"):
        numeric.estimate_llc(m.loss_fn, {"w": torch.zeros(5)}, m.data, **ok)
    with pytest.raises(InvalidInputError, match="empty"):
        numeric.estimate_llc(m.loss_fn, {"w": w_hat}, (m.X[:0], m.y[:0]), **ok)
    with pytest.raises(InvalidInputError, match="different lengths"):
        numeric.estimate_llc(m.loss_fn, {"w": w_hat}, (m.X, m.y[:50]), **ok)
    with pytest.raises(InvalidInputError, match="not finite"):
        numeric.estimate_llc(m.loss_fn, {"w": torch.tensor([0.0, math.nan, 1.0])}, m.data, **ok)
    for bad in (0.0, -1.0, math.inf):
        with pytest.raises(InvalidInputError, match="nbeta"):
            numeric.estimate_llc(m.loss_fn, {"w": w_hat}, m.data, nbeta=bad, **ok)
        with pytest.raises(InvalidInputError, match="step_size"):
            numeric.estimate_llc(m.loss_fn, {"w": w_hat}, m.data, **{**ok, "step_size": bad})
    with pytest.raises(InvalidInputError, match="scalar"):
        numeric.estimate_llc(lambda p, b: b[0] @ p["w"], {"w": w_hat}, m.data, **ok)
    y_nan = m.y.clone()
    y_nan[7] = math.nan
    with pytest.raises(InvalidInputError, match=r"not finite: data\[1\] has NaN"):
        numeric.estimate_llc(m.loss_fn, {"w": w_hat}, (m.X, y_nan), **ok)
    for bad in (0.0, -1.0):
        with pytest.raises(InvalidInputError, match="friction must be"):
            numeric.estimate_llc(m.loss_fn, {"w": w_hat}, m.data, friction=bad, **ok)
    with pytest.raises(InvalidInputError, match="friction applies"):
        numeric.estimate_llc(m.loss_fn, {"w": w_hat}, m.data, friction=2.0, integrator="lm", **ok)
    with pytest.raises(InvalidInputError, match="integrator must be"):
        numeric.estimate_llc(m.loss_fn, {"w": w_hat}, m.data, integrator="verlet", **ok)
    with pytest.raises(InvalidInputError, match="num_draws must be an int ≥ 4"):
        numeric.estimate_llc(m.loss_fn, {"w": w_hat}, m.data, **{**ok, "num_draws": 3})
    with pytest.raises(InvalidInputError, match="different lengths"):
        numeric.estimate_llc(m.loss_fn, {"w": w_hat}, {"x": m.X, "y": m.y[:50]}, **ok)
    for bad in (-1, 2.5):
        with pytest.raises(InvalidInputError, match="anchor_every"):
            numeric.estimate_llc(m.loss_fn, {"w": w_hat}, m.data, anchor_every=bad, **ok)
    with pytest.raises(InvalidInputError, match="anchor_every applies"):
        numeric.estimate_llc(
            m.loss_fn, {"w": w_hat}, m.data, anchor_every=8, gradient="minibatch", **ok
        )
    with pytest.raises(InvalidInputError, match="w_star"):
        numeric.estimate_llc_potential(lambda w: w[..., 0] ** 2, [[0.0]], 100)
    with pytest.raises(InvalidInputError, match="shape"):
        numeric.estimate_llc_potential(lambda w: w, [0.0, 0.0], 100)
    with pytest.raises(InvalidInputError, match="nbeta"):
        numeric.estimate_llc_potential(lambda w: w[..., 0] ** 2, [0.0], 100, nbeta=-2.0)
    with pytest.raises(InvalidInputError, match="metric=True needs"):
        numeric.estimate_llc_potential(
            lambda w: w[..., 0] ** 2, [0.0], 100, metric=True, metropolis=False
        )
    with pytest.raises(InvalidInputError, match="metric=True needs"):
        numeric.estimate_llc_potential(lambda w: w[..., 0] ** 2, [0.0], 100, metric=True, gamma=0.0)


def test_dict_data_gives_the_same_estimate_as_the_tuple() -> None:
    m, w_hat = _linear(n=300, d=3)

    def dict_loss(p: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> torch.Tensor:
        return m.loss_fn(p, (b["x"], b["y"]))

    kw = dict(num_chains=3, num_draws=40, num_burnin=10, step_size=1e-3, seed=5)
    a = numeric.estimate_llc(m.loss_fn, {"w": w_hat}, m.data, **kw)
    b = numeric.estimate_llc(dict_loss, {"w": w_hat}, {"x": m.X, "y": m.y}, **kw)
    assert b.config.n == 300
    assert np.array_equal(a.loss_trace, b.loss_trace) and a.mean == b.mean


def test_divergence_names_chain_step_and_cause() -> None:
    m, w_hat = _linear(n=1000, d=3)
    with pytest.raises(DivergenceError, match="step size") as info:
        numeric.estimate_llc(
            m.loss_fn,
            {"w": w_hat},
            m.data,
            num_chains=2,
            num_draws=200,
            num_burnin=0,
            step_size=0.5,
            seed=0,
        )
    assert info.value.chain in (0, 1) and info.value.step >= 0


def test_keep_going_reports_dropped_chains() -> None:
    # Unstable everywhere: every chain diverges, which still raises.
    with pytest.raises(DivergenceError):
        numeric.estimate_llc_potential(
            lambda w: w[..., 0] ** 2,
            [0.0],
            1000,
            num_chains=3,
            num_draws=100,
            num_burnin=0,
            step_size=0.05,
            metropolis=False,
            on_divergence="continue",
        )

    # A loss that is NaN beyond |w| > 0.2 (3.4 posterior sd): some chains step out, the rest stay.
    def K(w: torch.Tensor) -> torch.Tensor:
        return torch.where(w[..., 0].abs() > 0.2, math.nan, w[..., 0] ** 2)

    est = numeric.estimate_llc_potential(
        K,
        [0.0],
        1000,
        num_chains=64,
        num_draws=400,
        num_burnin=0,
        step_size=1e-3,
        metropolis=False,
        on_divergence="continue",
        seed=3,
    )
    (f,) = [f for f in est.diagnostics if f.code == "divergence"]
    assert 0 < f.values["num_diverged"] < 64
    assert len(est.per_chain) == 64 - f.values["num_diverged"]


def test_w_star_not_a_minimum_is_reported() -> None:
    m, w_hat = _linear(n=2000, d=3)
    est = numeric.estimate_llc(
        m.loss_fn, {"w": w_hat + 0.3}, m.data, num_chains=4, seed=0, num_draws=300, num_burnin=100
    )
    assert "below_reference_loss" in [f.code for f in est.diagnostics]
    assert est.mean < 0


def test_minibatch_noise_is_predicted() -> None:
    m, w_hat = _linear(n=N, d=4)
    est = numeric.estimate_llc(
        m.loss_fn,
        {"w": w_hat},
        m.data,
        num_chains=4,
        seed=0,
        gradient="minibatch",
        batch_size=16,
        num_draws=200,
        num_burnin=200,
    )
    assert "minibatch_noise" in [f.code for f in est.diagnostics]


def _product_regression(n: int, seed: int):
    """y = x·w1·w2 + noise, true w1·w2 = 0, w* = 0 (a saddle of L_n), and the same L_n as a
    potential through its sufficient statistics (for quadrature)."""
    from verification.models import product_regression

    prob = product_regression(n, torch.Generator().manual_seed(seed))
    return prob.loss_fn, prob.params, prob.data, prob.potential


@pytest.mark.parametrize("integrator", ["lm", "auto"])
def test_short_run_at_a_saddle_is_an_error(integrator: str) -> None:
    """At a saddle w* the spread along the directions held by γ relaxes in 2/(ε·γ) steps under
    LM and ≈ 1/√(ε·γ) under BAOAB (the default there); a run shorter than half that is reported
    (slow_mixing, a warning naming the positions, with their ESS and R-hat), and λ̂'s own trace
    makes it an error."""
    loss_fn, w_star, data, _ = _product_regression(2000, 0)
    est = numeric.estimate_llc(
        loss_fn,
        w_star,
        data,
        num_chains=4,
        num_burnin=20,
        num_draws=50,
        step_size=1e-5,
        integrator=integrator,
        batch_size=256,
    )
    assert est.config.integrator == ("lm" if integrator == "lm" else "baoab")
    t_half = relaxation_steps(1e-5, 1.0, est.config.friction) / 2  # 10⁵ (LM), 158 (BAOAB)
    assert 20 + 50 < t_half
    # the short run says so (a warning, naming the positions), and λ̂'s own trace says that
    # the number cannot be used: its ESS, or its move between the halves of the draws
    (slow,) = [f for f in est.diagnostics if f.code == "slow_mixing"]
    assert slow.severity == "warning" and "positions" in slow.message, est.diagnostics
    assert slow.values["relaxation_steps"] == pytest.approx(t_half)
    assert {f.code for f in est.diagnostics if f.severity == "error"} & {
        "low_ess",
        "still_relaxing",
    }, est.diagnostics
    assert math.isfinite(est.slow_ess) and math.isfinite(est.slow_rhat)
    assert est.config.anchor_every == 8  # ⌈2000/256⌉ rounded up to a multiple of 8


def test_baoab_friction_is_raised_until_the_minibatch_heating_is_small() -> None:
    """At the saddle with the control variate centred at w* only, the gradient noise grows as the
    chains spread; the default friction starts at critical damping of the γ-held directions
    (2√γ) and is raised until the heating the run reports is within ``HEAT_TOL``."""
    from numeric.warmup.friction import HEAT_TOL

    loss_fn, w_star, data, _ = _product_regression(2000, 0)
    kw = dict(num_chains=4, seed=1, num_draws=300, anchor_every=0, batch_size=256)
    est = numeric.estimate_llc(loss_fn, w_star, data, **kw)
    c = est.config
    assert c.integrator == "baoab" and c.friction > 2.0 + 1e-9
    # measured again at the final positions (a few steps on from the last burn-in measurement
    # that set ξ): within a few times the tolerance
    assert 1.0 < est.minibatch_inflation < 1.0 + 3 * HEAT_TOL
    given = numeric.estimate_llc(loss_fn, w_star, data, friction=2.0, **kw)
    assert given.config.friction == 2.0  # a given friction is kept, and heats more
    assert given.minibatch_inflation > 1.0 + 3 * HEAT_TOL


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_saddle_of_a_data_model_agrees_with_quadrature(seed: int) -> None:
    """SGLD on data at a saddle (y = x·w1·w2 at the origin, noisy data) with the defaults against
    the exact target for this data, quadrature of the same L_n (25–50 s each). The anchored
    control variate is tested directly in test_numeric_kernel; its effect on this model is in
    benchmarks/RESULTS.md."""
    loss_fn, w_star, data, potential = _product_regression(2000, seed)
    est = numeric.estimate_llc(loss_fn, w_star, data, num_chains=8, seed=seed)
    ref = expected_llc(potential, [0.0, 0.0], nbeta=est.nbeta, gamma=est.config.gamma)
    assert not [f for f in est.diagnostics if f.severity == "error"], est.diagnostics
    _assert_close(est, ref.value, ref.abserr)


def test_automatic_draws_are_extended_while_the_loss_ess_is_short(monkeypatch) -> None:
    """Beyond 2,048 parameters there is no Hessian rule for the run length; the draws come from
    the loss trace's τ on the last 200 burn-in steps, which cannot see a longer τ. Forced here to
    the fewest draws (200), the sequential rule must add draws until the loss ESS reaches
    ``MIN_LOSS_ESS`` and the standard error rtol·|λ̂| (or the cap), and land on the closed form
    λ_β = ½ Σ_j nβ·s_j/(nβ·s_j + γ)."""
    from numeric.draws import sample
    from numeric.types import MAX_DRAWS, MIN_LOSS_ESS

    monkeypatch.setattr(sample, "draws_from_tail", lambda tail, c: sample.MIN_DRAWS)
    d = 2100  # > MAX_DENSE_DIM: no Hessian, so no slow-direction rule
    s = torch.logspace(-2, 0, d)
    centre = torch.randn(d, generator=torch.Generator().manual_seed(0))
    x = torch.ones(1000, 1)

    def loss_fn(p, b):
        return 0.5 * (s * (p["w"] - centre).square()).sum() * b[0].square().mean()

    est = numeric.estimate_llc(
        loss_fn, {"w": centre.clone()}, (x,), num_chains=4, seed=0, batch_size=8
    )
    ref = 0.5 * float((est.nbeta * s / (est.nbeta * s + 1.0)).sum())
    assert est.config.num_draws > sample.MIN_DRAWS
    capped = est.config.num_draws == MAX_DRAWS
    assert capped or (est.ess >= MIN_LOSS_ESS and est.stderr <= 0.05 * est.mean), est
    assert not [f for f in est.diagnostics if f.code == "low_ess"], est.diagnostics
    assert abs(est.mean - ref) < 4 * est.stderr, (est.mean, ref, est.stderr)


def _regular_on_cuda(n: int, d: int, seed: int, chains: int) -> tuple[numeric.LLCEstimate, float]:
    """A linear regression's estimate with CPU data and ``device="cuda"``, and its λ_β."""
    m, w_hat = _linear(n, d, seed)
    est = numeric.estimate_llc(
        m.loss_fn, {"w": w_hat}, m.data, num_chains=chains, seed=0, device="cuda"
    )
    return est, expected_llc(m, w_hat, nbeta=est.nbeta, gamma=1.0).value


@pytest.mark.gpu
def test_gpu_matches_cpu_statistically() -> None:
    """CPU data and parameters with ``device="cuda"``: moved, and the estimate lands on d/2."""
    est, ref = _regular_on_cuda(5000, 4, 0, chains=64)
    assert est.config.device.startswith("cuda")
    assert est.ess >= 100
    assert abs(est.mean - 2.0) < 4 * est.stderr + 0.05 and abs(est.mean - ref) < 4 * est.stderr


@pytest.mark.gpu
def test_many_chains_on_cuda_agree_with_the_exact_target() -> None:
    """1,024 chains of a regular model in one call: the pooled estimate against λ_β."""
    est, ref = _regular_on_cuda(10_000, 10, 2, chains=1024)
    assert est.per_chain.shape == (1024,)
    assert abs(est.mean - ref) < 4 * est.stderr
    assert est.stderr < 0.05  # 1,024 chains: a tight error bar, so the check above has teeth
