"""The degenerate path of from_polynomial / from_ideal reads its inputs as the Newton step does.

rlct.from_polynomial and rlct.from_ideal validate K, the generators, the variables and the prior
once (types, safe parsing of strings, size bounds: rlct.expressions) and hand the validated
polynomials to the plane resolution, the blocks and the changes of coordinates; no string ever
reaches sympy's parser, which evaluates Python code.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy as sp
import sympy.parsing.sympy_parser

import rlct
from rlct.errors import InvalidPriorError, NotPolynomialError, RLCTError, TooLargeError

x, y, z = sp.symbols("x y z", real=True)
R = sp.Rational

# (K as text, K as sympy, variables, λ, m), each degenerate for the Newton step; λ by hand in
# tests/test_degenerate.py: s = y − x³ gives s² + x⁸ (1/2 + 1/8); (x − y)² + z⁴ splits into
# blocks (1/2 + 1/4); x' = x + y + z² gives x'² + y⁴ + z⁶ (1/2 + 1/4 + 1/6).
DEGENERATE = [
    ("(y - x^3)^2 + x^8", (y - x**3) ** 2 + x**8, (x, y), R(5, 8), 1),
    ("(x - y)**2 + z**4", (x - y) ** 2 + z**4, (x, y, z), R(3, 4), 1),
    ("(x + y + z^2)^2 + y^4 + z^6", (x + y + z**2) ** 2 + y**4 + z**6, (x, y, z), R(11, 12), 1),
]


@pytest.fixture
def no_sympy_parser(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make sympy's string parser (what sympify, S and Poly use on a string) fail loudly."""
    calls: list[str] = []

    def refuse(text: str, *args: object, **kwargs: object) -> sp.Expr:
        calls.append(text)
        raise AssertionError(f"sympy's parser was given {text!r}")

    monkeypatch.setattr(sympy.parsing.sympy_parser, "parse_expr", refuse)
    return calls


def test_the_guard_sees_sympify_of_a_string(no_sympy_parser):
    for parse in (sp.sympify, sp.S, lambda t: sp.Poly(t, x)):
        with pytest.raises(AssertionError, match="sympy's parser"):
            parse("x**2")
    assert no_sympy_parser == ["x**2"] * 3


@pytest.mark.parametrize(("text", "K", "variables", "lam", "m"), DEGENERATE)
def test_strings_through_the_degenerate_steps(no_sympy_parser, text, K, variables, lam, m):
    assert not rlct.newton_analysis(text, variables).result.exact
    from_text = rlct.from_polynomial(text, variables)
    assert from_text.exact and (from_text.lam, from_text.mult) == (lam, m)
    # Expanded, K no longer shows its squares: another route (a resolution or a change of
    # coordinates instead of an elimination), the same λ and m.
    expanded = rlct.from_polynomial(sp.expand(K), variables)
    assert (expanded.exact, expanded.lam, expanded.mult) == (True, lam, m)
    assert no_sympy_parser == []


def test_degenerate_ideal_from_strings(no_sympy_parser):
    # ⟨y − x², x³⟩ as text: K = (y − x²)² + x⁶ = s² + x⁶, λ = 1/2 + 1/6; the zero generator "0"
    # is dropped as ideal_analysis drops it.
    r = rlct.from_ideal(["y - x^2", "0", "x**3"], (x, y))
    assert r.exact and (r.lam, r.mult) == (R(2, 3), 1)
    assert r == rlct.from_ideal([y - x**2, x**3], (x, y))
    assert no_sympy_parser == []


def test_one_shot_iterators_are_read_once():
    # The generators, variables and prior are consumed once: a second pass over an iterator
    # would see nothing ("an ideal needs at least one generator").
    r = rlct.from_ideal(iter([x - y]), iter((x, y)), iter([0, 0]))
    assert r.exact and (r.lam, r.mult) == (R(1, 2), 1)
    r = rlct.from_polynomial((y - x**3) ** 2 + x**8, iter((x, y)), iter([1, 0]))
    assert r.exact and (r.lam, r.mult) == (R(3, 4), 1)  # s² + x⁸ under |x|: 1/2 + 2/8


def _payload(marker: Path) -> str:
    return f"__import__('os').system('touch {marker}') or x"


def test_payloads_next_to_degenerate_inputs_are_not_run(tmp_path: Path, no_sympy_parser):
    marker = tmp_path / "pwned"
    payload = _payload(marker)
    degenerate = (y - x**3) ** 2 + x**8
    with pytest.raises(NotPolynomialError, match=r"^f_2\b"):
        rlct.from_ideal([x - y, payload], (x, y))
    with pytest.raises(NotPolynomialError, match=r"^f_1\b"):
        rlct.from_ideal([payload, x - y], (x, y))
    with pytest.raises(InvalidPriorError, match=r"^prior_exponents\[1\]"):
        rlct.from_polynomial(degenerate, (x, y), [0, payload])
    with pytest.raises(NotPolynomialError, match=r"^K\b"):
        rlct.from_polynomial(f"(y - x^3)^2 + x^8 + {payload}", (x, y))
    assert not marker.exists()
    assert no_sympy_parser == []


