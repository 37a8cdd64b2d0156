"""The learning coefficient λ of a quadratic network at a point (rank bounds, constant rank)."""

from __future__ import annotations

import sympy as sp

from .._validate import count, flag, seconds_value
from ..algebra.ranks import TARGET_FAILURE
from ..errors import InvalidSeedError, InvalidShapeError
from ..result import RLCT, Condition
from .fit import fit_condition, parse_targets
from .generic import generic_rank_certificate
from .ideal import ideal_llc
from .jacobians import fibre_dimension, num_parameters, rank_at
from .point import Point, has_float_entries, parse_point

__all__ = ["llc"]


def llc(
    W: object,
    V: object,
    X: object = None,
    centered: bool = False,
    *,
    b: object = None,
    Y: object = None,
    c: object = None,
    seed: int = 0,
    allow_probabilistic: bool = True,
    search_seconds: float = 10.0,
) -> RLCT:
    """The local learning coefficient λ at the true parameter θ* = (W, V) (and b), or at a trained
    point with its targets Y (n × p, with the output biases c where there are biases).

    The loss. Without data: K(θ) ≍ ‖Φ(θ) − Φ(θ*)‖² (squared loss, realizable at θ*, population
    inputs whose quadratic features have a positive-definite second-moment matrix, so that the
    Fisher information in the identifiable coordinates is positive definite). With data:
    K(θ) = (1/n) Σ_i ‖P(F(θ) − F(θ*))_i‖², squared loss with the uniform distribution on the n
    inputs. The prior is positive and continuous at θ*.

    What is proven, with r = rank J(θ*) (exact), N parameters and k = :func:`fibre_dimension`:

    * r/2 ≤ λ: r output coordinates with independent gradients are local coordinates y_1..y_r
      near θ*, and K ≥ c Σ y_i², so V(ε) ≤ C ε^{r/2}. (This needs no constant rank.)
    * λ ≤ (N − k)/2: the fibre contains a smooth k-dimensional submanifold M through θ* and
      K ≤ C dist(θ, M)², so V(ε) ≥ c ε^{(N−k)/2}.
    * If r = N − k the two bounds meet: λ = r/2 and V(ε) ≍ ε^{r/2}, so m = 1.
    * If r equals the generic rank r_gen of the class, the rank is maximal, hence (lower
      semicontinuity) constant near θ*; by the constant-rank theorem K ≍ |z|² in r local
      coordinates z, so λ = r/2 and m = 1.

    At a trained point (``Y`` given) whether θ* fits the targets exactly is decided in exact
    arithmetic (:mod:`rlct.quadratic.fit`) and recorded as a condition: where it fits, the
    loss minus its minimum is the K above and the answer stands; where it does not (a float
    point never fits exactly), the answer is that of the targets the network itself outputs,
    returned as bounds with the failed condition (not exact).

    Otherwise (the rank drops) the bounds r/2 ≤ λ ≤ (N − k)/2 are proven, and neither r/2 nor
    r_gen/2 is the answer in general (Φ = x² gives K = x⁴ and λ = 1/4, between 0/2 and 1/2). For
    networks of at most 12 parameters the exact layer then resolves the loss itself,
    K ≍ Σ_i g_i(θ − θ*)² with g_i the map's coordinates minus their values at θ*
    (:mod:`rlct.quadratic.ideal`, :func:`rlct.from_ideal`): its exact λ and m where it finds a
    resolution within ``search_seconds`` (0 skips it), else the bounds, sharpened by the
    ideal's where it has any, with a condition that says the search ran out of time. The limit
    is checked between the search's steps, and one step (a FLINT factorisation) is a single call
    that can run past it (over 300 random points with entries in {−1, 0, 1} the slowest call
    took 10.007 s at the default 10 s).

    Generic rank. r_gen is certified when the rank at a random point attains a proven upper bound;
    otherwise it is certified only with failure probability δ ≤ 10^−30 (Schwartz–Zippel). With
    ``allow_probabilistic=True`` (default) such a condition is recorded as holding, and its
    statement gives δ; with ``False`` it is recorded as undecided and the result is not exact.
    """
    pt = parse_point(W, V, X, centered, b)
    fit = None if Y is None else fit_condition(pt, *parse_targets(Y, c, pt))
    if Y is None and c is not None:
        raise InvalidShapeError("the output biases c are read with targets Y only: give Y")
    floats = _float_note(W, V, X, b)
    seed = count(seed, "seed", 0, InvalidSeedError)
    allow_probabilistic = flag(allow_probabilistic, "allow_probabilistic")
    search_seconds = seconds_value(search_seconds, "search_seconds")
    result = _at_point(pt, floats, seed, allow_probabilistic, search_seconds)
    return result if fit is None else _with_fit(result, fit)


def _with_fit(result: RLCT, fit: Condition) -> RLCT:
    """``result`` resting also on whether θ* fits the targets: unchanged (one more proven
    condition) where it does, bounds on the self-generated targets' λ where it does not."""
    conditions = (fit, *result.conditions)
    if fit.status is True and result.exact:
        return RLCT.exact_value(result.lam, result.mult, result.method, conditions)
    method = result.method
    if fit.status is not True:
        method += " — for the targets f_θ*(x_i) the network outputs, not the Y given"
    return RLCT.bounds(result.lower, result.upper, method, conditions)


