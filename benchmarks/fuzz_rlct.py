"""Metamorphic fuzzing of the exact RLCT layer: ``rlct.from_ideal`` / ``rlct.from_polynomial``.

λ and m of K = Σ f_i² under the prior Π|x_i|^(h_i) do not change under analytic changes of
coordinates fixing 0 that keep the prior's form, nor under changes of generators of the same
ideal; sums and products on disjoint variables combine by known rules. This script draws random
ideals (and structured degenerate families), applies such a relation, and compares:

* both sides exact: (λ, m) must be equal;
* one side exact, the other bounds: lower ≤ λ ≤ upper;
* both sides bounds: the intervals must meet.

Relations (``--relations``, default all):

  perm       permutation of the variables (prior exponents permuted along)
  scale      x_i ↦ c_i·x_i, c_i ∈ {±1, ±2, ±3, ±1/2}
  shear      x_i ↦ x_i + c·x_j^k (only where h_i = 0, j ≠ i, k ≥ 1)
  unitshear  x_i ↦ x_i·(1 + c·x_j^k) (any prior: the prior gains a unit factor only)
  recombine  f_a ↦ f_a + q·f_b (q a constant or a monomial), a redundant generator Σ q_i f_i,
             f_a ↦ (1 + u)·f_a (u a monomial, a unit at 0), or f_a ↦ c·f_a
  squares    from_ideal([f_i]) against from_polynomial(Σ c_i f_i²) (c_i > 0)
  linear     x ↦ A·x, A an invertible integer matrix (only when all h_i = 0)
  chain      2–3 of perm / scale / shear / unitshear / linear, composed
  blocksum   ⟨F(x)⟩ + ⟨G(y)⟩ on disjoint variables: λ1 + λ2, m1 + m2 − 1
  blockprod  ⟨f_i·g_j⟩ (and sometimes from_polynomial(K1·K2)): λ = min, m added when equal

Every call runs under its own SIGALRM timeout (``--timeout``); a slow call is skipped and
recorded. Exceptions other than ``TooLargeError`` (a documented refusal, recorded) are crashes.
A few sanity checks on single results are findings too: an exact or lower value above the cap
Σ(h_i + 1)/(2·min ord f_i) (K ≤ C·|x|^(2·ord)), or m > number of variables.

Each disagreement is shrunk greedily (drop generators / terms, lower exponents, unit
coefficients, zero priors) while it persists, within ``--shrink-seconds``.

Usage::

    python benchmarks/fuzz_rlct.py --seed 1 --cases 200 --max-seconds 600 --vars 2-3 \
        [--timeout 20] [--relations perm,shear,...] [--families random,cusp,...] \
        [--shrink-seconds 120] [--fresh] [--out benchmarks/out/fuzz_rlct_findings.json]

Findings (with a runnable Python snippet each) are appended as one run to the JSON file
(``--fresh`` starts it anew); a summary is printed at the end.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import sympy as sp

import rlct
from rlct.errors import TooLargeError

NAMES = "abcdefgh"
SYMS = sp.symbols(" ".join(NAMES))
R = sp.Rational
COEFFS = (-3, -2, -1, 1, 2, 3, R(1, 2))
SCALES = (-3, -2, -1, 2, 3, R(1, 2), R(-1, 2))
SMALL = (-2, -1, 1, 2, R(1, 2))
MAX_TERMS_VARIANT = 80  # a transformed generator with more terms is not tried
OUT = Path(__file__).resolve().parent / "out" / "fuzz_rlct_findings.json"


# ----------------------------------------------------------------------------- calls, results


class CallTimeout(BaseException):
    """Raised by SIGALRM inside an rlct call (a BaseException: no ``except Exception`` eats it)."""


def _on_alarm(signum, frame):
    raise CallTimeout()


@dataclass(frozen=True)
class Case:
    """An ideal ⟨gens⟩ in the first n of NAMES, prior exponents h."""

    gens: tuple[sp.Expr, ...]
    n: int
    h: tuple[sp.Rational, ...]

    @property
    def vars(self) -> tuple[sp.Symbol, ...]:
        return SYMS[: self.n]


@dataclass(frozen=True)
class Call:
    """One rlct call: kind 'ideal' (exprs = generators) or 'poly' (exprs = (K,))."""

    kind: str
    exprs: tuple[sp.Expr, ...]
    n: int
    h: tuple[sp.Rational, ...]

    def key(self) -> tuple:
        return (self.kind, tuple(sp.srepr(e) for e in self.exprs), self.n, self.h)

    def code(self, name: str) -> str:
        vs = "[" + ", ".join(NAMES[: self.n]) + "]"
        hs = "[" + ", ".join(_num(x) for x in self.h) + "]"
        if self.kind == "ideal":
            gens = "[" + ", ".join(_expr(e) for e in self.exprs) + "]"
            return f"{name} = rlct.from_ideal({gens}, {vs}, {hs})"
        return f"{name} = rlct.from_polynomial({_expr(self.exprs[0])}, {vs}, {hs})"


def _num(x: sp.Rational) -> str:
    return str(x) if x.q == 1 else f"sp.Rational({x.p}, {x.q})"


def _expr(e: sp.Expr) -> str:
    """e as Python source for a reproducer: sympy's ``sstr`` of a polynomial with rational
    coefficients in the symbols a, b, … reads back as the same polynomial (nothing is evaluated
    here; a reader runs the snippet)."""
    return sp.sstr(e)


def case_call(case: Case) -> Call:
    return Call("ideal", case.gens, case.n, case.h)


@dataclass(frozen=True)
class Val:
    """λ exactly (lo == hi, exact) or bounds; m when exact."""

    lo: sp.Rational
    hi: sp.Rational
    exact: bool
    mult: int | None

    def __str__(self) -> str:
        return f"λ={self.lo}, m={self.mult}" if self.exact else f"{self.lo} ≤ λ ≤ {self.hi}"

    def to_dict(self) -> dict:
        return {
            "exact": self.exact,
            "lam": str(self.lo) if self.exact else None,
            "mult": self.mult,
            "lower": str(self.lo),
            "upper": str(self.hi),
        }


@dataclass
class Outcome:
    status: str  # ok | timeout | refused | crash
    val: Val | None = None
    method: str = ""
    seconds: float = 0.0
    error: str = ""
    conditions: list[str] = field(default_factory=list)


class Runner:
    """Runs calls under a SIGALRM timeout, caches outcomes, counts."""

    def __init__(self, timeout: float):
        self.timeout = timeout
        self.cache: dict[tuple, Outcome] = {}
        self.stats: Counter = Counter()
        self.events: list[dict] = []  # timeouts / refusals / crashes (first seen)
        signal.signal(signal.SIGALRM, _on_alarm)

    def run(self, call: Call, timeout: float | None = None, record: bool = True) -> Outcome:
        k = call.key()
        if k in self.cache:
            return self.cache[k]
        t = timeout or self.timeout
        t0 = time.perf_counter()
        try:
            signal.setitimer(signal.ITIMER_REAL, t)
            try:
                if call.kind == "ideal":
                    r = rlct.from_ideal(list(call.exprs), list(SYMS[: call.n]), list(call.h))
                else:
                    r = rlct.from_polynomial(call.exprs[0], list(SYMS[: call.n]), list(call.h))
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            v = Val(r.lower, r.upper, r.exact, r.mult)
            out = Outcome(
                "ok",
                v,
                r.method,
                time.perf_counter() - t0,
                conditions=[str(c) for c in r.conditions if c.status is not True][:6],
            )
        except CallTimeout:
            out = Outcome("timeout", seconds=time.perf_counter() - t0, error=f"> {t} s")
        except TooLargeError as err:
            out = Outcome(
                "refused", seconds=time.perf_counter() - t0, error=f"TooLargeError: {err}"[:400]
            )
        except RecursionError as err:
            out = Outcome(
                "crash", seconds=time.perf_counter() - t0, error=f"RecursionError: {err}"[:400]
            )
        except Exception as err:  # every other exception is a finding
            tb = traceback.format_exc(limit=-6)
            out = Outcome(
                "crash",
                seconds=time.perf_counter() - t0,
                error=f"{type(err).__name__}: {err}"[:600] + "\n" + tb[-2500:],
            )
        self.cache[k] = out
        if record:
            self.stats["calls"] += 1
            self.stats[f"calls_{out.status}"] += 1
            if out.status != "ok":
                self.events.append(
                    {
                        "kind": out.status,
                        "call": call.code("r"),
                        "seconds": round(out.seconds, 2),
                        "error": out.error,
                    }
                )
        return out


# ----------------------------------------------------------------------------- generation


def _monomial(rng: random.Random, vs, deg: int) -> sp.Expr:
    e = [0] * len(vs)
    for _ in range(deg):
        e[rng.randrange(len(vs))] += 1
    return sp.Mul(*(v**k for v, k in zip(vs, e)))


def _random_gen(rng: random.Random, vs, terms: int, lo: int, hi: int) -> sp.Expr:
    f = sp.Integer(0)
    for _ in range(20):
        f = sp.expand(
            sum(rng.choice(COEFFS) * _monomial(rng, vs, rng.randint(lo, hi)) for _ in range(terms))
        )
        if f != 0:
            return f
    return vs[0] ** 2


def _prior(rng: random.Random, n: int) -> tuple[sp.Rational, ...]:
    out = []
    for _ in range(n):
        if rng.random() < 0.08:
            out.append(R(1, 2))
        else:
            out.append(sp.Integer(rng.choice((0, 0, 0, 1, 2))))
    return tuple(out)


def fam_random(rng, n):
    vs = SYMS[:n]
    g = rng.choice((1, 1, 2, 2, 3))
    gens = []
    for _ in range(g):
        lo = rng.choice((1, 2, 2, 2, 3))
        gens.append(_random_gen(rng, vs, rng.randint(1, 4), lo, rng.randint(lo, 5)))
    return tuple(gens)


def _cusp(rng, x, y):
    a, b = rng.randint(1, 4), rng.randint(1, 4)
    return x**a - rng.choice(COEFFS) * y**b


def fam_cusp(rng, n):
    """(x^a − c·y^b)^e times a monomial, maybe with one more generator."""
    vs = list(SYMS[:n])
    rng.shuffle(vs)
    f = _cusp(rng, vs[0], vs[1]) ** rng.choice((1, 2, 2, 3))
    if rng.random() < 0.5:
        f = f * _monomial(rng, SYMS[:n], rng.randint(1, 2))
    gens = [sp.expand(f)]
    if n >= 3 and rng.random() < 0.6:
        gens.append(
            sp.expand(
                _monomial(rng, vs[2:], rng.randint(1, 3))
                + (rng.choice(COEFFS) * _monomial(rng, vs, 3) if rng.random() < 0.4 else 0)
            )
        )
    return tuple(gens)


def fam_cusp_blocks(rng, n):
    """Sums / products of cusps on disjoint variables (as one generator or as a pair)."""
    vs = list(SYMS[:n])
    rng.shuffle(vs)
    if n < 4:
        f = _cusp(rng, vs[0], vs[1])
        g = vs[2] ** rng.randint(1, 3) if n == 3 else vs[0] * vs[1]
    else:
        f, g = _cusp(rng, vs[0], vs[1]), _cusp(rng, vs[2], vs[3])
    mode = rng.choice(("prod", "sum", "pair", "prodsq"))
    if mode == "prod":
        return (sp.expand(f * g),)
    if mode == "sum":
        return (sp.expand(f + g),)
    if mode == "prodsq":
        return (sp.expand(f**2 * g),)
    return (sp.expand(f), sp.expand(g))


def fam_sum_products(rng, n):
    """⟨ab + cd, a·b^k + c·d^k⟩-style: sums of products."""
    vs = list(SYMS[:n])
    rng.shuffle(vs)
    if n >= 4:
        a, b, c, d = vs[:4]
        k = rng.randint(2, 4)
        s = rng.choice((1, -1, 2))
        gens = [a * b + s * c * d, a * b**k + s * c * d**k]
        if rng.random() < 0.3:
            gens = [a * b + s * c * d, a**k * b + s * c**k * d]
        if rng.random() < 0.3:
            gens = gens[:1]
        if n >= 5 and rng.random() < 0.5:
            gens[0] = gens[0] + rng.choice(SMALL) * vs[4] ** 2
        return tuple(sp.expand(g) for g in gens)
    a, b = vs[0], vs[1]
    c = vs[2] if n >= 3 else vs[0]
    k = rng.randint(2, 4)
    gens = [a * b + rng.choice(SMALL) * c**2, a * b**k + rng.choice(SMALL) * c ** (k + 1)]
    return tuple(sp.expand(g) for g in gens[: rng.randint(1, 2)])


def fam_smooth(rng, n):
    """A linear term plus higher terms (a smooth generator), with another generator."""
    vs = SYMS[:n]
    f = rng.choice(SMALL) * rng.choice(vs) + _random_gen(rng, vs, rng.randint(1, 3), 2, 4)
    gens = [sp.expand(f)]
    if rng.random() < 0.7:
        gens.append(_random_gen(rng, vs, rng.randint(1, 3), 2, 5))
    if rng.random() < 0.2:
        gens.append(
            sp.expand(
                rng.choice(SMALL) * rng.choice(vs) + _random_gen(rng, vs, rng.randint(1, 2), 2, 3)
            )
        )
    return tuple(gens)


def fam_quadric(rng, n):
    """Quadratic forms of mixed signature, maybe a power, maybe plus a higher term."""
    vs = SYMS[:n]
    q = sp.Integer(0)
    for i in range(n):
        q += rng.choice((-2, -1, 0, 1, 1, 2)) * vs[i] ** 2
    if rng.random() < 0.5:
        i, j = rng.sample(range(n), 2)
        q += rng.choice((-1, 1, 2)) * vs[i] * vs[j]
    if q == 0:
        q = vs[0] * vs[1]
    if rng.random() < 0.4:
        q += rng.choice(COEFFS) * _monomial(rng, vs, 3)
    q = q ** rng.choice((1, 1, 2))
    gens = [sp.expand(q)]
    if rng.random() < 0.3:
        gens.append(_random_gen(rng, vs, rng.randint(1, 2), 2, 3))
    return tuple(gens)


def fam_monomial(rng, n):
    """Monomials times units and binomials: near-monomial ideals."""
    vs = SYMS[:n]
    gens = []
    for _ in range(rng.randint(1, 3)):
        m = _monomial(rng, vs, rng.randint(1, 4))
        if rng.random() < 0.5:
            m = m * (1 + rng.choice(COEFFS) * _monomial(rng, vs, rng.randint(1, 2)))
        gens.append(sp.expand(m))
    return tuple(gens)


def fam_monofactor(rng, n):
    """A monomial times a smooth (or nearly smooth) factor, as in ⟨a·(a²bd + b + d)⟩."""
    vs = SYMS[:n]
    lin = sum(rng.choice(SMALL) * v for v in rng.sample(vs, rng.randint(1, min(2, n))))
    f = lin + _random_gen(rng, vs, rng.randint(1, 2), 2, 4)
    gens = [sp.expand(_monomial(rng, vs, rng.randint(1, 2)) * f)]
    if rng.random() < 0.4:
        gens.append(
            sp.expand(
                _monomial(rng, vs, rng.randint(1, 3)) * (1 + rng.choice(COEFFS) * rng.choice(vs))
            )
        )
    return tuple(gens)


def fam_degenerate(rng, n):
    """Degenerate faces on purpose: Whitney umbrellas, common non-monomial factors,
    ⟨(a − b^k)·c, (a − b^k)·d⟩, a cusp plus a term in a third variable."""
    vs = list(SYMS[:n])
    rng.shuffle(vs)
    a, b = vs[0], vs[1]
    c = vs[2] if n >= 3 else a
    k = rng.randint(2, 3)
    mode = rng.choice(("umbrella", "common", "pair", "cuspz", "cuspz"))
    if mode == "umbrella":
        gens = [a**2 - rng.choice((1, 2, R(1, 2), -1)) * b**2 * c]
    elif mode == "common":
        g = a - rng.choice(SMALL) * b**k
        gens = [
            g * _monomial(rng, vs, rng.randint(1, 2)),
            g * (c + rng.choice(COEFFS) * _monomial(rng, vs, 2)),
        ]
    elif mode == "pair":
        g = a - rng.choice(SMALL) * b**k
        d = vs[3] if n >= 4 else b
        gens = [g * c, g * d]
    else:
        gens = [
            (a**2 - rng.choice(SMALL) * b**3) ** rng.choice((1, 2))
            + rng.choice(SMALL) * c ** rng.randint(2, 6)
        ]
        if rng.random() < 0.3:
            gens.append(rng.choice(vs) ** rng.randint(2, 4))
    return tuple(sp.expand(g) for g in gens)


FAMILIES: dict[str, tuple[Callable, float]] = {
    "monofactor": (fam_monofactor, 1.5),
    "degenerate": (fam_degenerate, 1.5),
    "random": (fam_random, 4.0),
    "cusp": (fam_cusp, 1.5),
    "cuspblocks": (fam_cusp_blocks, 1.0),
    "sumprod": (fam_sum_products, 1.0),
    "smooth": (fam_smooth, 1.0),
    "quadric": (fam_quadric, 1.0),
    "monomial": (fam_monomial, 1.0),
}


def draw_case(rng, n, families) -> tuple[str, Case]:
    names = [f for f in families]
    weights = [FAMILIES[f][1] for f in names]
    fam = rng.choices(names, weights)[0]
    gens = tuple(g for g in FAMILIES[fam][0](rng, n) if g != 0)
    return fam, Case(gens, n, _prior(rng, n))


# ----------------------------------------------------------------------------- relations


def _subs(case: Case, mapping: dict) -> tuple[sp.Expr, ...] | None:
    out = tuple(sp.expand(g.subs(mapping, simultaneous=True)) for g in case.gens)
    if any(len(sp.Add.make_args(g)) > MAX_TERMS_VARIANT for g in out):
        return None
    return out


def _same(a: Val, b: Val) -> tuple[Val, Val]:
    return a, b


# A relation: draw(rng, case) -> params | None ; apply(case, params, other) -> Check | None


@dataclass
class Check:
    calls: list[Call]  # calls[0] is always from_ideal(base case)
    combine: Callable[[list[Val]], tuple[Val, Val]]  # -> the two values that must agree
    labels: tuple[str, str]
    note: str = ""


def _coord_map(case: Case, op) -> dict | None:
    """One coordinate-change op → substitution dict and new prior (or None when invalid)."""
    kind = op[0]
    vs = case.vars
    if kind == "perm":
        p = op[1]
        return {
            "map": {vs[i]: vs[p[i]] for i in range(case.n)},
            "h": tuple(case.h[p.index(j)] for j in range(case.n)),
        }
    if kind == "scale":
        return {"map": {vs[i]: op[1][i] * vs[i] for i in range(case.n)}, "h": case.h}
    if kind == "shear":
        _, i, j, k, c = op
        if case.h[i] != 0:
            return None
        return {"map": {vs[i]: vs[i] + c * vs[j] ** k}, "h": case.h}
    if kind == "unitshear":
        _, i, j, k, c = op
        return {"map": {vs[i]: vs[i] * (1 + c * vs[j] ** k)}, "h": case.h}
    if kind == "linear":
        A = op[1]
        if any(x != 0 for x in case.h):
            return None
        return {
            "map": {vs[i]: sum(A[i][j] * vs[j] for j in range(case.n)) for i in range(case.n)},
            "h": case.h,
        }
    raise ValueError(kind)


def _draw_coord(rng, case: Case, kind: str):
    n = case.n
    if kind == "perm":
        p = list(range(n))
        while p == list(range(n)):
            rng.shuffle(p)
        return ("perm", tuple(p))
    if kind == "scale":
        return ("scale", tuple(rng.choice(SCALES) if rng.random() < 0.7 else 1 for _ in range(n)))
    if kind == "shear":
        free = [i for i in range(n) if case.h[i] == 0]
        if not free:
            return None
        i = rng.choice(free)
        j = rng.choice([j for j in range(n) if j != i])
        return ("shear", i, j, rng.choice((1, 1, 2, 2, 3)), rng.choice(SMALL))
    if kind == "unitshear":
        i = rng.randrange(n)
        return ("unitshear", i, rng.randrange(n), rng.choice((1, 1, 2)), rng.choice(SMALL))
    if kind == "linear":
        if any(x != 0 for x in case.h):
            return None
        for _ in range(50):
            if rng.random() < 0.6:  # near the identity: one or two elementary operations
                A = sp.eye(n)
                for _ in range(rng.randint(1, 2)):
                    i, j = rng.sample(range(n), 2)
                    E = sp.eye(n)
                    E[i, j] = rng.choice((-1, 1, 2))
                    A = A * E
            else:
                A = sp.Matrix(n, n, lambda i, j: rng.choice((-1, 0, 0, 1, 1, 2)))
            if A.det() != 0:
                return ("linear", tuple(tuple(int(A[i, j]) for j in range(n)) for i in range(n)))
        return None
    raise ValueError(kind)


def apply_coords(case: Case, ops) -> Case | None:
    c = case
    for op in ops:
        m = _coord_map(c, op)
        if m is None:
            return None
        gens = _subs(c, m["map"])
        if gens is None:
            return None
        c = Case(gens, c.n, m["h"])
    return c


def _describe_ops(ops) -> str:
    out = []
    for op in ops:
        if op[0] == "perm":
            out.append(f"permutation x_i ↦ x_{{p(i)}}, p = {op[1]}")
        elif op[0] == "scale":
            out.append(f"scaling x_i ↦ c_i x_i, c = {[str(c) for c in op[1]]}")
        elif op[0] == "shear":
            out.append(f"shear {NAMES[op[1]]} ↦ {NAMES[op[1]]} + ({op[4]})·{NAMES[op[2]]}^{op[3]}")
        elif op[0] == "unitshear":
            out.append(f"{NAMES[op[1]]} ↦ {NAMES[op[1]]}·(1 + ({op[4]})·{NAMES[op[2]]}^{op[3]})")
        elif op[0] == "linear":
            out.append(f"linear x ↦ A x, A = {op[1]}")
    return "; ".join(out)


class CoordRelation:
    def __init__(self, name: str, kinds: tuple[str, ...], chain: bool = False):
        self.name, self.kinds, self.chain = name, kinds, chain

    def draw(self, rng, case: Case):
        if not self.chain:
            op = _draw_coord(rng, case, self.kinds[0])
            return None if op is None else (op,)
        ops, c = [], case
        for _ in range(rng.randint(2, 3)):
            kinds = [k for k in self.kinds if not (k == "linear" and any(x != 0 for x in c.h))]
            op = _draw_coord(rng, c, rng.choice(kinds))
            if op is None:
                continue
            c2 = apply_coords(c, [op])
            if c2 is None:
                continue
            ops.append(op)
            c = c2
        return tuple(ops) if len(ops) >= 2 else None

    def apply(self, case: Case, params, other=None) -> Check | None:
        new = apply_coords(case, params)
        if new is None:
            return None
        return Check(
            [case_call(case), case_call(new)],
            lambda v: (v[0], v[1]),
            ("base ideal", "transformed ideal"),
            _describe_ops(params),
        )


class Recombine:
    name = "recombine"

    def draw(self, rng, case: Case):
        g = len(case.gens)
        mode = rng.choice(("add", "add", "redundant", "unit", "scalegen"))
        if mode in ("add",) and g < 2:
            mode = rng.choice(("redundant", "unit", "scalegen"))

        def mono():
            return rng.choice(SMALL) * (
                _monomial(rng, case.vars, rng.randint(1, 2)) if rng.random() < 0.6 else 1
            )

        if mode == "add":
            a, b = rng.sample(range(g), 2)
            return ("add", a, b, mono())
        if mode == "redundant":
            return ("redundant", tuple(mono() for _ in range(g)))
        if mode == "unit":
            return (
                "unit",
                rng.randrange(g),
                rng.choice(SMALL) * _monomial(rng, case.vars, rng.randint(1, 2)),
            )
        return ("scalegen", rng.randrange(g), rng.choice(SCALES))

    def apply(self, case: Case, params, other=None) -> Check | None:
        gens = list(case.gens)
        mode = params[0]
        if mode == "add":
            _, a, b, q = params
            if max(a, b) >= len(gens):
                return None
            gens[a] = sp.expand(gens[a] + q * gens[b])
            note = f"f{a + 1} ↦ f{a + 1} + ({q})·f{b + 1}"
        elif mode == "redundant":
            qs = params[1]
            if len(qs) != len(gens):
                return None
            gens.append(sp.expand(sum(q * f for q, f in zip(qs, gens))))
            note = f"redundant generator Σ q_i f_i, q = {[str(q) for q in qs]}"
        elif mode == "unit":
            _, a, u = params
            if a >= len(gens):
                return None
            gens[a] = sp.expand((1 + u) * gens[a])
            note = f"f{a + 1} ↦ (1 + {u})·f{a + 1}"
        else:
            _, a, c = params
            if a >= len(gens):
                return None
            gens[a] = sp.expand(c * gens[a])
            note = f"f{a + 1} ↦ {c}·f{a + 1}"
        if all(g == 0 for g in gens) or any(
            len(sp.Add.make_args(g)) > MAX_TERMS_VARIANT for g in gens
        ):
            return None
        new = Case(tuple(gens), case.n, case.h)
        return Check(
            [case_call(case), case_call(new)],
            lambda v: (v[0], v[1]),
            ("base ideal", "recombined ideal"),
            note,
        )


class Squares:
    name = "squares"

    def draw(self, rng, case: Case):
        return (tuple(rng.choice((1, 1, 1, 2, 3, R(1, 2))) for _ in case.gens), rng.random() < 0.5)

    def apply(self, case: Case, params, other=None) -> Check | None:
        cs, expand = params
        if len(cs) != len(case.gens):
            cs = (1,) * len(case.gens)
        K = sum(c * f**2 for c, f in zip(cs, case.gens))
        if expand:
            K = sp.expand(K)
            if len(sp.Add.make_args(K)) > 4 * MAX_TERMS_VARIANT:
                return None
        call = Call("poly", (K,), case.n, case.h)
        return Check(
            [case_call(case), call],
            lambda v: (v[0], v[1]),
            ("from_ideal", "from_polynomial(Σ c_i f_i²)"),
            f"c = {[str(c) for c in cs]}, expanded = {expand}",
        )


def _shift(case: Case, by: int) -> Case:
    m = {SYMS[i]: SYMS[i + by] for i in range(case.n)}
    return Case(tuple(g.subs(m, simultaneous=True) for g in case.gens), case.n, case.h)


def _sum_val(a: Val, b: Val) -> Val:
    exact = a.exact and b.exact
    return Val(a.lo + b.lo, a.hi + b.hi, exact, a.mult + b.mult - 1 if exact else None)


def _prod_val(a: Val, b: Val) -> Val:
    exact = a.exact and b.exact
    if exact:
        lam = min(a.lo, b.lo)
        m = a.mult + b.mult if a.lo == b.lo else (a.mult if a.lo < b.lo else b.mult)
        return Val(lam, lam, True, m)
    return Val(min(a.lo, b.lo), min(a.hi, b.hi), False, None)


class Blocks:
    """K(x) + K(y) or K(x)·K(y) on disjoint variables; ``other`` is a second small case."""

    def __init__(self, name: str, mode: str):
        self.name, self.mode = name, mode

    def draw(self, rng, case: Case):
        return ("poly" if (self.mode == "prod" and rng.random() < 0.3) else "ideal",)

    def apply(self, case: Case, params, other: Case | None = None) -> Check | None:
        if other is None or case.n + other.n > len(SYMS):
            return None
        o = _shift(other, case.n)
        n = case.n + other.n
        h = case.h + o.h
        if self.mode == "sum":
            comb = Call("ideal", case.gens + o.gens, n, h)
            note = "⟨F(x)⟩ + ⟨G(y)⟩: λ = λ1 + λ2, m = m1 + m2 − 1"
            fn = lambda v: (v[2], _sum_val(v[0], v[1]))  # noqa: E731
        else:
            if params[0] == "poly":
                K = sp.expand(sum(f**2 for f in case.gens) * sum(g**2 for g in o.gens))
                if len(sp.Add.make_args(K)) > 6 * MAX_TERMS_VARIANT:
                    return None
                comb = Call("poly", (K,), n, h)
            else:
                if len(case.gens) * len(o.gens) > 4:
                    return None
                comb = Call(
                    "ideal", tuple(sp.expand(f * g) for f in case.gens for g in o.gens), n, h
                )
            note = "K1(x)·K2(y): λ = min, m = m1 + m2 if λ1 = λ2 else m of the min"
            fn = lambda v: (v[2], _prod_val(v[0], v[1]))  # noqa: E731
        return Check(
            [case_call(case), Call("ideal", other.gens, other.n, other.h), comb],
            fn,
            ("combined", f"{self.mode} rule on the two blocks"),
            note,
        )


class Mixed:
    """A coordinate change (one op) and then a recombination of the generators."""

    name = "mixed"

    def draw(self, rng, case: Case):
        kinds = ["perm", "scale", "shear", "unitshear"] + (
            ["linear"] if all(x == 0 for x in case.h) else []
        )
        op = _draw_coord(rng, case, rng.choice(kinds))
        if op is None:
            return None
        new = apply_coords(case, [op])
        if new is None:
            return None
        return (op, Recombine().draw(rng, new))

    def apply(self, case: Case, params, other=None) -> Check | None:
        op, rec = params
        new = apply_coords(case, [op])
        if new is None:
            return None
        chk = Recombine().apply(new, rec)
        if chk is None:
            return None
        return Check(
            [case_call(case), chk.calls[1]],
            lambda v: (v[0], v[1]),
            ("base ideal", "transformed + recombined"),
            f"{_describe_ops([op])}; then {chk.note}",
        )


RELATIONS = {
    "mixed": Mixed(),
    "perm": CoordRelation("perm", ("perm",)),
    "scale": CoordRelation("scale", ("scale",)),
    "shear": CoordRelation("shear", ("shear",)),
    "unitshear": CoordRelation("unitshear", ("unitshear",)),
    "recombine": Recombine(),
    "squares": Squares(),
    "linear": CoordRelation("linear", ("linear",)),
    "chain": CoordRelation("chain", ("perm", "scale", "shear", "unitshear", "linear"), chain=True),
    "blocksum": Blocks("blocksum", "sum"),
    "blockprod": Blocks("blockprod", "prod"),
}
REL_WEIGHTS = {
    "mixed": 2,
    "perm": 1,
    "scale": 1,
    "shear": 2,
    "unitshear": 1,
    "recombine": 2,
    "squares": 1.5,
    "linear": 1.5,
    "chain": 2,
    "blocksum": 0.7,
    "blockprod": 0.7,
}


# ----------------------------------------------------------------------------- comparison


def compare(a: Val, b: Val) -> str | None:
    """None when consistent, else a description of the violation."""
    if a.exact and b.exact:
        if a.lo != b.lo or a.mult != b.mult:
            return f"exact values differ: ({a.lo}, m={a.mult}) vs ({b.lo}, m={b.mult})"
        return None
    if a.exact and not (b.lo <= a.lo <= b.hi):
        return f"exact λ={a.lo} outside the other side's bounds [{b.lo}, {b.hi}]"
    if b.exact and not (a.lo <= b.lo <= a.hi):
        return f"exact λ={b.lo} outside the other side's bounds [{a.lo}, {a.hi}]"
    if not a.exact and not b.exact and (a.hi < b.lo or b.hi < a.lo):
        return f"disjoint bounds [{a.lo}, {a.hi}] vs [{b.lo}, {b.hi}]"
    return None


def _order(e: sp.Expr, vs) -> int:
    return min(sum(m) for m in sp.Poly(e, *vs).monoms())


def sanity(call: Call, out: Outcome) -> str | None:
    """Per-result checks: λ ≤ Σ(h+1)/(2·ord) and m ≤ n."""
    if out.status != "ok":
        return None
    v = out.val
    vs = SYMS[: call.n]
    if call.kind == "ideal":
        ords = [_order(g, vs) for g in call.exprs if g != 0]
        d2 = 2 * min(ords) if ords else 2
    else:
        d2 = _order(call.exprs[0], vs)
    cap = sum(h + 1 for h in call.h) / d2
    if v.lo > cap:
        return f"λ ≥ {v.lo} exceeds the cap Σ(h_i+1)/ord(K) = {cap}"
    if v.exact and v.mult > call.n:
        return f"m = {v.mult} exceeds the number of variables {call.n}"
    return None


# ----------------------------------------------------------------------------- shrinking


def _terms(e):
    return list(sp.Add.make_args(sp.expand(e)))


def shrink_candidates(case: Case):
    """Smaller cases, roughly most-shrinking first."""
    g = list(case.gens)
    if len(g) > 1:
        for i in range(len(g)):
            yield Case(tuple(g[:i] + g[i + 1 :]), case.n, case.h)
    for i, f in enumerate(g):
        ts = _terms(f)
        if len(ts) > 1:
            for j in range(len(ts)):
                nf = sp.Add(*(ts[:j] + ts[j + 1 :]))
                yield Case(tuple([*g[:i], nf, *g[i + 1 :]]), case.n, case.h)
    for k in range(case.n):
        if case.h[k] != 0:
            yield Case(case.gens, case.n, (*case.h[:k], sp.Integer(0), *case.h[k + 1 :]))
    for i, f in enumerate(g):
        ts = _terms(f)
        for j, t in enumerate(ts):
            c, m = t.as_coeff_Mul()
            if c not in (1, -1):
                nt = (1 if c > 0 else -1) * m
                yield Case(
                    tuple([*g[:i], sp.Add(*([*ts[:j], nt, *ts[j + 1 :]])), *g[i + 1 :]]),
                    case.n,
                    case.h,
                )
            for v in case.vars:
                dv = sp.degree(m, v)
                if dv > 0 and sp.Poly(m, *case.vars).total_degree() > 1:
                    nt = c * m / v
                    yield Case(
                        tuple([*g[:i], sp.Add(*([*ts[:j], nt, *ts[j + 1 :]])), *g[i + 1 :]]),
                        case.n,
                        case.h,
                    )


def evaluate(runner: Runner, rel, case: Case, params, other, timeout=None):
    """(check, outcomes, violation) for one relation instance; violation None if consistent or
    not comparable."""
    chk = rel.apply(case, params, other)
    if chk is None:
        return None, None, None
    outs = [runner.run(c, timeout=timeout, record=timeout is None) for c in chk.calls]
    if any(o.status != "ok" for o in outs):
        return chk, outs, None
    a, b = chk.combine([o.val for o in outs])
    return chk, outs, compare(a, b)


def shrink(runner: Runner, rel, case: Case, params, other, seconds: float, timeout: float):
    t_end = time.time() + seconds
    best = case
    progress = True
    while progress and time.time() < t_end:
        progress = False
        for cand in shrink_candidates(best):
            if time.time() >= t_end:
                break
            if not cand.gens or any(g == 0 for g in cand.gens):
                continue
            _chk, _outs, viol = evaluate(runner, rel, cand, params, other, timeout)
            if viol is not None:
                best, progress = cand, True
                break
    return best


# ----------------------------------------------------------------------------- reporting


def snippet(chk: Check, rel_name: str, outs: list[Outcome], viol: str) -> str:
    n = max(c.n for c in chk.calls)
    lines = [
        "import sympy as sp",
        "import rlct",
        "",
        f"{', '.join(NAMES[:n])}{',' if n == 1 else ''} = sp.symbols({' '.join(NAMES[:n])!r})",
    ]
    names = [f"r{i}" for i in range(len(chk.calls))]
    for nm, c in zip(names, chk.calls):
        lines.append(c.code(nm))
    lines.append("for r in (" + ", ".join(names) + ("," if len(names) == 1 else "") + "):")
    lines.append("    print(r.exact, r.lam, r.mult, r.lower, r.upper, '|', r.method[:120])")
    lines.append(f"# relation {rel_name}: {chk.note}")
    if len(chk.calls) == 3:
        lines.append(
            "# r0, r1: the two blocks (r1 in its own variables a, b, ...); r2: the combined ideal"
        )
    lines.append(f"# got: {' | '.join(str(o.val) for o in outs)}")
    lines.append(f"# violation: {viol}")
    return "\n".join(lines)


def crash_snippet(call: Call) -> str:
    return "\n".join(
        [
            "import sympy as sp",
            "import rlct",
            "",
            f"{', '.join(NAMES[: call.n])}{',' if call.n == 1 else ''} = "
            f"sp.symbols({' '.join(NAMES[: call.n])!r})",
            call.code("r"),
            "print(r)",
        ]
    )


def _case_dict(case: Case) -> dict:
    return {
        "gens": [str(g) for g in case.gens],
        "vars": list(NAMES[: case.n]),
        "h": [str(x) for x in case.h],
    }


def _parse_range(s: str) -> tuple[int, int]:
    if "-" in s:
        lo, hi = s.split("-")
        return int(lo), int(hi)
    return int(s), int(s)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--max-seconds", type=float, default=600.0, help="overall budget")
    ap.add_argument("--timeout", type=float, default=20.0, help="per rlct call, seconds")
    ap.add_argument("--vars", default="2-3", help="number of variables, e.g. 2-3 or 4")
    ap.add_argument("--relations", default=",".join(RELATIONS))
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--checks-per-case", type=int, default=3)
    ap.add_argument("--shrink-seconds", type=float, default=120.0)
    ap.add_argument("--shrink-timeout", type=float, default=10.0)
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--fresh", action="store_true", help="overwrite the findings file")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)

    rng = random.Random(args.seed)
    vlo, vhi = _parse_range(args.vars)
    rels = [r for r in args.relations.split(",") if r]
    fams = [f for f in args.families.split(",") if f]
    for r in rels:
        if r not in RELATIONS:
            ap.error(f"unknown relation {r}")
    for f in fams:
        if f not in FAMILIES:
            ap.error(f"unknown family {f}")
    runner = Runner(args.timeout)
    st: Counter = Counter()
    findings: list[dict] = []
    signatures: Counter = Counter()
    t_start = time.time()
    deadline = t_start + args.max_seconds

    def log(msg):
        if not args.quiet:
            print(f"[{time.time() - t_start:7.1f}s] {msg}", flush=True)

    case_no = 0
    for case_no in range(args.cases):
        if time.time() >= deadline:
            log("overall budget spent")
            break
        n = rng.randint(vlo, vhi)
        fam, case = draw_case(rng, n, fams)
        st["cases"] += 1
        st[f"family_{fam}"] += 1
        base = runner.run(case_call(case))
        if base.status != "ok":
            st[f"base_{base.status}"] += 1
            if base.status == "crash":
                findings.append(
                    {
                        "kind": "crash",
                        "family": fam,
                        "case": _case_dict(case),
                        "error": base.error,
                        "reproducer": crash_snippet(case_call(case)),
                    }
                )
                log(f"CRASH on base {case.gens}: {base.error.splitlines()[0]}")
            continue
        s = sanity(case_call(case), base)
        if s:
            findings.append(
                {
                    "kind": "sanity",
                    "family": fam,
                    "case": _case_dict(case),
                    "value": base.val.to_dict(),
                    "method": base.method[:400],
                    "violation": s,
                    "reproducer": crash_snippet(case_call(case)),
                }
            )
            log(f"SANITY {s} on {case}")
        log(
            f"case {case_no} [{fam}] n={n} {list(map(str, case.gens))} h={list(map(str, case.h))}"
            f" -> {base.val} ({base.seconds:.1f}s)"
        )
        avail = [r for r in rels]
        w = [REL_WEIGHTS[r] for r in avail]
        for _ in range(args.checks_per_case):
            if time.time() >= deadline:
                break
            name = rng.choices(avail, w)[0]
            rel = RELATIONS[name]
            params = rel.draw(rng, case)
            if params is None:
                continue
            other = None
            if name in ("blocksum", "blockprod"):
                n2 = rng.randint(1, 2)
                if case.n + n2 > 5 + (vhi > 4):
                    continue
                _, other = (
                    draw_case(rng, max(n2, 2), fams)
                    if n2 >= 2
                    else (
                        None,
                        Case(
                            (SYMS[0] ** rng.randint(1, 3) * (1 + rng.choice((0, 1)) * SYMS[0]),),
                            1,
                            _prior(rng, 1),
                        ),
                    )
                )
            chk, outs, viol = evaluate(runner, rel, case, params, other)
            if chk is None:
                st["checks_skipped"] += 1
                continue
            if any(o.status != "ok" for o in outs):
                st["checks_incomplete"] += 1
                for c, o in zip(chk.calls, outs):
                    if o.status == "crash":
                        key = ("crash", o.error.splitlines()[0][:80])
                        signatures[key] += 1
                        if signatures[key] <= 3:
                            findings.append(
                                {
                                    "kind": "crash",
                                    "relation": name,
                                    "family": fam,
                                    "error": o.error,
                                    "reproducer": crash_snippet(c),
                                }
                            )
                        log(f"CRASH ({name}): {o.error.splitlines()[0]}")
                continue
            st["pairs"] += 1
            st[f"pairs_{name}"] += 1
            a, b = chk.combine([o.val for o in outs])
            kind = (
                "both_exact"
                if a.exact and b.exact
                else ("one_exact" if a.exact or b.exact else "neither_exact")
            )
            st[kind] += 1
            for c, o in zip(chk.calls[1:], outs[1:]):
                s = sanity(c, o)
                if s:
                    findings.append(
                        {
                            "kind": "sanity",
                            "relation": name,
                            "value": o.val.to_dict(),
                            "method": o.method[:400],
                            "violation": s,
                            "reproducer": crash_snippet(c),
                        }
                    )
                    log(f"SANITY {s}")
            if viol is None:
                continue
            st["disagreements"] += 1
            sig = (name, viol.split(":")[0], outs[0].method[:50], outs[-1].method[:50])
            signatures[sig] += 1
            log(
                f"DISAGREEMENT ({name}) {viol}\n    {chk.note}\n    "
                + "\n    ".join(
                    f"{c.code('r')} -> {o.val} [{o.method[:100]}]" for c, o in zip(chk.calls, outs)
                )
            )
            entry = {
                "kind": "disagreement",
                "relation": name,
                "family": fam,
                "note": chk.note,
                "violation": viol,
                "case": _case_dict(case),
                "values": [o.val.to_dict() for o in outs],
                "methods": [o.method[:600] for o in outs],
                "open_conditions": [o.conditions for o in outs],
                "reproducer": snippet(chk, name, outs, viol),
            }
            if signatures[sig] <= 2 and args.shrink_seconds > 0 and time.time() < deadline:
                small = shrink(
                    runner,
                    rel,
                    case,
                    params,
                    other,
                    min(args.shrink_seconds, max(0.0, deadline - time.time())),
                    args.shrink_timeout,
                )
                if small != case:
                    chk2, outs2, viol2 = evaluate(
                        runner, rel, small, params, other, args.shrink_timeout
                    )
                    if viol2 is not None:
                        entry["shrunk"] = {
                            "case": _case_dict(small),
                            "violation": viol2,
                            "values": [o.val.to_dict() for o in outs2],
                            "methods": [o.method[:600] for o in outs2],
                            "reproducer": snippet(chk2, name, outs2, viol2),
                        }
                        log(
                            f"  shrunk to {list(map(str, small.gens))} h={list(map(str, small.h))}:"
                            f" {viol2}"
                        )
            findings.append(entry)

    wall = time.time() - t_start
    st.update({k: v for k, v in runner.stats.items()})
    timeouts = [e for e in runner.events if e["kind"] == "timeout"]
    refusals = [e for e in runner.events if e["kind"] == "refused"]
    summary = {
        "seed": args.seed,
        "vars": args.vars,
        "cases_requested": args.cases,
        "cases_run": st["cases"],
        "wall_seconds": round(wall, 1),
        "pairs_compared": st["pairs"],
        "both_exact": st["both_exact"],
        "one_exact": st["one_exact"],
        "neither_exact": st["neither_exact"],
        "disagreements": st["disagreements"],
        "crashes": sum(1 for f in findings if f["kind"] == "crash"),
        "sanity_violations": sum(1 for f in findings if f["kind"] == "sanity"),
        "timeouts": len(timeouts),
        "refusals": len(refusals),
        "calls": st["calls"],
        "checks_incomplete": st["checks_incomplete"],
        "checks_skipped": st["checks_skipped"],
        "per_relation": {k[6:]: v for k, v in st.items() if k.startswith("pairs_")},
        "per_family": {k[7:]: v for k, v in st.items() if k.startswith("family_")},
    }
    print("\n== fuzz_rlct summary ==")
    for k, v in summary.items():
        print(f"  {k}: {v}")
    for f in findings:
        print(
            f"  FINDING {f['kind']} {f.get('relation', '')}: "
            f"{f.get('violation') or f.get('error', '').splitlines()[0]}"
        )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    data = {"runs": []}
    if out.exists() and not args.fresh:
        try:
            data = json.loads(out.read_text())
        except (json.JSONDecodeError, OSError):
            data = {"runs": []}
    data["runs"].append(
        {
            "args": vars(args),
            "summary": summary,
            "findings": findings,
            "timeouts": timeouts,
            "refusals": refusals,
        }
    )
    out.write_text(json.dumps(data, indent=1, ensure_ascii=False))
    print(f"  findings written to {out}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
