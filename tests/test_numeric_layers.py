"""The layered API: typed option groups (layer 2) that equal the keywords, the public stages
that equal ``estimate_llc`` where no re-run policy fires, and the pure kernels (layer 3)."""

from __future__ import annotations

import inspect
import math
from dataclasses import fields

import pytest
import torch

import numeric
from numeric import Budget, Checks, InvalidInputError, Runtime, Sampler, Target, stages
from numeric.option_groups import GROUPS
from numeric.potential.reference import GaussianLinear, expected_llc


def _linear(n: int = 2000, d: int = 3):
    g = torch.Generator().manual_seed(0)
    X = torch.randn(n, d, generator=g, dtype=torch.float64)
    m = GaussianLinear(X, X @ torch.ones(d, dtype=torch.float64) + torch.randn(n, generator=g))
    return m, {"w": m.minimiser()}


def _same_estimate(a: numeric.LLCEstimate, b: numeric.LLCEstimate) -> None:
    assert a.mean == b.mean and a.stderr == b.stderr
    assert repr(a.config) == repr(b.config)  # nan fields compare unequal to themselves
    assert [(f.code, f.severity) for f in a.diagnostics] == [
        (f.code, f.severity) for f in b.diagnostics
    ]


def test_every_keyword_is_in_exactly_one_group_with_the_same_default() -> None:
    sig = inspect.signature(numeric.estimate_llc).parameters
    keywords = {
        name: p.default
        for name, p in sig.items()
        if p.kind is p.KEYWORD_ONLY and name not in GROUPS and name != "seed"
    }
    grouped = [(f.name, f.default) for cls in GROUPS.values() for f in fields(cls)]
    assert sorted(name for name, _ in grouped) == sorted(keywords)  # each once, none left out
    for name, default in grouped:
        assert default == keywords[name] or (default is None and keywords[name] is None), name


def test_groups_give_the_estimate_the_keywords_give() -> None:
    m, params = _linear()
    kw = dict(seed=3, progress=False)
    flat = numeric.estimate_llc(
        m.loss_fn, params, m.data, gamma=10.0, num_chains=3, batch_size=128, num_burnin=100,
        num_draws=200, step_check=False, **kw,
    )  # fmt: skip
    grouped = numeric.estimate_llc(
        m.loss_fn, params, m.data, target=Target(gamma=10.0),
        sampler=Sampler(num_chains=3, batch_size=128), budget=Budget(num_burnin=100, num_draws=200),
        checks=Checks(step_check=False), runtime=Runtime(dtype=torch.float64), **kw,
    )  # fmt: skip
    _same_estimate(flat, grouped)
    assert grouped.config.num_chains == 3 and grouped.config.gamma == 10.0


def test_a_group_is_reused_across_a_sweep_and_a_series() -> None:
    m, params = _linear(400)
    sampler, budget = Sampler(num_chains=2, batch_size=400), Budget(num_burnin=50, num_draws=100)
    sweep = numeric.temperature_sweep(
        numeric.estimate_llc, m.loss_fn, params, m.data, nbetas=[50.0, 100.0],
        sampler=sampler, budget=budget, progress=False,
    )  # fmt: skip
    assert [e.config.num_chains for e in sweep.estimates] == [2, 2]
    assert [e.config.num_draws for e in sweep.estimates] == [100, 100]
    series = numeric.estimate_llc_series(
        m.loss_fn,
        [params, {"w": params["w"].clone()}],
        m.data,
        sampler=sampler,
        budget=budget,
        nbeta=100.0,
    )
    plain = numeric.estimate_llc(
        m.loss_fn, params, m.data, num_chains=2, batch_size=400, num_burnin=50, num_draws=100,
        nbeta=100.0, seed=0, progress=False,
    )  # fmt: skip
    assert series.estimates[0].mean == plain.mean


def test_groups_are_validated_when_built() -> None:
    with pytest.raises(InvalidInputError, match="num_chains must be"):
        Sampler(num_chains=0)
    with pytest.raises(InvalidInputError, match="step_scale"):
        Sampler(step_size=1e-3, step_scale=0.5)
    with pytest.raises(InvalidInputError, match="friction applies to"):
        Sampler(integrator="lm", friction=3.0)
    with pytest.raises(InvalidInputError, match="gamma"):
        Target(gamma=-1.0)
    with pytest.raises(InvalidInputError, match="rtol"):
        Budget(rtol=0.0)
    with pytest.raises(InvalidInputError, match="on_divergence"):
        Checks(on_divergence="ignore")


