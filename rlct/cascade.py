"""λ and m of a polynomial K ≥ 0 or of an ideal, in whatever coordinates make them readable.

Order of attempts (each step proves what it claims; a result is exact only if one of them is):

0. Smooth hypersurfaces crossing normally (:mod:`rlct.shapes.smooth`): K = unit·Π f_i^(e_i) with
   factors whose gradients at 0 are independent, exact from one factorisation; an ideal whose
   generators' gradients are independent, r/2 for r generators. (After a degenerate Newton step, also
   the rest of :mod:`rlct.shapes`: a power of a non-degenerate quadratic form, ``quadric``, any product
   of linear forms, ``arrangement``, and a power of a hypersurface whose own Newton polyhedron is
   non-degenerate, ``hypersurface``.) An ideal, or K written as a sum of positive multiples of squares,
   with a generator u·v + r(w_{−v}) (u(0) ≠ 0) loses v first (:mod:`rlct.reductions.elimination`:
   λ = 1/2 + λ of the rest); one whose generators are products of independent linear forms is a
   monomial ideal after a linear change (:mod:`rlct.reductions.linear_change`).
1. The Newton polyhedron of K as written (:mod:`rlct.newton.analysis`): exact when K is non-degenerate.
   A positive semi-definite quadratic form that is not (or has too many faces) is exact by its rank
   (:mod:`rlct.algebra.psd`): λ = rank/2, m = 1, under a uniform prior on its variables.
2. Fewer variables (:mod:`rlct.reductions.constant_directions`): K constant along directions that
   move no prior coordinate is K at some coordinates = 0, solved by this same procedure. Then blocks
   on disjoint variables (:mod:`rlct.reductions.blocks`): K = K_1 + K_2 or K_1·K_2, each block solved
   so (an ideal's, or a sum of squares', generator blocks first, each as an ideal of its own).
3. Two variables: the plane resolution (:mod:`rlct.plane.resolve`), always exact for K ∈ Q[x, y]:
   toric charts along the Newton polygon, followed at real algebraic roots, priors carried through.
4. Three or more variables: coordinate changes x_k ↦ x_k − r(x_{−k}) read off the factors of the
   degenerate face polynomials (:mod:`rlct.reductions.changes`), admissible when h_k = 0, searched
   to a small depth; exact when K∘φ is solved exactly, else the best upper bound 1/t over the
   coordinates tried, with the conditions that failed.
5. An ideal, or K written as a sum of squares, that is still only bounded: one blow-up of the origin
   (:mod:`rlct.blowup.origin`) when the initial forms vanish at finitely many rational points of the
   projective space, each point solved by this same procedure (at most ``MAX_BLOWUPS`` deep); or on
   a curve or more, when in each chart all but finitely many (rational) of its points are of one
   kind, the strict transform ⟨v_1..v_s, u^j⟩ in coordinates there (:mod:`rlct.blowup.families`),
   and the finitely many are solved so. Then the same with a weighted blow-up where every generator
   is quasi-homogeneous (:mod:`rlct.blowup.weighted`). Then a blow-up of a coordinate subspace
   {x_i = x_j = 0} in the zeros (an ideal tries any codimension first, before K = Σ f_i², where
   charts straighten: :mod:`rlct.blowup.coordinate`; a line in three variables,
   :mod:`rlct.blowup.line`; codimension two in four to eight, :mod:`rlct.blowup.subspace`). An
   expanded K does not get this step: its zeros on the exceptional divisor are those of one form,
   decided here only with the sum of squares in hand.

An exact result records the substitution φ and the Newton data (or the charts) of K∘φ as its
conditions, so it can be checked by hand or by calling :func:`from_polynomial` on K∘φ.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import sympy as sp

from ._validate import prior_vector
from .algebra.factor import LocalFactors, local_factors, sum_of_squares
from .algebra.psd import quadratic_form_rlct
from .blowup.coordinate import first_coordinate_blowup
from .blowup.line import blow_up_line, combine_line
from .blowup.origin import blow_up_origin
from .blowup.subspace import blow_up_subspace
from .blowup.weighted import blow_up_weighted
from .errors import TooLargeError, UndecidedError
from .expressions import as_expression, as_variables
from .newton.analysis import (
    NewtonAnalysis,
    as_generators,
    as_polynomial,
    ideal_step,
    newton_step,
    order_bounds,
)
from .plane.resolve import resolve_plane
from .reductions.blocks import split_blocks
from .reductions.changes import candidate_substitutions
from .reductions.constant_directions import Reduction, drop_constant_directions
from .reductions.elimination import Elimination, eliminate_affine_generator, square_generators
from .reductions.ideal_blocks import ideal_blocks
from .reductions.linear_change import monomial_after_linear_change
from .result import RLCT, Condition
from .shapes.arrangement import arrangement_rlct
from .shapes.hypersurface import hypersurface_power_rlct
from .shapes.quadric import quadric_power_rlct
from .shapes.smooth import regular_ideal_rlct, smooth_crossing_rlct
from .time_limit import check as check_time

__all__ = ["from_ideal", "from_polynomial"]

MAX_BLOWUPS = 3  # nested blow-ups of the origin a solve may make (rlct.blowup.origin)
LINE_CHANGES = 1  # coordinate systems tried at a point of a line's blow-up (rlct.blowup.line)
MAX_SUBSPACE_VARIABLES = 8  # codimension-2 centres are tried up to this many variables
PLANE_METHOD = "plane resolution: toric charts along the Newton polygon at its real roots"


@dataclass
class _Budget:
    """How many coordinate systems a search may still try, and how deep it may go."""

    changes: int = 12
    depth: int = 3


def from_polynomial(
    K: object, variables: Sequence[sp.Symbol], prior_exponents: Sequence[object] | None = None
) -> RLCT:
    """λ and m of a polynomial K ≥ 0 with K(0) = 0 at the origin, under the prior Π |w_j|^(h_j).

    Exact whenever K is Newton non-degenerate, splits into blocks that are, has two variables
    (always), or becomes so after a triangular change of coordinates; otherwise proven bounds
    with the conditions that failed. See the module docstring for the order of attempts.

    K is a sympy expression, an exact number or a string (read by :mod:`rlct.parsing`, never
    evaluated), validated and size-bounded as :func:`rlct.newton_analysis` does.
    """
    variables = as_variables(variables)
    expr = as_expression(K, "K", variables)
    poly = as_polynomial(expr, variables, "K")
    h = prior_vector(prior_exponents, len(variables), "prior_exponents")
    local = local_factors(poly)
    if (crossing := smooth_crossing_rlct(poly, h, local)) is not None:
        return crossing  # (x + y + z)^60: one factorisation, not a degenerate Newton polyhedron
    try:
        analysis = newton_step(poly, h, stop_at_degenerate=True)
    except TooLargeError as too_large:
        if (form := quadratic_form_rlct(poly, h)) is not None:
            return form  # Σ x_i² in many variables: too many faces, one rank
        if (squares := square_generators(expr, variables)) is None:
            raise
        try:  # a sum of squares (its sign known): the ideal's steps, blocks on disjoint
            return _solve_ideal(squares, h)  # variables among them, need no verdict on K's faces
        except TooLargeError:
            raise too_large from None
    newton = analysis.result
    if newton.exact:
        return newton
    squares = square_generators(expr, variables)
    if squares is not None and (shortcut := _ideal_shortcut(squares, h, newton)) is not None:
        return shortcut
    split = None if squares is None else _ideal_blocks(squares, h, MAX_BLOWUPS)
    if split is not None and split.exact:
        return split
    result = _solve(poly, h, _Budget(), newton, analysis, local)
    if result.exact or squares is None:
        return result
    return _after_blowup(squares, h, result, MAX_BLOWUPS)


def from_ideal(
    generators: Sequence[object],
    variables: Sequence[sp.Symbol],
    prior_exponents: Sequence[object] | None = None,
) -> RLCT:
    """λ and m of K = Σ f_i² for polynomials f_i with f_i(0) = 0, under the prior Π |w_j|^(h_j).

    λ = RLCT(I)/2 = 1/(2 t_I) when the ideal is Newton non-degenerate; otherwise K = Σ f_i² goes
    through :func:`from_polynomial`'s other steps (two variables are always exact). The f_i are
    validated as :func:`rlct.ideal_analysis` does.
    """
    variables = as_variables(variables)
    polys = as_generators(generators, variables)
    h = prior_vector(prior_exponents, len(variables), "prior_exponents")
    return _solve_ideal(polys, h)


def _solve_ideal(
    polys: Sequence[sp.Poly],
    h: tuple[sp.Rational, ...],
    blowups: int = MAX_BLOWUPS,
    budget: _Budget | None = None,
) -> RLCT:
    """:func:`from_ideal` for validated generators: a regular ideal
    (:func:`rlct.shapes.smooth.regular_ideal_rlct`), Newton, then what the generators show
    (:func:`_ideal_shortcut`), blocks, a coordinate blow-up that straightens
    (:func:`rlct.blowup.coordinate.first_coordinate_blowup`), then K = Σ f_i² through
    :func:`_solve`, then (at most ``blowups`` deep) a blow-up of the origin
    (:func:`_after_blowup`)."""
    check_time()
    if (regular := regular_ideal_rlct(polys, h)) is not None:
        return regular
    too_large = None
    try:
        newton = ideal_step(polys, h, stop_at_degenerate=True).result
    except TooLargeError as err:  # too many faces: bounds that need none, then the steps
        newton, too_large = order_bounds(polys, h), err  # that need no Newton verdict
    if newton.exact:
        return newton
    shortcut = _ideal_shortcut(polys, h, newton)
    if shortcut is not None and (shortcut.exact or too_large is None):
        return shortcut
    if (split := _ideal_blocks(polys, h, blowups)) is not None and split.exact:
        return split
    if (coordinates := first_coordinate_blowup(polys, h, _solve_chart)) is not None:
        return coordinates
    if too_large is not None:
        raise too_large
    K = sum_of_squares(polys)
    result = _solve(K, h, budget or _Budget(), newton)
    result = result if result.exact else _after_blowup(polys, h, result, blowups)
    return result if split is None else result.intersect(split)


def _solve_chart(polys: Sequence[sp.Poly], h: tuple[sp.Rational, ...]) -> RLCT:
    """A coordinate blow-up's chart solved as an ideal without the costly steps (no coordinate
    search on K, no blow-up of the origin): a chart that needs them declines its centre."""
    return _solve_ideal(polys, h, 0, _Budget(0, 0))


def _ideal_blocks(
    polys: Sequence[sp.Poly], h: tuple[sp.Rational, ...], blowups: int
) -> RLCT | None:
    """:func:`rlct.reductions.ideal_blocks.ideal_blocks`, each group solved by :func:`_solve_ideal`."""
    return ideal_blocks(polys, h, lambda block, hb: _solve_ideal(block, hb, blowups))


def _after_blowup(
    polys: Sequence[sp.Poly], h: tuple[sp.Rational, ...], before: RLCT, blowups: int
) -> RLCT:
    """For an ideal with only the bounds ``before``: blow-ups of the origin, plain
    (:mod:`rlct.blowup.origin`, points solved a level deeper) and weighted
    (:mod:`rlct.blowup.weighted`, points solved with no blow-up), then of coordinate lines
    (:func:`_after_lines`); bounds intersected, ``before`` where every one declines."""
    if blowups <= 0 or len(h) < 3:
        return before
    for blow_up, deeper in ((blow_up_origin, blowups - 1), (blow_up_weighted, 0)):
        if (blown := blow_up(polys, h)) is not None:
            after = blown.solve_points(lambda q, hq, d=deeper: _solve_ideal(q, hq, d))
            if after.exact:
                return after
            before = before.intersect(after, "then")
    lines = _after_lines(polys, h)
    return before if lines is None else lines


def _after_lines(polys: Sequence[sp.Poly], h: tuple[sp.Rational, ...]) -> RLCT | None:
    """The first exact blow-up of a coordinate subspace {x_i = x_j = 0} in the ideal's zeros: a
    line in three variables (:mod:`rlct.blowup.line`; one chart orientation per line), in four
    to ``MAX_SUBSPACE_VARIABLES`` both orientations (:mod:`rlct.blowup.subspace`). Its points are
    solved without further blow-ups and with one coordinate change (nesting multiplies the
    work), and a centre with a point left as bounds is abandoned there; None when no centre
    gives an exact value."""
    n = len(h)
    if n == 3:
        centres = itertools.combinations(range(3), 2)
    elif 4 <= n <= MAX_SUBSPACE_VARIABLES:
        centres = itertools.permutations(range(n), 2)
    else:
        return None
    for i, j in centres:
        if any(m[i] + m[j] == 0 for p in polys for m in p.monoms()):
            continue  # the centre is not in the zeros
        blown = blow_up_line(polys, h, i, j) if n == 3 else blow_up_subspace(polys, h, i, j)
        if blown is None:
            continue
        results = []
        for p in blown.points:
            results.append(_solve_ideal(p.generators, p.h, 0, _Budget(LINE_CHANGES, 1)))
            if not results[-1].exact:
                break
        else:
            return combine_line(blown, results)
    return None


def _ideal_shortcut(
    polys: Sequence[sp.Poly], h: tuple[sp.Rational, ...], newton: RLCT
) -> RLCT | None:
    """What the generators show before they are squared and summed: one affine in a variable
    (:mod:`rlct.reductions.elimination`), or all products of independent linear forms
    (:mod:`rlct.reductions.linear_change`, a monomial ideal, always exact). None when neither
    applies (or that monomial ideal has too many faces to check)."""
    if (elimination := eliminate_affine_generator(polys, h)) is not None:
        return _after_elimination(elimination, newton)
    if (change := monomial_after_linear_change(polys, h)) is not None:
        try:
            mono = ideal_step(change.generators, change.h).result
        except TooLargeError:  # too many faces: the later steps may still answer
            return None
        method = f"linear change to a monomial ideal: {mono.method}"
        return RLCT.exact_value(mono.lam, mono.mult, method, (change.condition, *mono.conditions))
    return None


def _after_elimination(elimination: Elimination, newton: RLCT) -> RLCT:
    """λ = 1/2 + λ(rest), m = m(rest) (:mod:`rlct.reductions.elimination`); bounds combine with Newton's."""
    half, cond = sp.Rational(1, 2), elimination.condition
    v = elimination.variable
    if not elimination.rest:
        return RLCT.exact_value(half, 1, f"{v} eliminated: ⟨{v}'⟩ alone", (cond,))
    sub = _solve_ideal(elimination.rest, elimination.h)
    method = f"{v} eliminated, 1/2 + λ of the rest: {sub.method}"
    if sub.exact:
        return RLCT.exact_value(half + sub.lam, sub.mult, method, (cond, *sub.conditions))
    lower, upper = max(newton.lower, half + sub.lower), min(newton.upper, half + sub.upper)
    return RLCT.bounds(lower, upper, method, (*newton.conditions, cond, *sub.conditions))


