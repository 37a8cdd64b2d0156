"""How often ``rlct.from_ideal`` is exact on random three-variable ideals with the blow-up of the
origin (``rlct.blowup.origin``) off and on, whether its values agree with independent ones, and its
cost.

Usage: ``python benchmarks/bench_rlct_blowup.py [--cases N] [--seed S]``. Ideals: two generators
of order 2 (one or two terms of degree 2, maybe one of degree 3–5) and, half the time, a third
monomial of degree 3–6. Families:

* ``as drawn``: reference the value with the blow-up off (equal where both are exact, inside
  the bounds otherwise).
* ``after a linear change``: the ideal composed with a random invertible integer matrix; reference
  the ideal's exact value in its own coordinates (an RLCT does not depend on the coordinates;
  uniform prior). Only ideals exact as drawn are used.
* ``blow-up alone``: the origin blown up and each zero point solved as an ideal, on ideals times a
  random monomial under a random prior, where the Newton polyhedron alone is exact; reference
  Newton's value. Again with ideals whose quadratic parts share a variable (c·w·v + higher
  terms, w common), so that the initial forms vanish on a line (:mod:`rlct.blowup.families`),
  and with ideals whose only quadratic part is c·v·w (two lines of zeros).
* ``two lines of zeros``: those ideals as drawn; reference the value with the blow-up off.
* ``line blow-up alone``: the blow-up of a random coordinate line in the zeros
  (:mod:`rlct.blowup.line`) forced on the three families times a random monomial under a random
  prior, where Newton alone is exact, its points solved one level deep; reference Newton's value.

Prints a Markdown table and writes ``benchmarks/out/bench_rlct_blowup.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable
from pathlib import Path

import sympy as sp

from rlct.blowup.line import blow_up_line, combine_line
from rlct.blowup.origin import blow_up_origin, combine_points
from rlct.cascade import _solve_ideal

X = x, y, z = sp.symbols("x y z")
ZERO = (sp.Integer(0),) * 3


def _monomial(rng: random.Random, degree: int) -> sp.Expr:
    a = rng.randint(0, degree)
    b = rng.randint(0, degree - a)
    return x**a * y**b * z ** (degree - a - b)


def ideal(rng: random.Random) -> list[sp.Poly]:
    while True:
        gens = []
        for _ in range(2):
            f = sum(
                rng.choice((-2, -1, 1, 2)) * _monomial(rng, 2) for _ in range(rng.randint(1, 2))
            )
            for _ in range(rng.randint(0, 2)):
                f += rng.choice((-1, 1, 3)) * _monomial(rng, rng.randint(3, 5))
            gens.append(f)
        if rng.random() < 0.5:
            gens.append(_monomial(rng, rng.randint(3, 6)))
        polys = [sp.Poly(g, *X) for g in gens]
        if all(not p.is_zero for p in polys):
            return polys


def line_ideal(rng: random.Random) -> list[sp.Poly]:
    """Two generators c·w·v + (up to two monomials of degree 3–4), w common to both."""
    while True:
        common = rng.choice(X)
        gens = []
        for _ in range(2):
            f = rng.choice((-1, 1, 2)) * common * rng.choice(X)
            for _ in range(rng.randint(0, 2)):
                f += _monomial(rng, rng.randint(3, 4))
            gens.append(f)
        polys = [sp.Poly(g, *X) for g in gens]
        if all(not p.is_zero for p in polys) and polys[0] != polys[1]:
            return polys


def two_lines_ideal(rng: random.Random) -> list[sp.Poly]:
    """c·v·w + (up to two monomials of degree 3–4), and one or two monomials of degree 3–4: the
    initial forms vanish on the two lines v = 0 and w = 0 of the exceptional divisor, whose
    points may be of different kinds (``rlct.blowup.families`` takes Z one factor at a time)."""
    while True:
        v, w = rng.sample(X, 2)
        first = rng.choice((-1, 1, 2)) * v * w
        first += sum(_monomial(rng, rng.randint(3, 4)) for _ in range(rng.randint(0, 2)))
        second = sum(
            rng.choice((-1, 1, 3)) * _monomial(rng, rng.randint(3, 4))
            for _ in range(rng.randint(1, 2))
        )
        polys = [sp.Poly(g, *X) for g in (first, second)]
        if all(not p.is_zero for p in polys):
            return polys


def linear_change(rng: random.Random, polys: list[sp.Poly]) -> list[sp.Poly]:
    while True:
        a = sp.Matrix(3, 3, lambda i, j: rng.choice((0, 0, 1, -1, 2)) + int(i == j))
        if a.det() != 0:
            break
    image = dict(zip(X, a * sp.Matrix(X)))
    return [sp.Poly(sp.expand(p.as_expr().xreplace(image)), *X) for p in polys]


def _agrees(new, ref) -> bool:
    if new.exact and ref.exact:
        return bool((new.lam, new.mult) == (ref.lam, ref.mult))
    value = ref.lam if ref.exact else new.lam
    other = new if ref.exact else ref
    return value is None or bool(other.lower <= value <= other.upper)


def run_family(name: str, cases: list[tuple], reference: list) -> dict:
    """``cases``: (generators, prior); ``reference``: an RLCT per case."""
    row: dict = {"family": name, "cases": len(cases)}
    for label, depth in (("off", 0), ("on", None)):
        t0, slowest, results = time.perf_counter(), 0.0, []
        for polys, h in cases:
            t1 = time.perf_counter()
            results.append(_solve_ideal(polys, h) if depth is None else _solve_ideal(polys, h, 0))
            slowest = max(slowest, time.perf_counter() - t1)
        row[f"exact_{label}"] = sum(r.exact for r in results)
        row[f"seconds_{label}"] = round(time.perf_counter() - t0, 1)
        row[f"slowest_{label}"] = round(slowest, 2)
    row["consistent"] = sum(_agrees(r, ref) for r, ref in zip(results, reference))
    return row


def _with_monomial_and_prior(
    rng: random.Random, draw: Callable[[random.Random], list[sp.Poly]]
) -> tuple[list[sp.Poly], tuple[sp.Integer, ...]]:
    """A drawn ideal times a random monomial, and a random prior."""
    factor = rng.choice((1, 1, x, z, y * z, x**2))
    polys = [sp.Poly(factor * p.as_expr(), *X) for p in draw(rng)]
    return polys, tuple(sp.Integer(rng.choice((0, 0, 1, 2))) for _ in range(3))


def run_alone(
    rng: random.Random,
    n: int,
    draw: Callable[[random.Random], list[sp.Poly]] = ideal,
    name: str = "",
) -> dict:
    answered = agree = declined = curves = 0
    t0 = time.perf_counter()
    tried = 0
    while tried < n:
        polys, h = _with_monomial_and_prior(rng, draw)
        newton = _solve_ideal(polys, h, 0)
        if not newton.exact:
            continue
        tried += 1
        blowup = blow_up_origin(polys, h)
        if blowup is None:
            declined += 1
            continue
        got = combine_points(blowup, [_solve_ideal(p.generators, p.h, 2) for p in blowup.points])
        answered += got.exact
        curves += bool(blowup.families)
        agree += _agrees(got, newton)
    return {
        "family": "blow-up alone, against Newton" + name,
        "cases": n,
        "with_a_curve_of_zeros": curves,
        "declined": declined,
        "exact": answered,
        "consistent": agree,
        "seconds": round(time.perf_counter() - t0, 1),
    }


def run_lines(
    rng: random.Random, n: int, draw: Callable[[random.Random], list[sp.Poly]], name: str
) -> dict:
    exact = bounds = agree = declined = tried = 0
    t0 = time.perf_counter()
    while tried < n:
        polys, h = _with_monomial_and_prior(rng, draw)
        polys = [q for q in polys if not q.is_zero]
        lines = [
            (i, j)
            for i in range(3)
            for j in range(3)
            if i != j and all(m[i] + m[j] > 0 for p in polys for m in p.monoms())
        ]
        newton = _solve_ideal(polys, h, 0) if lines else None
        if newton is None or not newton.exact:
            continue
        tried += 1
        line = blow_up_line(polys, h, *rng.choice(lines))
        if line is None:
            declined += 1
            continue
        got = combine_line(line, [_solve_ideal(p.generators, p.h, 1) for p in line.points])
        exact += got.exact
        bounds += not got.exact
        agree += _agrees(got, newton)
    return {
        "family": "line blow-up alone, against Newton" + name,
        "cases": n,
        "declined": declined,
        "exact": exact,
        "bounds": bounds,
        "consistent": agree,
        "seconds": round(time.perf_counter() - t0, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    drawn = [(ideal(rng), ZERO) for _ in range(args.cases)]
    own = [_solve_ideal(p, h, 0) for p, h in drawn]
    rows = [run_family("as drawn", drawn, own)]
    changed, refs = [], []
    while len(changed) < args.cases:
        polys = ideal(rng)
        ref = _solve_ideal(polys, ZERO, 0)
        if ref.exact:
            changed.append((linear_change(rng, polys), ZERO))
            refs.append(ref)
    rows.append(run_family("after a linear change (exact as drawn)", changed, refs))
    # the new families draw from their own generator, so the others' draws stay as they were
    other = random.Random(args.seed + 1)
    lines = [(two_lines_ideal(other), ZERO) for _ in range(args.cases)]
    rows.append(run_family("two lines of zeros", lines, [_solve_ideal(p, h, 0) for p, h in lines]))
    print(
        "| family | cases | exact, blow-up off | exact, on | consistent | time off / on | slowest |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['family']} | {r['cases']} | {r['exact_off']} | {r['exact_on']} | "
            f"{r['consistent']} of {r['cases']} | {r['seconds_off']} s / {r['seconds_on']} s | "
            f"{r['slowest_off']} s / {r['slowest_on']} s |"
        )
    alone = [
        run_alone(rng, args.cases),
        run_alone(rng, args.cases, line_ideal, " (quadratic parts sharing a variable)"),
        run_alone(other, args.cases, two_lines_ideal, " (two lines of zeros)"),
    ]
    print(
        "\n| family | cases | declined | curve of zeros | exact | consistent with Newton | time |"
    )
    print("|---|---|---|---|---|---|---|")
    for a in alone:
        print(
            f"| {a['family']} | {a['cases']} | {a['declined']} | {a['with_a_curve_of_zeros']} | "
            f"{a['exact']} | {a['consistent']} of {a['cases'] - a['declined']} | {a['seconds']} s |"
        )
    lines = random.Random(args.seed + 11)  # its own draws: the tables above stay as they were
    forced = [
        run_lines(lines, args.cases, ideal, ""),
        run_lines(lines, args.cases, line_ideal, " (quadratic parts sharing a variable)"),
        run_lines(lines, args.cases, two_lines_ideal, " (two lines of zeros)"),
    ]
    print("\n| family | cases | declined | exact | bounds | consistent with Newton | time |")
    print("|---|---|---|---|---|---|---|")
    for f in forced:
        print(
            f"| {f['family']} | {f['cases']} | {f['declined']} | {f['exact']} | {f['bounds']} | "
            f"{f['consistent']} of {f['exact'] + f['bounds']} | {f['seconds']} s |"
        )
    path = Path(__file__).parent / "out" / "bench_rlct_blowup.json"
    out = {"seed": args.seed, "rows": rows, "alone": alone, "lines": forced}
    path.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
