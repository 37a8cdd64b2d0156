"""Degenerate Newton polyhedra: exact λ, m by the plane resolution (two variables) and by changes of
coordinates or blocks (three or more); bounds, never a wrong exact claim, where neither applies.

Every expected value below is derived by hand in its comment, in coordinates where K is a
normal crossing or Newton non-degenerate (λ, m are invariant under a diffeomorphism fixing 0 that
keeps the prior's form).
"""

import pytest
import sympy as sp

import rlct
from rlct import NotNonNegativeError
from rlct.newton.analysis import newton_analysis
from rlct.plane.resolve import resolve_plane

x, y, z = sp.symbols("x y z")
u, v = sp.symbols("u v", real=True)
R = sp.Rational


@pytest.mark.parametrize(
    ("K", "prior", "lam", "m"),
    [
        # s = y − x³: s² + x⁸, normal crossing sum: 1/2 + 1/8.
        ((y - x**3) ** 2 + x**8, None, R(5, 8), 1),
        # (x − √3y)²(x + √3y)²: u = x − √3y, v = x + √3y give u²v², λ = 1/2 with m = 2.
        ((x**2 - 3 * y**2) ** 2, None, R(1, 2), 2),
        # Cusp y² = x⁵ (adapted already, weights (2, 5)): λ = (2 + 5)/(2·2·5) = 7/20.
        ((y**2 - x**5) ** 2, None, R(7, 20), 1),
        # Cusp y² = x³: (2 + 3)/(2·2·3) = 5/12.
        ((y**2 - x**3) ** 2, None, R(5, 12), 1),
        # Smooth curves of zeros: u = x − y or u = y − x² gives u², λ = 1/2.
        ((x - y) ** 2, None, R(1, 2), 1),
        ((y - x**2) ** 2, None, R(1, 2), 1),
        # Two lines: (x − y)²(x + y)² = u²v².
        ((x**2 - y**2) ** 2, None, R(1, 2), 2),
        # s = y − x² − x³: s² + x¹⁰ → 1/2 + 1/10.
        ((y - x**2 - x**3) ** 2 + x**10, None, R(3, 5), 1),
        # Ordinary triple point f = (x² − 2y²)(y − x³) (three distinct tangents): lct(f) = 2/3,
        # so λ(f²) = 1/3.
        ((x**2 - 2 * y**2) ** 2 * (y - x**3) ** 2, None, R(1, 3), 1),
        # Prior |x|²: s = y − x² gives s² with the x-direction free: λ = 1/2.
        ((y - x**2) ** 2, (2, 0), R(1, 2), 1),
        # Prior |x|: in (x, s = y − x³), K = s² + x⁸ with prior |x|: 1/2 + 2/8.
        ((y - x**3) ** 2 + x**8, (1, 0), R(3, 4), 1),
    ],
)
def test_plane_examples(K, prior, lam, m):
    r = rlct.from_polynomial(sp.expand(K), (x, y), prior)
    assert r.exact, str(r)
    assert (r.lam, r.mult) == (lam, m)
    assert not newton_analysis(sp.expand(K), (x, y), prior).result.exact  # really degenerate


def test_prior_on_the_changed_coordinate():
    # (y − x²)² with prior |y|^(−1/2): the prior is not a product in (x, y − x²), so no change of
    # coordinates applies, but the charts carry it: on E_(1,2), ⟨w, τ⟩/N = (1 + 2·½)/4 = 1/2, and
    # the smooth branch y = x² crossing it gives 1/2 as well: λ = 1/2 with m = 2.
    r = rlct.from_polynomial(sp.expand((y - x**2) ** 2), (x, y), (0, R(-1, 2)))
    assert r.exact and (r.lam, r.mult) == (R(1, 2), 2)


def test_ideal_in_two_variables():
    # ⟨y − x², x³⟩: K = (y − x²)² + x⁶ = s² + x⁶, λ = 1/2 + 1/6.
    r = rlct.from_ideal([y - x**2, x**3], (x, y))
    assert r.exact and (r.lam, r.mult) == (R(2, 3), 1)


def test_nested_algebraic_roots():
    # Four branches y = ±√2·x ± √3·x²: two tangent pairs. Near y = √2x, with s = y − √2x,
    # f ≈ 8x²(s² − 3x⁴), K = f² ≈ x⁴(s² − 3x⁴)²: the edge of normal (1, 2) and the x-axis both give
    # 1/4, so λ = 1/4 with m = 2. The second chart needs √3 over Q(√2).
    f = sp.expand(
        sp.Mul(*[y - a * sp.sqrt(2) * x - b * sp.sqrt(3) * x**2 for a in (1, -1) for b in (1, -1)])
    )
    r = rlct.from_polynomial(sp.expand(f**2), (x, y))
    assert r.exact and (r.lam, r.mult) == (R(1, 4), 2)


@pytest.mark.parametrize(
    "K",
    [
        (y - x**2) ** 2 - x**6,  # −x⁶ on the parabola
        (y - x**2) * (y - 2 * x**2),  # negative between the two parabolas
        (y - x**2) ** 3,  # odd power of a branch
        (y**2 - 2 * x**2) ** 2 - 3 * x**6,  # negative along y = √2·x, seen in the second chart
    ],
)
def test_sign_changes_hidden_from_the_newton_polygon_are_found(K):
    with pytest.raises(NotNonNegativeError, match="not ≥ 0"):
        rlct.from_polynomial(sp.expand(K), (x, y))


