# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Quadratic networks: the paper's closed forms against exact Jacobian ranks
#
# Model (Cullen et al. 2026): f(x) = V σ(Wᵀx), σ(t) = t², W ∈ R^{d×K}, V ∈ R^{p×K}. Output k is
# xᵀQ_k x with Q_k = Σ_j v_kj w_j w_jᵀ, so the loss sees the parameters only through the
# identifiable coordinates Φ(W, V) = (Q_1, …, Q_p) (without data), or through the outputs on the
# data, θ ↦ (f_θ(x_i))_{i,k}, possibly centred across samples (with data).
#
# `rlct.quadratic.llc` decides λ at a point θ* from exact ranks (integer arithmetic in FLINT, no
# floating point):
#
# * always proven: rank J(θ*)/2 ≤ λ ≤ (N − k)/2, with N parameters and k the dimension of a smooth
#   piece of the fibre through θ* (unit scalings, free weights of inactive units);
# * λ = rank/2 exactly (m = 1) when the bounds meet, or when rank J(θ*) equals the generic rank of
#   the class (then the rank is locally constant). The generic rank is computed from ranks modulo
#   random 61-bit primes at random points: always a proven lower bound, certified when it reaches a
#   proven upper bound, and otherwise wrong with probability ≤ 10⁻³⁰ (Schwartz–Zippel);
# * where the rank drops and the network has at most 12 parameters, λ and m of the loss itself:
#   K ≍ Σ g_i² with g_i the identifiable coordinates minus their values at θ*, handed to the exact
#   layer (`rlct.from_ideal`) for at most `search_seconds` (the bounds remain when it runs out).
#
# `rlct.quadratic` also states each closed form of the paper with its hypotheses checked
# exactly at the point, and `check_theorems(d, p, K, X)` compares them with the exact λ at random
# points. Every conclusion below is computed from those tables.

# %%
from collections import defaultdict

import numpy as np
from IPython.display import Markdown, display

import rlct
from rlct.quadratic import (
    check_theorems,
    generic_rank,
    jacobian_rank,
    llc,
    modular_addition_data,
    theorem_4_2,
    theorem_5_1,
    theorem_5_5,
)


def md(text: str) -> None:
    display(Markdown(text))


