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
# # Exact learning coefficients with `rlct`
#
# The learning coefficient λ of K ≥ 0 at a zero w* (prior φ) is the real log canonical threshold:
# the largest pole of ζ(z) = ∫ K(w)^z φ(w) dw sits at z = −λ, with order m. `rlct` returns λ as a
# sympy `Rational` together with the conditions it rests on, and refuses to call a value exact
# when a condition fails or cannot be decided.

# %%
import matplotlib.pyplot as plt
import sympy as sp

import rlct

x, y = sp.symbols("x y")

# %% [markdown]
# ## 1. Normal crossing
# K = Π w_j^(2k_j) with prior Π |w_j|^(h_j): λ = min_j (h_j+1)/(2k_j), m = number of minimisers.
# For K = w1² w2⁴ w3⁴: the ratios are 1/2, 1/4, 1/4, so λ = 1/4 with m = 2.

# %%
r = rlct.normal_crossing([1, 2, 2])
print(r)
assert (r.lam, r.mult) == (sp.Rational(1, 4), 2)

# A prior |w2|² raises w2's ratio to 3/4: then w3 alone attains 1/4.
r = rlct.normal_crossing([1, 2, 2], h=[0, 2, 0])
print(r)
assert (r.lam, r.mult) == (sp.Rational(1, 4), 1)

# %% [markdown]
# ## 2. A Newton polyhedron
# K = x⁴ + x²y² + y⁶. Its Newton polyhedron P = conv{(4,0), (2,2), (0,6)} + R²₊ has two compact
# edges. The diagonal s·(1,1) first meets P at t = 2, at the vertex (2,2) where both edges meet, so
# λ = 1/t = 1/2 and m = codim of that face = 2. Every face polynomial (x⁴ + x²y², x²y² + y⁶ and the
# vertices) is positive on the real torus, so the value is exact.

# %%
a = rlct.newton_analysis(x**4 + x**2 * y**2 + y**6, (x, y))
print(a.result)
print("t =", a.distance, "; face at t·τ:", a.face.points, "dimension", a.face.dim)

verts = sorted(a.polyhedron.vertices)  # (0,6), (2,2), (4,0)
xs, ys = zip(*verts)
fig, ax = plt.subplots(figsize=(4, 4))
ax.fill([0, *xs, 7, 7], [7, *ys, 0, 7], alpha=0.2, label="P(K)")
ax.plot(xs, ys, "o-", label="compact faces")
ax.plot([0, 0], [ys[0], 7], "C1--", label="non-compact faces")
ax.plot([xs[-1], 7], [0, 0], "C1--")
ax.plot([0, 4], [0, 4], "k:", label="s·τ, τ = (1, 1)")
ax.plot([float(a.distance)], [float(a.distance)], "r*", ms=12, label="t·τ")
ax.set(xlim=(-0.2, 7), ylim=(-0.2, 7), xlabel="exponent of x", ylabel="exponent of y")
ax.legend()
plt.show()
assert (a.result.lam, a.result.mult) == (sp.Rational(1, 2), 2)

# %% [markdown]
# ## 3. A degenerate example, and why it is not claimed exact
# K = (x − y)². Its Newton polyhedron is the triangle conv{(2,0),(1,1),(0,2)} + R²₊ with t = 1, so
# the Newton value would be λ = 1. But the face polynomial of the edge is K itself, which vanishes
# on the torus at x = y ≠ 0: the non-degeneracy condition fails. The true λ is 1/2 (a smooth curve
# of zeros: in the coordinates u = x − y, v = y, K = u²). `rlct` returns only the bounds it can prove.

# %%
r = rlct.from_polynomial((x - y) ** 2, (x, y))
print(r)
assert not r.exact and r.upper == 1 and r.lower <= sp.Rational(1, 2)
assert any(c.status is False for c in r.conditions)

# After the change of coordinates the same K is a monomial and the value is exact:
u, v = sp.symbols("u v")
print(rlct.from_polynomial(u**2, (u, v)))

# %% [markdown]
# ## 4. Reduced rank regression and deep linear networks
# Aoyagi & Watanabe (2005) give λ for y = BAx (A: H×M, B: N×H, true rank r); Aoyagi (2024) for deep
# linear networks. A deep linear network with two layers *is* reduced rank regression, so the two
# closed forms must agree on every shape.

# %%
rows = []
for M in range(1, 6):
    for H in range(1, 6):
        for N in range(1, 6):
            for r_ in range(min(M, N, H) + 1):
                a_ = rlct.reduced_rank_regression(M, N, H, r_)
                b_ = rlct.deep_linear_network([M, H, N], r_)
                rows.append((M, N, H, r_, a_.lam, b_.lam, a_.mult, b_.mult))
disagree = [row for row in rows if row[4] != row[5] or row[6] != row[7]]
print(f"{len(rows)} shapes checked, {len(disagree)} disagreements")
assert not disagree
print(rlct.reduced_rank_regression(4, 4, 3, 1))