def _at_point(
    pt: Point,
    floats: tuple[Condition, ...],
    seed: int,
    allow_probabilistic: bool,
    search_seconds: float,
) -> RLCT:
    """λ at the validated point (``llc``'s docstring) for the loss of its own outputs."""
    r = rank_at(pt)
    N = num_parameters(pt.d, pt.p, pt.K, pt.bias)
    k = fibre_dimension(pt)
    lower, upper = sp.Rational(r, 2), sp.Rational(N - k, 2)
    shape = f"d={pt.d}, p={pt.p}, K={pt.K}" + (", biases" if pt.bias else "")
    if pt.X is None:
        loss = Condition(
            "K(θ) ≍ ‖Φ(θ) − Φ(θ*)‖² near θ* (the data-free model, by definition: squared loss, "
            "realizable at θ*, positive-definite Fisher information in the identifiable "
            "coordinates)",
            True,
        )
    else:
        loss = Condition(
            f"K(θ) = (1/n)Σ_i‖{'P⊥' if pt.centered else ''}(F(θ) − F(θ*))_i‖² on the n = {pt.n} "
            "given inputs (squared loss, uniform distribution on the data, realizable at θ*)",
            True,
        )
    low_c = Condition(
        f"λ ≥ rank J(θ*)/2 = {lower}: {r} coordinates of the map with independent gradients at θ* "
        "are local coordinates y, and K ≥ c·Σ y_i²",
        True,
    )
    up_c = Condition(
        f"λ ≤ (N − k)/2 = {upper}: the fibre through θ* contains a smooth submanifold of "
        f"dimension k = {k} (unit scalings, free blocks of inactive units), N = {N}",
        True,
    )
    if r == N - k:
        return RLCT.exact_value(
            lower,
            1,
            "quadratic network: rank J(θ*)/2 = (N − k)/2, the two proven bounds meet",
            (loss, *floats, low_c, up_c),
        )
    cert = generic_rank_certificate(pt.d, pt.p, pt.K, pt.X, pt.centered, seed, bias=pt.bias)
    if r < cert.rank:
        status: bool | None = False
        text = (
            f"rank J(θ*) = {r} is below the generic rank of the class ({shape}), which is at "
            f"least {cert.rank} (a rank modulo a prime at a random point): the rank drops at θ*"
        )
    else:
        confident = allow_probabilistic and cert.failure_probability <= TARGET_FAILURE
        status = True if (cert.certified or confident) else None
        text = (
            f"rank J(θ*) = {r} equals the generic rank of the class ({shape}) (so it is maximal "
            f"and constant near θ*); generic rank {cert.describe()}"
        )
    gen_c = Condition(text, status)
    if status is True:
        return RLCT.exact_value(
            lower,
            1,
            "quadratic network: constant-rank theorem, λ = rank J(θ*)/2 at a point of maximal rank",
            (loss, *floats, gen_c),
        )
    rank_bounds = RLCT.bounds(
        lower,
        upper,
        "quadratic network: rank J(θ*)/2 ≤ λ ≤ (N − k)/2 (the rank is not known to be locally "
        "constant)",
        (loss, *floats, gen_c, low_c, up_c),
    )
    by_ideal = ideal_llc(pt, N, search_seconds)
    return _with_ideal(rank_bounds, by_ideal, (loss, *floats), N)


def _with_ideal(rank_bounds: RLCT, by_ideal: RLCT | Condition | None, base: tuple, N: int) -> RLCT:
    """The rank bounds, sharpened by the exact layer's answer on the map's ideal (if any); an
    exact answer rests on ``base`` (the loss) and the ideal's conditions, not on the ranks."""
    if by_ideal is None:
        return rank_bounds
    if isinstance(by_ideal, Condition):  # the search ran out of time
        return _noted(rank_bounds, by_ideal)
    ideal_c = Condition(
        f"K(θ) ≍ Σ_i g_i(θ − θ*)², g_i the map's coordinates minus their values at θ* (or a "
        f"basis of their span: the same ideal), {N} shifted parameters, prior positive at θ*; "
        f"its λ by the exact layer: {by_ideal.method}",
        True,
    )
    conditions = (*base, ideal_c, *by_ideal.conditions)
    if by_ideal.exact:
        return RLCT.exact_value(
            by_ideal.lam,
            by_ideal.mult,
            "quadratic network at a rank drop: λ of the ideal of the identifiable map",
            conditions,
        )
    if by_ideal.lower <= rank_bounds.lower and by_ideal.upper >= rank_bounds.upper:
        no_sharper = Condition(
            "the exact layer's search on the ideal of the identifiable map ended with bounds "
            f"[{by_ideal.lower}, {by_ideal.upper}], no sharper than the ranks'",
            True,
        )
        return _noted(rank_bounds, no_sharper)
    return rank_bounds.intersect(
        RLCT.bounds(
            by_ideal.lower, by_ideal.upper, by_ideal.method, (ideal_c, *by_ideal.conditions)
        )
    )


def _noted(bounds: RLCT, note: Condition) -> RLCT:
    """``bounds`` with one more condition."""
    return RLCT.bounds(bounds.lower, bounds.upper, bounds.method, (*bounds.conditions, note))


def _float_note(*values: object) -> tuple[Condition, ...]:
    """A condition saying that float entries were read at their exact binary values, where any
    were given: the rank is that of the binary point, not of the decimals the user may mean."""
    if not has_float_entries(*values):
        return ()
    return (
        Condition(
            "the point's floating-point entries are taken at their exact binary values (0.1 is "
            "3602879701896397/2⁵⁵, so 0.3 ≠ 3·0.1): a relation meant in decimals, such as a "
            "repeated neuron, may not hold exactly; give integers or Fractions to mean it",
            True,
        ),
    )