def _solve(
    K: sp.Poly,
    h: tuple[sp.Rational, ...],
    budget: _Budget,
    newton: RLCT,
    analysis: NewtonAnalysis | None = None,
    local: LocalFactors | None = None,
) -> RLCT:
    """Steps 2–4 for K whose Newton result ``newton`` is not exact (a PSD quadratic form first: its
    rank is λ's, ``rlct.algebra.psd``; then what K's factors show: smooth factors crossing normally,
    for K = Σ f_i² from an ideal and for K∘φ after a change, a power of a quadratic form, a product
    of linear forms). ``analysis`` and ``local``: K's Newton analysis and factors, when the caller
    has them."""
    check_time()
    if (form := quadratic_form_rlct(K, h)) is not None:
        return form
    local = local or local_factors(K)
    steps = (smooth_crossing_rlct, quadric_power_rlct, arrangement_rlct, hypersurface_power_rlct)
    for step in steps:
        if (found := step(K, h, local)) is not None:
            return found
    if (reduction := drop_constant_directions(K, h)) is not None:
        return _after_reduction(reduction, newton, _solve_fresh(reduction.K, reduction.h, budget))
    split = split_blocks(K, h, lambda block, hb: _solve_fresh(block, hb, budget))
    if split is not None:
        return split
    present = [j for j, x in enumerate(K.gens) if K.degree(x) > 0]
    if len(present) == 2:
        plane = sp.Poly(K.as_expr(), *(K.gens[j] for j in present))
        try:
            res = resolve_plane(plane, tuple(h[j] for j in present))
        except UndecidedError as err:
            note = Condition(f"plane resolution undecided: {err}", None)
            return RLCT.bounds(
                newton.lower, newton.upper, newton.method, (*newton.conditions, note)
            )
        return RLCT.exact_value(res.lam, res.mult, PLANE_METHOD, res.conditions())
    analysis = analysis or newton_step(K, h, stop_at_degenerate=True, check_sign=False)
    return _search(K, h, budget, newton, analysis)