def test_a_setting_given_twice_or_in_the_wrong_group_is_refused() -> None:
    m, params = _linear(200)
    with pytest.raises(InvalidInputError, match=r"num_chains is given twice: num_chains=8"):
        numeric.estimate_llc(m.loss_fn, params, m.data, num_chains=8, sampler=Sampler(num_chains=2))
    with pytest.raises(InvalidInputError, match=r"sampler must be a numeric\.Sampler, got Target"):
        numeric.estimate_llc(m.loss_fn, params, m.data, sampler=Target())
    with pytest.raises(InvalidInputError, match="estimate_llc_potential has no setting rtol"):
        numeric.estimate_llc_potential(
            lambda w: (w**2).sum(), torch.zeros(2), 1000, budget=Budget(rtol=0.05)
        )
    with pytest.raises(InvalidInputError, match=r"make_options has no setting num_chain\b"):
        stages.make_options(num_chain=3)
    # equal values in both places are one setting, not two
    opts = stages.make_options(num_chains=2, sampler=Sampler(num_chains=2))
    assert opts.num_chains == 2


def test_potential_takes_target_and_budget_groups() -> None:
    def K(w: torch.Tensor) -> torch.Tensor:
        return (w**2).sum(-1)

    kw = dict(num_chains=2, seed=0, progress=False)
    flat = numeric.estimate_llc_potential(
        K, torch.zeros(2), 1000, gamma=5.0, num_burnin=100, num_draws=300, **kw
    )
    grouped = numeric.estimate_llc_potential(
        K, torch.zeros(2), 1000, target=Target(gamma=5.0),
        budget=Budget(num_burnin=100, num_draws=300), **kw,
    )  # fmt: skip
    assert flat.mean == grouped.mean and flat.config.gamma == grouped.config.gamma == 5.0


def test_the_stages_in_order_are_the_estimate() -> None:
    """Set-up, plan, warm-up, draws, step-size check and summary, called one by one, give
    ``estimate_llc``'s estimate bit for bit where no re-run policy fires (minibatches of a given
    size: no full-batch switch; the step-size check asked for), and the estimate is on its
    closed-form target."""
    m, params = _linear()
    opts = stages.make_options(
        sampler=Sampler(batch_size=256), seed=1, progress=False, step_check=True
    )
    problem = stages.setup_problem(m.loss_fn, params, m.data, opts)
    plan = stages.make_plan(problem, opts)
    with stages.Run(problem, plan, opts) as run:
        warm = run.warm_up()
        warm, drawn = run.draw(warm)
        drawn = run.check_step(warm, drawn)
    staged = stages.summarise(problem, run.plan, opts, warm, drawn, run.alive)
    whole = numeric.estimate_llc(
        m.loss_fn, params, m.data, batch_size=256, seed=1, progress=False, step_check=True
    )
    _same_estimate(staged, whole)
    assert staged.step_check is not None  # asked for: the check ran as a stage
    ref = expected_llc(m, params["w"], nbeta=staged.nbeta, gamma=staged.config.gamma).value
    assert abs(staged.mean - ref) < 4 * staged.stderr


def test_the_pure_kernel_samples_a_gaussian_exactly() -> None:
    """Layer 3: ``numeric.sgld`` as a pure init/step pair over 256 chains on U = κ/2·w²: the LM
    step's stationary variance is 1/κ at ε·κ = 3 (Euler's would be 4× that)."""
    kappa, eps, chains = 4.0, 0.75, 256
    gen = torch.Generator().manual_seed(0)

    def gradient(w: torch.Tensor, g: torch.Generator) -> numeric.sgld.GradientEval:
        zero = w.new_zeros(w.shape[0])
        return numeric.sgld.GradientEval(0.5 * (w**2).sum(-1), zero, w)

    state = numeric.sgld.init(torch.zeros(chains, 1, dtype=torch.float64), gen)
    draws = []
    for t in range(2000):
        state, _ = numeric.sgld.step(
            state, gen, gradient, step_size=eps, nbeta=kappa, gamma=0.0,
            center=torch.zeros(1, dtype=torch.float64), integrator="lm",
        )  # fmt: skip
        if t >= 200:
            draws.append(state.position[:, 0])
    var = torch.stack(draws).var().item()
    assert math.isclose(var, 1 / kappa, rel_tol=0.05), var
