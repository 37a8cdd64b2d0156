"""Blow-ups of coordinate subspaces whose charts straighten into monomial ideals
(:mod:`rlct.blowup.coordinate`): hand values, Aoyagi's deep linear networks that stayed bounds
before, and forced blow-ups against an independent exact value."""

from __future__ import annotations

import pytest
import sympy as sp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import rlct
import verification
from rlct.algebra.scaling import scaling_weights
from rlct.blowup.coordinate import blow_up_coordinates, monomial_centres
from rlct.cascade import _solve_ideal
from rlct.newton.analysis import ideal_step
from verification.closed_forms import dln_ideal

R = sp.Rational
X = sp.symbols("x0:5")


def _polys(gens, variables):
    return [sp.Poly(sp.expand(g), *variables, domain=sp.QQ) for g in gens]


def _dln_ideal(widths: list[int]) -> tuple[list[sp.Expr], list[sp.Symbol]]:
    """The entries of P = W_L⋯W_1 at rank 0 (w* = 0)."""
    return dln_ideal(widths, 0)


def test_the_two_by_two_network_by_hand() -> None:
    """The module docstring's derivation: P = BA with A, B 2×2, centre A = 0, each chart
    t·⟨b₀', b₁', b₂·a'', b₃·a''⟩ under |t|³: λ = 3/2, m = 1 (Aoyagi's value, below)."""
    gens, names = _dln_ideal([2, 2, 2])
    polys = _polys(gens, names)
    assert (0, 1, 2, 3) in monomial_centres(polys)
    blown = blow_up_coordinates(polys, [0] * 8, (0, 1, 2, 3))
    assert blown is not None and len(blown.charts) == 4
    for chart in blown.charts:
        assert (chart.lam, chart.mult) == (R(3, 2), 1)
        assert chart.h[chart.j] == 3 and len(chart.changes) == 3
        assert len(chart.monomials) == 4 and all(sum(m) in (2, 3) for m in chart.monomials)
    assert (blown.result().lam, blown.result().mult) == (R(3, 2), 1)


@pytest.mark.parametrize(
    "widths",
    [
        [2, 2, 2],
        [2, 1, 2, 2],
        [2, 2, 1, 2],
        [1, 2, 3],
        [1, 3, 2],
        [1, 2, 2, 2],
        [2, 2, 2, 1],
        [1, 2, 2, 2, 1],  # a chart needs a₀' = a₀ + w·a₁ (rlct.blowup.straighten, "through")
    ],
)
def test_deep_linear_networks_that_stayed_bounds_agree_with_aoyagi(widths) -> None:
    gens, names = _dln_ideal(widths)
    got = rlct.from_ideal(gens, names)
    formula = rlct.deep_linear_network(widths, 0)
    assert got.exact, str(got)
    assert (got.lam, got.mult) == (formula.lam, formula.mult)


@pytest.mark.slow
def test_every_network_of_up_to_ten_parameters_agrees_with_aoyagi() -> None:
    """verification.check_dln_ideals at 2–10 parameters, every shape and true rank: all 779
    exact and equal to Aoyagi's λ and m (two were bounds before free variables were scaled).
    The report checks 2–8."""
    summary = verification.check_dln_ideals(10)
    assert summary.checked > 700 and summary.disagreements == 0 and summary.undecided == 0


def test_the_networks_of_seven_and_eight_parameters_are_all_exact() -> None:
    """[2, 2, 2], [2, 1, 2, 2] and [2, 2, 1, 2] at rank 0 were bounds before
    rlct.blowup.coordinate; every network of 7–8 parameters at every rank is exact now."""
    summary = verification.check_dln_ideals(8)
    assert summary.checked > 250 and summary.disagreements == 0 and summary.undecided == 0


def test_a_chart_on_fewer_variables_is_solved_as_an_ideal() -> None:
    """[1, 2, 2, 2] at rank 0: in chart w₀₀ of the centre W₁ = 0 the change c_k = (W₂)_k0 +
    (W₂)_k1·w sits inside the generators, and the chart is t·⟨W₃·c⟩, on 7 of the 10 variables,
    each zero over 0: solved as an ideal (t, and a 2-2-1 network: λ = 1, m = 3, Aoyagi's)."""
    gens, names = _dln_ideal([1, 2, 2, 2])
    polys = _polys(gens, names)
    centre = (0, 1)  # W₁'s two entries
    assert centre in monomial_centres(polys)
    assert blow_up_coordinates(polys, [0] * 10, centre) is None  # not monomial alone
    blown = blow_up_coordinates(polys, [0] * 10, centre, _solve_ideal)
    assert blown is not None and all(c.solved is not None for c in blown.charts)
    assert all(len(c.changes) == 2 for c in blown.charts)
    assert (blown.result().lam, blown.result().mult) == (1, 3)