def _solve_fresh(K: sp.Poly, h: tuple[sp.Rational, ...], budget: _Budget) -> RLCT:
    """K from an inner step (a change of coordinates, a block, fewer variables) of a K whose sign
    was checked or is a sum of squares: its sign is not searched again."""
    analysis = newton_step(K, h, stop_at_degenerate=True, check_sign=False)
    newton = analysis.result
    return newton if newton.exact else _solve(K, h, budget, newton, analysis)


def _after_reduction(reduction: Reduction, newton: RLCT, sub: RLCT) -> RLCT:
    """λ of K from λ of K on fewer variables (:mod:`rlct.reductions.constant_directions`): equal, so
    an exact sub-result is exact for K, and bounds combine with K's own Newton bounds."""
    names = ", ".join(map(str, reduction.K.gens))
    method = f"on {names} (K constant along the other directions): {sub.method}"
    conditions = (reduction.condition, *sub.conditions)
    if sub.exact:
        return RLCT.exact_value(sub.lam, sub.mult, method, conditions)
    lower, upper = max(newton.lower, sub.lower), min(newton.upper, sub.upper)
    return RLCT.bounds(lower, upper, method, (*newton.conditions, *conditions))


def _search(
    K: sp.Poly, h: tuple[sp.Rational, ...], budget: _Budget, newton: RLCT, analysis: NewtonAnalysis
) -> RLCT:
    """Step 4: triangular changes from the degenerate faces of K's Newton ``analysis``,
    depth-first within the budget."""
    failing = [f for f, c in analysis.face_conditions if c.status is not True]
    subs, blocked = candidate_substitutions(K, failing, h)
    notes = [Condition(b, None) for b in blocked]
    upper, tried = newton.upper, []
    if budget.depth > 0:
        budget.depth -= 1
        for s in subs:
            if budget.changes <= 0:
                break
            budget.changes -= 1
            check_time()
            try:
                changed = s.apply(K)
                sub = _solve_fresh(changed, h, budget)
            except TooLargeError as err:  # K∘φ or its Newton polyhedron over the limits
                notes.append(Condition(f"{s} not tried: {err}", None))
                continue
            tried.append(str(s))
            if sub.exact:
                budget.depth += 1
                return _after_change(s, changed, sub)
            upper = min(upper, sub.upper)
        budget.depth += 1
    if not subs and not blocked:
        notes.append(Condition("no face polynomial has a factor linear in one variable", None))
    elif tried:
        notes.append(
            Condition(
                f"coordinate changes tried ({'; '.join(tried)}) proved λ ≤ {upper}, not λ", None
            )
        )
    return RLCT.bounds(min(newton.lower, upper), upper, newton.method, (*newton.conditions, *notes))


def _after_change(s: object, changed: sp.Poly, sub: RLCT) -> RLCT:
    head = Condition(
        f"φ: {s} is a polynomial automorphism fixing 0 with Jacobian 1 and keeps the prior's "
        f"form; K∘φ = {changed.as_expr()} (check: from_polynomial(K∘φ))",
        True,
    )
    return RLCT.exact_value(sub.lam, sub.mult, f"after {s}: {sub.method}", (head, *sub.conditions))