@pytest.mark.parametrize(("prior", "lam", "m"), [((0, 1), R(5, 8), 1), ((0, 0), R(1, 2), 2)])
def test_roots_over_a_field_whose_generator_is_itself_a_root(prior, lam, m):
    # ⟨x³y, y² − 2x²⟩ (found by a fuzz: the charts at y = ±√2·x once crashed reading their face
    # polynomials over Q(√2)). In the chart x = u, y = u(v ± √2) the generators are u⁴·unit and
    # u²·v·unit, so K ≍ u⁴(u⁴ + v²) with |Jφ| = |u| and the prior |y| = |u|·unit. Prior |y|:
    # weights (3, 1) meet the edge (8, 0)–(4, 2) at t = 8/5, λ = 5/8 (the chart x = u, y = v
    # gives 3/4). No prior: weights (2, 1) meet the vertex (4, 2) at t = 2, λ = 1/2 with m = 2.
    r = rlct.from_ideal([x**3 * y, y**2 - 2 * x**2], (x, y), prior)
    assert r.exact and (r.lam, r.mult) == (lam, m)


def test_certificate_charts_recompute_their_local_values():
    # Every chart's K∘φ (up to a unit) with its prior is itself a problem from_polynomial solves,
    # with the chart's local λ and m: a reader can re-run any step.
    K = sp.Poly(sp.expand((y - x**3) ** 2 + x**8), x, y)
    res = resolve_plane(K, (R(0), R(0)))
    child = res.root.children[0]
    assert child.local == u**6 * (u**2 + v**2)
    assert child.tau == (4, 1)
    again = rlct.from_polynomial(child.local, (u, v), (3, 0))
    assert again.exact and (again.lam, again.mult) == (child.lam, child.mult) == (R(5, 8), 1)
    r = rlct.from_polynomial(K.as_expr(), (x, y))
    assert all(c.status is True for c in r.conditions)
    assert any("y = u**3*v + u**3" in c.statement for c in r.conditions)


@pytest.mark.parametrize(
    ("K", "prior", "lam", "m"),
    [
        # Blocks: (x − y)² + z⁴ → 1/2 + 1/4; (x² − 3y²)² + z⁴ → 1/2 + 1/4 with m = 2 + 1 − 1.
        ((x - y) ** 2 + z**4, None, R(3, 4), 1),
        ((x**2 - 3 * y**2) ** 2 + z**4, None, R(3, 4), 2),
        # Product: (x − y)²·z²: min(1/2, 1/2), m = 1 + 1.
        ((x - y) ** 2 * z**2, None, R(1, 2), 2),
        # x' = x + y + z²: K = x'² + y⁴ + z⁶ → 1/2 + 1/4 + 1/6.
        ((x + y + z**2) ** 2 + y**4 + z**6, None, R(11, 12), 1),
        # The same with prior |x|: x cannot be changed; y' = x + y + z² gives
        # y'² + (y' − x − z²)⁴ + z⁶ with prior |x|: 1/2 + λ((x + z²)⁴ + z⁶; |x|) = 1/2 + 2/3.
        ((x + y + z**2) ** 2 + y**4 + z**6, (1, 0, 0), R(7, 6), 1),
    ],
)
def test_three_variables_exact_after_a_change_or_a_split(K, prior, lam, m):
    r = rlct.from_polynomial(sp.expand(K), (x, y, z), prior)
    assert r.exact, str(r)
    assert (r.lam, r.mult) == (lam, m)


def test_change_of_coordinates_is_recorded_and_checkable():
    K = sp.expand((x + y + z**2) ** 2 + y**4 + z**6)
    r = rlct.from_polynomial(K, (x, y, z))
    changes = [c.statement for c in r.conditions if c.statement.startswith("φ:")]
    assert changes
    # The last change's K∘φ, read from its certificate (as text, by rlct's safe parser), is
    # non-degenerate as written.
    composed = changes[-1].split("K∘φ = ")[1].split(" (check")[0]
    again = newton_analysis(composed, (x, y, z)).result
    assert again.exact and (again.lam, again.mult) == (r.lam, r.mult)


def test_prior_blocks_the_only_change():
    # x − y² is straightened only by x ↦ x + y², which a prior |x| forbids; z ties the blocks so
    # that the plane resolution does not apply. The true λ: with s = x − y² and prior |s + y²|,
    # λ ≥ 1/ord = 1/4 and λ ≤ the Newton value; the result must say why it is not exact.
    K = sp.expand((x - y**2) ** 2 + (x - y**2) * z**2 + z**4)
    r = rlct.from_polynomial(K, (x, y, z), (1, 0, 0))
    assert not r.exact
    assert any("prior" in c.statement and c.status is None for c in r.conditions)


def test_three_variables_without_a_certified_change_keep_bounds():
    # K₀ = w0⁴ + 2·w2⁴ (λ = 1/4 + 1/4 = 1/2) under a triangular and a linear map: the search does
    # not find the inverse, so the result is a pair of bounds that must contain 1/2.
    w0, w1, w2 = sp.symbols("w0 w1 w2")
    phi = [
        {w0: w0 + 6 * w2**2},
        {w0: w0 - 3 * w2},
        {w0: 2 * w0 + 2 * w2, w1: -2 * w0 - 2 * w1 + 2 * w2, w2: 2 * w0 - w1 - w2},
    ]
    K = w0**4 + 2 * w2**4
    for step in phi:
        K = K.subs(step, simultaneous=True)
    r = rlct.from_polynomial(sp.expand(K), (w0, w1, w2))
    if r.exact:
        assert (r.lam, r.mult) == (R(1, 2), 1)
    else:
        assert r.lower <= R(1, 2) <= r.upper


def test_catalogue_degenerate_entries_are_exact():
    from verification.crosschecks import D, catalogue

    cases = [e.run.args[0] for e in catalogue(quick=False) if e.family == D]
    assert len(cases) == 4
    for case in cases:
        assert not newton_analysis(case.K, case.variables).result.exact
        assert case.exact().exact, case.name
