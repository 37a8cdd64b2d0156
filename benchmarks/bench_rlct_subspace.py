"""The blow-up of a codimension-2 coordinate subspace (``rlct.blowup.subspace``) in four
variables: forced on random ideals that Newton's polyhedron solves on its own, against Newton's
value, and ``rlct.from_ideal`` on named ideals that stayed bounds before it.

Usage: ``python benchmarks/bench_rlct_subspace.py [--cases N] [--seed S]``. Ideals: one to three
generators of one to three terms (coefficients in {−2, −1, 1, 2, 3}, degrees 1–4, so that some
are affine in a variable and the chart's changes v' = g_k happen), times 1, a, bc or d² now and
then, under a prior with exponents drawn from {0, 0, 1, 2}, and a random centre {x_i = x_j = 0}
in the zeros (i's chart coordinate w = x_i' is the fibre's). Consistent: equal λ and m where the
blow-up is exact, Newton's λ inside the bounds otherwise.

Prints Markdown tables and writes ``benchmarks/out/bench_rlct_subspace.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import sympy as sp

import rlct
from rlct.blowup.line import combine_line
from rlct.blowup.subspace import blow_up_subspace
from rlct.cascade import _solve_ideal

A = a, b, c, d = sp.symbols("a b c d")
NAMED = {
    "ab + cd, ab³ + cd³ (tanh, two units)": [a * b + c * d, a * b**3 + c * d**3],
    "the same and ab⁵ + cd⁵": [a * b + c * d, a * b**3 + c * d**3, a * b**5 + c * d**5],
    "ab + cd, ab² + cd²": [a * b + c * d, a * b**2 + c * d**2],
    "ab + cd, a²b + c²d": [a * b + c * d, a**2 * b + c**2 * d],
    "ab² + cd², ab⁴ + cd⁴": [a * b**2 + c * d**2, a * b**4 + c * d**4],
}


def _monomial(rng: random.Random, degree: int) -> sp.Expr:
    exponents = [0, 0, 0, 0]
    for _ in range(degree):
        exponents[rng.randrange(4)] += 1
    return sp.Mul(*(v**e for v, e in zip(A, exponents)))


def draw(rng: random.Random) -> tuple[list[sp.Poly], tuple[sp.Integer, ...], int, int]:
    """An ideal, a prior and a centre (i, j) in its zeros (module docstring)."""
    while True:
        factor = rng.choice((1, 1, 1, a, b * c, d**2))
        gens = []
        for _ in range(rng.choice((1, 2, 2, 3))):
            terms = rng.randint(1, 3)
            f = sum(
                rng.choice((-2, -1, 1, 2, 3)) * _monomial(rng, rng.choice((1, 2, 2, 3, 4)))
                for _ in range(terms)
            )
            gens.append(sp.expand(factor * f))
        polys = [p for p in (sp.Poly(g, *A) for g in gens) if not p.is_zero]
        i, j = rng.sample(range(4), 2)
        h = tuple(sp.Integer(rng.choice((0, 0, 1, 2))) for _ in range(4))
        if polys and all(m[i] + m[j] > 0 for p in polys for m in p.monoms()):
            return polys, h, i, j


def forced(cases: int, seed: int) -> dict:
    rng = random.Random(seed)
    counts = dict(cases=0, newton_exact=0, declined=0, exact=0, bounds=0, consistent=0)
    t0 = time.perf_counter()
    while counts["cases"] < cases:
        polys, h, i, j = draw(rng)
        counts["cases"] += 1
        newton = _solve_ideal(polys, h, 0)
        if not newton.exact:
            continue
        counts["newton_exact"] += 1
        blown = blow_up_subspace(polys, h, i, j)
        if blown is None:
            counts["declined"] += 1
            continue
        got = combine_line(blown, [_solve_ideal(p.generators, p.h, 1) for p in blown.points])
        counts["exact" if got.exact else "bounds"] += 1
        if got.exact:
            counts["consistent"] += (got.lam, got.mult) == (newton.lam, newton.mult)
        else:
            counts["consistent"] += got.lower <= newton.lam <= got.upper
    counts["seconds"] = time.perf_counter() - t0
    return counts


def named() -> list[dict]:
    rows = []
    for label, gens in NAMED.items():
        t0 = time.perf_counter()
        got = rlct.from_ideal(gens, A)
        rows.append(
            {
                "ideal": label,
                "exact": got.exact,
                "value": f"λ = {got.lam}, m = {got.mult}"
                if got.exact
                else f"{got.lower} ≤ λ ≤ {got.upper}",
                "method": got.method.split(" (")[0],
                "seconds": time.perf_counter() - t0,
            }
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    out = {"args": vars(args), "forced": forced(args.cases, args.seed), "named": named()}
    f = out["forced"]
    print("| drawn | Newton exact | declined | exact | bounds | consistent | time |")
    print("|---|---|---|---|---|---|---|")
    print(
        f"| {f['cases']} | {f['newton_exact']} | {f['declined']} | {f['exact']} | "
        f"{f['bounds']} | {f['consistent']} of {f['exact'] + f['bounds']} | "
        f"{f['seconds']:.1f} s |"
    )
    print("\n| ideal | from_ideal | method | time |\n|---|---|---|---|")
    for r in out["named"]:
        print(f"| {r['ideal']} | {r['value']} | {r['method']} | {r['seconds']:.2f} s |")
    path = Path(__file__).parent / "out" / "bench_rlct_subspace.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