@pytest.mark.parametrize(("widths", "lam", "mult"), [([2, 3, 2], 2, 2), ([2, 2, 2, 2], R(3, 2), 3)])
def test_charts_that_keep_free_variables_scale_them_to_the_origin(widths, lam, mult) -> None:
    """[2, 3, 2] and [2, 2, 2, 2] at rank 0 (twelve parameters, bounds before): in chart w₀₀
    of the centre W₁ = 0 the ideal keeps the free a'' = a₁₁' − a₀₁'a₁₀' (and a₂₁'' for 2-3-2),
    each generator homogeneous in it, so the least value over 0 is at the chart's origin. The
    values are Aoyagi's (λ, m given here from his formula, an independent source)."""
    gens, names = _dln_ideal(widths)
    polys = _polys(gens, names)
    centre = (0, 1, 2, 3) if widths[1] == 2 else (0, 1, 2, 3, 4, 5)
    blown = blow_up_coordinates(polys, [0] * len(names), centre, _solve_ideal)
    assert blown is not None
    assert all(c.solved is not None and c.scaled for c in blown.charts)
    assert all(w >= 1 for c in blown.charts for _, w in c.scaled)
    assert (blown.result().lam, blown.result().mult) == (lam, mult)
    assert "homogeneous for the weights" in " ".join(c.statement for c in blown.result().conditions)
    got = rlct.from_ideal(gens, names)
    formula = rlct.deep_linear_network(widths, 0)
    assert got.exact and (got.lam, got.mult) == (formula.lam, formula.mult) == (lam, mult)


def test_scaling_weights_exist_only_for_homogeneous_generators() -> None:
    x, y, z = X[:3]
    homogeneous = _polys([x * y - z**2, y**3], (x, y, z))
    w = scaling_weights(homogeneous, [0])
    assert w is not None and w[0] >= 1 and w[0] + w[1] == 2 * w[2]
    # y·(x³ − x): 3w_x + w_y = w_x + w_y forces w_x = 0, so x cannot be scaled to 0
    assert scaling_weights(_polys([y * (x**3 - x), z], (x, y, z)), [0]) is None
    assert scaling_weights(_polys([y * (x**3 - x), z], (x, y, z)), [2]) is not None


def test_scaling_weights_hold_every_equation_whatever_its_sign() -> None:
    """x³y²z ~ xyz ~ xy: w_z = 0 is forced (xyz against xy), so z cannot be scaled to 0. Written
    as Eq(e, 0) with a leading minus sign, sympy 1.14's lpmin kept one side of an equation and
    returned w = (−1/2, 0, 1), and a blow-up read a fibre's one point as all of it."""
    x, y, z = X[:3]
    polys = _polys([x**3 * y**2 * z + x * y * z + x * y], (x, y, z))
    assert scaling_weights(polys, [2]) is None
    w = scaling_weights(polys, [0])
    assert w is not None and w[0] >= 1 and 3 * w[0] + 2 * w[1] + w[2] == w[0] + w[1] + w[2]
    assert w[2] == 0 and w[0] + w[1] + w[2] == w[0] + w[1]


def test_centres_are_the_minimal_coordinate_subspaces_in_the_zeros() -> None:
    x, y, z, w = X[:4]
    polys = _polys([x * y, x * z, w * y * z], (x, y, z, w))
    # every term must hold a variable of the centre: {x} alone misses w·y·z, {x, w}... is
    # minimal, and {y, z} is; {x, y, z} is not minimal (it holds {y, z})
    centres = monomial_centres(polys)
    assert (1, 2) in centres and (0, 3) in centres and (0, 1) in centres and (0, 2) in centres
    assert (0, 1, 2) not in centres and all(len(c) >= 2 for c in centres)
    assert centres == sorted(centres, key=len)


def test_a_chart_that_does_not_straighten_declines() -> None:
    """Watanabe's two tanh units ⟨ab + cd, ab³ + cd³⟩: in chart b of the centre b = d = 0 the
    second generator stays b²·c·w(w² − 1) after a' = a + cw, not a monomial: declined (its
    value, 2/3, comes from rlct.blowup.subspace)."""
    a, b, c, d = X[:4]
    polys = _polys([a * b + c * d, a * b**3 + c * d**3], (a, b, c, d))
    assert blow_up_coordinates(polys, [0] * 4, (1, 3)) is None


