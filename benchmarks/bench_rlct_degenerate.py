"""How often ``rlct.from_polynomial`` is exact on random degenerate K, with the hypersurface,
elimination and linear-change steps off and on, and whether the exact values agree with an
independent one.

Usage: ``python benchmarks/bench_rlct_degenerate.py [--cases N] [--seed S]``. Families:

* ``f² in 3 variables``: f a random sparse polynomial (2–4 terms, coefficients ±1..3), half of
  them disguised by x ↦ x + c·y^a z^b; a prior |w_j| on some coordinates. Reference: the value
  with both steps off (equal where exact, inside the bounds otherwise).
* ``f₁² + f₂² in 3 variables``, f₁ = (c + a·x or a·z)·y + r(x, z) affine in y, written as a sum of squares.
  Reference: the same.
* ``Σ g_i²``, each g_i a product of powers of three random independent linear forms. Reference:
  the same.
* ``f² in 2 variables`` and ``⟨(c + a·x)·y + r(x), g⟩``: the plane resolution (an independent exact method).

Prints a Markdown table and writes ``benchmarks/out/bench_rlct_degenerate.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import sympy as sp

import rlct
import rlct.cascade as pipeline
from rlct.plane.resolve import resolve_plane

x, y, z = sp.symbols("x y z")
COEFFS = (-3, -2, -1, 1, 2, 3)


@contextmanager
def steps_off() -> Iterator[None]:
    """The three new steps switched off inside ``rlct.cascade``."""
    names = (
        "hypersurface_power_rlct",
        "eliminate_affine_generator",
        "monomial_after_linear_change",
    )
    saved = [getattr(pipeline, n) for n in names]
    for n in names:
        setattr(pipeline, n, lambda *a, **k: None)
    try:
        yield
    finally:
        for n, step in zip(names, saved):
            setattr(pipeline, n, step)


def _random(rng: random.Random, gens: tuple[sp.Symbol, ...], terms: int, deg: int) -> sp.Expr:
    return sp.expand(
        sum(
            rng.choice(COEFFS) * sp.Mul(*(g ** rng.randint(0, deg) for g in gens))
            for _ in range(terms)
        )
    )


def _vanishes_at_0(f: sp.Expr, gens: tuple[sp.Symbol, ...]) -> bool:
    p = sp.Poly(f, *gens)
    return not p.is_ground and p.coeff_monomial(1) == 0


def square_3d(rng: random.Random) -> tuple[sp.Expr, list]:
    while True:
        f = _random(rng, (x, y, z), rng.randint(2, 4), 4)
        if rng.random() < 0.5:
            shift = rng.choice((1, -1, 2)) * y ** rng.randint(1, 2) * z ** rng.randint(0, 2)
            f = sp.expand(f.subs(x, x + shift))
        if _vanishes_at_0(f, (x, y, z)):
            return f**2, [rng.choice((0, 0, 0, 1)) for _ in range(3)]


def two_squares_3d(rng: random.Random) -> tuple[sp.Expr, list]:
    while True:
        r = _random(rng, (x, z), rng.randint(1, 2), 3)
        unit = rng.choice((1, 2, -3)) + rng.choice((0, 0, 1, -2)) * rng.choice((x, z))
        f1 = unit * y + r - r.subs({x: 0, z: 0})
        f2 = _random(rng, (x, y, z), rng.randint(1, 3), 4)
        if _vanishes_at_0(f2, (x, y, z)):
            return f1**2 + f2**2, [rng.choice((0, 0, 1)), 0, rng.choice((0, 0, 1))]


def linear_products_3d(rng: random.Random) -> tuple[sp.Expr, list]:
    while True:
        forms = [sum(rng.randint(-2, 2) * v for v in (x, y, z)) for _ in range(3)]
        if sp.Matrix([[f.coeff(v) for v in (x, y, z)] for f in forms]).det() != 0:
            break
    gens = [sp.Mul(*(f ** rng.randint(0, 2) for f in forms)) for _ in range(rng.randint(2, 3))]
    gens = [g for g in gens if g != 1] or [forms[0]]
    return sp.Add(*(g**2 for g in gens)), [0, 0, 0]


def _compare(new: rlct.RLCT, ref: rlct.RLCT) -> bool:
    if new.exact and ref.exact:
        return bool((new.lam, new.mult) == (ref.lam, ref.mult))
    if new.exact:
        return bool(ref.lower <= new.lam) and bool(new.lam <= ref.upper)
    return True  # both bounds: nothing to compare


def run_3d(name: str, draw: Callable, n: int, rng: random.Random) -> dict:
    cases = [draw(rng) for _ in range(n)]
    out: dict = {"family": name, "cases": n}
    results = {}
    for label, ctx in (("off", steps_off), ("on", _nothing)):
        t0 = time.perf_counter()
        with ctx():
            results[label] = [rlct.from_polynomial(K, [x, y, z], h) for K, h in cases]
        out[f"exact_{label}"] = sum(r.exact for r in results[label])
        out[f"seconds_{label}"] = round(time.perf_counter() - t0, 1)
    pairs = list(zip(results["on"], results["off"]))
    out["consistent"] = sum(_compare(a, b) for a, b in pairs)
    out["checked_exact_both"] = sum(a.exact and b.exact for a, b in pairs)
    return out


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def run_plane(n: int, rng: random.Random) -> list[dict]:
    out = []
    for name in ("f² in 2 variables (hypersurface step)", "⟨(c + a·x)·y + r(x), g⟩ (elimination)"):
        answered = agree = 0
        t0 = time.perf_counter()
        for _ in range(n):
            h = (rng.choice((0, 0, 1)), 0)
            while True:
                if name.startswith("f²"):
                    f = _random(rng, (x, y), rng.randint(2, 4), 6)
                    if _vanishes_at_0(f, (x, y)):
                        K = sp.Poly(f**2, x, y)
                        r = pipeline.hypersurface_power_rlct(K, tuple(map(sp.Integer, h)))
                        break
                else:
                    g = _random(rng, (x, y), rng.randint(1, 3), 5)
                    if _vanishes_at_0(g, (x, y)):
                        unit = rng.choice((1, 2, -3)) + rng.choice((0, 0, 1, -2)) * x
                        f = unit * y + rng.choice(COEFFS) * x ** rng.randint(1, 4)
                        K = sp.Poly(f**2 + g**2, x, y)
                        r = rlct.from_ideal([f, g], [x, y], h)
                        break
            if r is None or not r.exact:
                continue
            answered += 1
            ref = resolve_plane(K, tuple(map(sp.Integer, h)))
            agree += bool((r.lam, r.mult) == (ref.lam, ref.mult))
        seconds = round(time.perf_counter() - t0, 1)
        out.append(
            {"family": name, "cases": n, "answered": answered, "agree": agree, "seconds": seconds}
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    rows = [
        run_3d("f² in 3 variables", square_3d, args.cases, rng),
        run_3d("f₁² + f₂², f₁ affine in y", two_squares_3d, args.cases, rng),
        run_3d("Σ (products of 3 independent linear forms)²", linear_products_3d, args.cases, rng),
    ]
    print("| family | cases | exact, steps off | exact, steps on | consistent | time off / on |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['family']} | {r['cases']} | {r['exact_off']} | {r['exact_on']} | "
            f"{r['consistent']} of {r['cases']} ({r['checked_exact_both']} exact both ways) | "
            f"{r['seconds_off']} s / {r['seconds_on']} s |"
        )
    plane = run_plane(args.cases, rng)
    print("\n| family (two variables) | cases | exact | equal to the plane resolution | time |")
    print("|---|---|---|---|---|")
    for r in plane:
        print(
            f"| {r['family']} | {r['cases']} | {r['answered']} | {r['agree']} | {r['seconds']} s |"
        )
    path = Path(__file__).parent / "out" / "bench_rlct_degenerate.json"
    path.write_text(json.dumps({"seed": args.seed, "three": rows, "two": plane}, indent=1))


if __name__ == "__main__":
    main()