def md_table(header: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


THEOREMS = [
    "Theorem 4.1", "Theorem 4.2", "Theorem G.5", "Theorem G.6", "Theorem 5.1",
    "Theorem 5.5", "Theorem G.1", "Theorem G.2", "Theorem 5.2", "Corollary 5.3",
]  # fmt: skip
SHORT = {t: t.replace("Theorem ", "").replace("Corollary ", "C") for t in THEOREMS}


def verdict(rec) -> str:
    """✓ / ✗ / ? where the hypotheses hold; (✓) / (✗) / (?) where they fail or are undecided."""
    mark = {True: "✓", False: "✗", None: "?"}[rec.agree]
    return mark if rec.hypotheses_hold is True else f"({mark})"


# %% [markdown]
# ## 1. Three worked examples
#
# **(a) Theorem 4.2 at a point satisfying its hypotheses.** p = 1, d = 3, K = 2, w₁ = e₁,
# w₂ = e₁ + e₂, v = (1, 1). Q = v₁w₁w₁ᵀ + v₂w₂w₂ᵀ has rank ≤ 2, so Φ maps into the hypersurface
# det Q = 0 of Sym(3), of dimension 5: the rank is at most 5, while the theorem claims K(d+p−1) = 6.

# %%
W, V = [[1, 1], [0, 1], [0, 0]], [[1, 1]]
tv = theorem_4_2(W, V)
print(tv)
r = llc(W, V)
print(r)
print("generic rank for (d, p, K) = (3, 1, 2):", generic_rank(3, 1, 2))
assert tv.hypotheses_hold and r.exact and r.lam != tv.lam
md(
    f"All hypotheses of Theorem 4.2 hold here, it claims λ = {tv.lam}, and the exact value is "
    f"λ = {r.lam} (rank {jacobian_rank(W, V)})."
)

# %% [markdown]
# **(b) Theorem 5.1 (NTK) at a rank drop.** d = p = K = 1, θ₀ = 0: the Jacobian (2vw, w²) vanishes,
# so the linearised model has λ = 0. The network itself has K(θ) = (vw²)² = v²w⁴ near 0, a normal
# crossing with λ = min(1/2, 1/4) = 1/4. The ranks alone prove 0 ≤ λ ≤ 1/2 there; the map's
# ideal ⟨v·w²⟩ gives the value itself.

# %%
ntk = theorem_5_1([[0]], [[0]])
net = rlct.normal_crossing([1, 2])
bounds = llc([[0]], [[0]], search_seconds=0)
by_ideal = llc([[0]], [[0]])
print(ntk)
print(net)
print(bounds)
print(by_ideal)
assert bounds.lower <= net.lam <= bounds.upper
assert by_ideal.exact and (by_ideal.lam, by_ideal.mult) == (net.lam, net.mult)
md(
    f"NTK value {ntk.lam}, network λ = {net.lam} ∈ [{bounds.lower}, {bounds.upper}] (ranks), "
    f"= {by_ideal.lam} (the map's ideal): the NTK theorem is about the linearised model, not the "
    "network, wherever the rank drops."
)

# %% [markdown]
# **(c) Theorem 5.5 with an inactive unit.** d = 3, p = 1, w₁ = e₁, w₂ = e₂, v = (1, 0): one active
# unit. Moving v₂ off zero changes Q by v₂w₂w₂ᵀ to first order, so the inactive unit still counts.

# %%
W, V = [[1, 0], [0, 1], [0, 0]], [[1, 0]]
tv = theorem_5_5(W, V)
r = llc(W, V)
print(tv)
print(r)
md(f"Theorem 5.5 claims λ = {tv.lam} (hypotheses hold: {tv.hypotheses_hold}); exact λ = {r.lam}.")

# %% [markdown]
# ## 2. The grid
#
# For each shape, `check_theorems` draws a random integer point (and, for Theorem 5.5, the same point
# with its last unit inactive; for G.1/G.2, a point with biases). Cells: ✓ the claim agrees with the
# exact λ, ✗ it disagrees, ? the exact side only has bounds that contain the claim; in parentheses
# when the theorem's hypotheses fail at that point (so a mismatch there is no counterexample).
# Settings: no data; random integer inputs (n = d + 1 samples, entries in [−3, 3]) with and without
# centring; modular-addition inputs (modulus q, d = 2q, p = q outputs) with and without centring.

# %%
settings: dict[str, list] = {}

rows = []
for d in range(1, 5):
    m = d * (d + 1) // 2
    for p in range(1, 4):
        for K in range(1, m + 2):
            rows += check_theorems(d, p, K)
settings["no data"] = rows

rng = np.random.default_rng(2026)
for centered in (False, True):
    rows = []
    for d in range(1, 4):
        X = rng.integers(-3, 3, size=(d + 1, d), endpoint=True)
        for p in range(1, 3):
            for K in range(1, d * (d + 1) // 2 + 2):
                rows += check_theorems(d, p, K, X, centered)
    settings["random data" + (", centred" if centered else "")] = rows

for centered in (False, True):
    rows = []
    for q, Ks in ((2, range(1, 9)), (3, range(1, 9)), (5, (2, 5, 9, 12))):
        X, _ = modular_addition_data(q)
        for K in Ks:
            rows += check_theorems(2 * q, q, K, X, centered)
    settings["modular addition" + (", centred" if centered else "")] = rows


def grid_table(records) -> str:
    by_shape: dict[tuple, dict] = defaultdict(dict)
    for rec in records:
        by_shape[(rec.d, rec.p, rec.K)][rec.theorem] = rec
    present = [t for t in THEOREMS if any(t in v for v in by_shape.values())]
    out = []
    for shape, recs in by_shape.items():
        lam = recs["Theorem 4.1"].exact_lam
        out.append([*shape, lam, *(verdict(recs[t]) if t in recs else "" for t in present)])
    return md_table(["d", "p", "K", "exact λ", *(SHORT[t] for t in present)], out)


for name, records in settings.items():
    md(f"### {name}\n\n" + grid_table(records))

# %% [markdown]
# ## 3. Which theorems hold where
#
# For every theorem and setting: the number of points where its hypotheses hold, and among those how
# often the claim agrees with the exact λ (✓), contradicts it (✗) or is undecided (?). A ✗ is a
# counterexample to the theorem as stated; the list gives the shapes (d, p, K).

# %%
summary_rows = []
verdicts: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
for name, records in settings.items():
    for t in THEOREMS:
        recs = [r for r in records if r.theorem == t]
        if not recs:
            continue
        held = [r for r in recs if r.hypotheses_hold is True]
        bad = [(r.d, r.p, r.K) for r in held if r.agree is False]
        good = [r for r in held if r.agree is True]
        und = [r for r in held if r.agree is None]
        outside_ok = [r for r in recs if r.hypotheses_hold is not True and r.agree is True]
        verdicts[t]["held"] += held
        verdicts[t]["bad"] += [(name, s) for s in bad]
        summary_rows.append(
            [t, name, len(recs), len(held), len(good), len(bad), len(und), len(outside_ok),
             ", ".join(map(str, bad[:6])) + (" …" if len(bad) > 6 else "")]
        )  # fmt: skip
md(
    md_table(
        ["theorem", "setting", "points", "hyp. hold", "✓", "✗", "?", "✓ outside hyp.", "✗ at"],
        summary_rows,
    )
)

# %%
lines = []
for t in THEOREMS:
    held, bad = verdicts[t]["held"], verdicts[t]["bad"]
    good = [r for r in held if r.agree is True]
    und = len(held) - len(good) - len(bad)
    tail = f"; undecided at {und}" if und else ""
    if not held:
        lines.append(f"- **{t}**: its hypotheses held at none of the points checked.")
    elif not bad:
        lines.append(
            f"- **{t}**: agrees with the exact λ at {len(good)} of the {len(held)} points where its "
            f"hypotheses hold, and is contradicted at none{tail}."
        )
    else:
        where = sorted({n for n, _ in bad})
        lines.append(
            f"- **{t}**: contradicted at {len(bad)} of the {len(held)} points where its hypotheses "
            f"hold (settings: {', '.join(where)}), e.g. (d, p, K) = {bad[0][1]} ({bad[0][0]}); "
            f"agrees at {len(good)}{tail}."
        )
md("### Conclusions (computed)\n\n" + "\n".join(lines))

# %% [markdown]
# ## 4. The generic rank itself
#
# For p = 1 the image of Φ is the set of symmetric matrices of rank ≤ K, of dimension
# Kd − K(K−1)/2 for K ≤ d (all of Sym(d) for K ≥ d). For p ≥ 2 the naive count is
# min(K(d+p−1), p·d(d+1)/2) (parameters minus one scaling per unit, capped by the dimension).
# The cell below compares both with the exact generic rank on a grid and lists the exceptions.

# %%
exceptions, checked = [], 0
for d in range(1, 7):
    m = d * (d + 1) // 2
    for p in range(1, 5):
        for K in range(1, m + 2):
            g = generic_rank(d, p, K)
            if p == 1:
                naive = K * d - K * (K - 1) // 2 if K <= d else m
            else:
                naive = min(K * (d + p - 1), p * m)
            checked += 1
            if g != naive:
                exceptions.append((d, p, K, g, naive))
text = f"Checked {checked} shapes (d ≤ 6, p ≤ 4, K ≤ d(d+1)/2 + 1). "
if not exceptions:
    text += "The counts above match the exact generic rank everywhere."
else:
    text += "Exceptions (d, p, K, exact generic rank, naive count): " + ", ".join(
        map(str, exceptions)
    )
    text += ". Theorem 4.2 at a random point of each exceptional shape:\n\n"
    for d, p, K, _, _ in exceptions:
        rec = {c.theorem: c for c in check_theorems(d, p, K)}["Theorem 4.2"]
        text += (
            f"- (d, p, K) = ({d}, {p}, {K}): claim {rec.formula_lam}, exact λ = {rec.exact_lam}, "
            f"hypotheses hold: {rec.hypotheses_hold}, agree: {rec.agree}\n"
        )
md(text)