def test_a_prior_on_the_variable_to_change_blocks_the_change() -> None:
    """⟨xy + xz², zy + z³⟩ = (y + z²)·⟨x, z⟩ over the centre x = z = 0: in either chart the
    strict transform is ⟨y + z², ...⟩ and y' = y + z² leaves ⟨y'⟩, so λ = 1/2 (y'·⟨x, z⟩: 1/2
    from y', 1 from the pair), m = 1. With the prior |y| that change would move the prior off
    a coordinate, and nothing else straightens the chart: declined."""
    x, y, z = X[:3]
    polys = _polys([x * y + x * z**2, z * y + z**3], (x, y, z))
    blown = blow_up_coordinates(polys, [0, 0, 0], (0, 2))
    assert blown is not None and (blown.result().lam, blown.result().mult) == (R(1, 2), 1)
    assert blow_up_coordinates(polys, [0, 1, 0], (0, 2)) is None


@st.composite
def changed_monomial_ideals(draw):
    """A monomial ideal under a prior, then up to three triangular changes x_k ↦ x_k + c·m (m a
    monomial of the other variables, h_k = 0) and a recombination: an ideal whose λ and m are
    the monomial ideal's (an RLCT is invariant under an analytic change fixing 0 that keeps the
    prior), which Newton reads exactly."""
    n = draw(st.integers(3, 5))
    xs = X[:n]

    def monomial(low, high, among):
        exps = draw(st.lists(st.integers(0, 2), min_size=len(among), max_size=len(among)))
        assume(low <= sum(exps) <= high)
        return sp.Mul(*(v**e for v, e in zip(among, exps)))

    base = [monomial(1, 4, xs) for _ in range(draw(st.integers(1, 4)))]
    h = draw(st.lists(st.sampled_from([0, 0, 1, 2]), min_size=n, max_size=n))
    free = [k for k in range(n) if h[k] == 0]
    assume(free)
    gens = base
    for _ in range(draw(st.integers(1, 3))):
        k = draw(st.sampled_from(free))
        others = [v for i, v in enumerate(xs) if i != k]
        shift = draw(st.sampled_from([-1, 1, 2])) * monomial(1, 2, others)
        gens = [sp.expand(g.xreplace({xs[k]: xs[k] + shift})) for g in gens]
    if len(gens) > 1 and draw(st.booleans()):
        gens[0] = sp.expand(gens[0] + draw(st.sampled_from([-1, 1])) * gens[1])
    return base, gens, tuple(sp.Integer(e) for e in h), xs


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(changed_monomial_ideals())
def test_forced_blowups_agree_with_the_monomial_ideal(case) -> None:
    base, gens, h, xs = case
    truth = ideal_step(_polys(base, xs), h).result
    polys = _polys(gens, xs)
    found = 0
    for centre in monomial_centres(polys):
        blown = blow_up_coordinates(polys, h, centre, _solve_ideal)
        if blown is not None:
            found += 1
            assert (blown.result().lam, blown.result().mult) == (truth.lam, truth.mult)
    got = rlct.from_ideal(gens, xs, h)
    if got.exact:
        assert (got.lam, got.mult) == (truth.lam, truth.mult)
    else:
        assert got.lower <= truth.lam <= got.upper


def test_a_generator_that_holds_two_variables_through_one_combination_loses_one() -> None:
    """f = u₀·(a₀ + w·a₁) + u₁·(b₀ + w·b₁) (a row times a layer's two columns combined by a chart
    of the next layer) is linear in a₀ and a₁ with ∂f/∂a₁ = w·∂f/∂a₀, so a₀' = a₀ + w·a₁ (and
    b₀' = b₀ + w·b₁) leave u₀·a₀' + u₁·b₀', free of a₁, b₁ and w."""
    from rlct.blowup.straighten import straighten

    u0, u1, a0, a1, b0, b1, w = sp.symbols("u0 u1 a0 a1 b0 b1 w")
    gens = (u0, u1, a0, a1, b0, b1, w)
    f = sp.Poly(u0 * (a0 + w * a1) + u1 * (b0 + w * b1), *gens, domain=sp.QQ)
    zero = [sp.Integer(0)] * 7
    strict, changes, over_zero = straighten([f], zero, (0,) * 7, [True] * 6 + [False])
    assert [p.as_expr() for p in strict] == [u0 * a0 + u1 * b0]
    assert dict(changes) == {a0: a0 + a1 * w, b0: b0 + b1 * w}
    assert over_zero == [True] * 6 + [False]  # a₀' = a₀ + w·a₁ vanishes where a₀, a₁ do