BAD = [
    ((x - y) ** 2, (x, x), None),
    ((x - y) ** 2, "xy", None),
    ((x - y) ** 2 + 0.5 * x**4, (x, y), None),
    ((x - y) ** 2 + z**2, (x, y), None),
    ((x - y) ** 2, (x, y), [0]),
    ((x - y) ** 2, (x, y), [0, -1]),
    ((x - y) ** 2, (x, y), [0, 0.5]),
    ((x - y) ** 3, (x, y), None),
    (sp.Pow(x - y, 10**6, evaluate=False), (x, y), None),
    ("(x - y)^2 + ", (x, y), None),
    (b"(x - y)**2", (x, y), None),
]


@pytest.mark.parametrize(("K", "variables", "prior"), BAD)
def test_bad_polynomials_fail_as_in_the_newton_step(K, variables, prior):
    """Same error class and message from from_polynomial as from newton_analysis (main's checks),
    for inputs that would otherwise go on to the degenerate steps."""
    with pytest.raises(RLCTError) as newton:
        rlct.newton_analysis(K, variables, prior)
    with pytest.raises(type(newton.value), match=r"^") as full:
        rlct.from_polynomial(K, variables, prior)
    assert str(full.value) == str(newton.value)


@pytest.mark.parametrize(
    ("generators", "variables", "prior"),
    [
        ("x - y", (x, y), None),
        ([], (x, y), None),
        ([0, "0"], (x, y), None),
        ([x - y, x + 1], (x, y), None),
        ([x - y, sp.sin(y)], (x, y), None),
        ([x - y, 0.5 * x], (x, y), None),
        ([x - y], (x, y), [0, -2]),
        ([x - y, sp.Pow(x, 10**6, evaluate=False)], (x, y), None),
        ([x - y] * 1001, (x, y), None),
    ],
)
def test_bad_ideals_fail_as_in_the_newton_step(generators, variables, prior):
    with pytest.raises(RLCTError) as newton:
        rlct.ideal_analysis(generators, variables, prior)
    with pytest.raises(type(newton.value)) as full:
        rlct.from_ideal(generators, variables, prior)
    assert str(full.value) == str(newton.value)


def test_too_large_inputs_are_refused_before_any_degenerate_step():
    with pytest.raises(TooLargeError, match=r"^K\b"):
        rlct.from_polynomial("(x - y)^600", (x, y))
    with pytest.raises(TooLargeError, match=r"^f_1\b"):
        rlct.from_ideal([(x - y + z) ** 300 * (x - y) ** 250], (x, y, z))


def test_a_change_whose_expansion_is_too_large_is_refused_before_expanding():
    # (x − y² − z²)² + x²⁰⁰ has 7 terms; x ↦ x + y² + z² would turn x²⁰⁰ into
    # (x + y² + z²)²⁰⁰, C(202, 2) = 20,301 terms (and 15 more from the rest) > 20,000.
    from rlct.reductions.changes import MAX_CHANGED_TERMS, Substitution

    K = sp.Poly((x - y**2 - z**2) ** 2 + x**200, x, y, z)
    with pytest.raises(TooLargeError, match=r"^K∘φ for φ: x ↦ x \+ y\*\*2 \+ z\*\*2 .* 20316"):
        Substitution(x, -(y**2) - z**2).apply(K)
    assert MAX_CHANGED_TERMS == 20_000
    # x ↦ x + z² is within the bound: K∘φ = (x − y²)² + (x + z²)²⁰⁰ has 3 + 201 terms.
    assert len(Substitution(x, -(z**2)).apply(K).terms()) == 204


def test_the_search_reports_a_refused_change_and_keeps_proven_bounds(monkeypatch):
    # (x + y + z²)² + y⁴ + z⁶ is exact (11/12) only through x ↦ x − y − z², whose K∘φ has
    # 3 terms; with the bound lowered to 2 the change is refused and named, and the result is the
    # Newton step's bounds, which contain 11/12.
    import rlct.reductions.changes

    K = sp.expand((x + y + z**2) ** 2 + y**4 + z**6)
    newton = rlct.newton_analysis(K, (x, y, z)).result
    monkeypatch.setattr(rlct.reductions.changes, "MAX_CHANGED_TERMS", 2)
    r = rlct.from_polynomial(K, (x, y, z))
    assert not r.exact and r.lower <= R(11, 12) <= r.upper
    assert (r.lower, r.upper) == (newton.lower, newton.upper)
    refused = [c for c in r.conditions if "not tried" in c.statement]
    assert refused and all(c.status is None for c in refused)
    assert any("x ↦ x - y - z**2 not tried" in c.statement for c in refused)
    assert all("at most 2 are accepted" in c.statement for c in refused)
