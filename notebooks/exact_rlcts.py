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
# ## 3. Degenerate examples: the Newton step gives bounds, the resolution gives λ
# K = (x − y)². Its Newton polyhedron is the triangle conv{(2,0),(1,1),(0,2)} + R²₊ with t = 1, so
# the Newton value would be λ = 1. But the face polynomial of the edge is K itself, which vanishes
# on the torus at x = y ≠ 0: the non-degeneracy condition fails, and the Newton step alone proves
# only bounds. The true λ is 1/2 (a smooth curve of zeros: in the coordinates u = x − y, v = y,
# K = u²). `rlct.from_polynomial` goes on where the Newton step stops: in two variables it resolves
# K by toric charts along the Newton polygon, following the real roots of the face polynomials.

# %%
newton = rlct.newton_analysis((x - y) ** 2, (x, y)).result
print(newton)
assert not newton.exact and newton.upper == 1 and newton.lower <= sp.Rational(1, 2)
assert any(c.status is False for c in newton.conditions)
r = rlct.from_polynomial((x - y) ** 2, (x, y))
print(r)
assert r.exact and (r.lam, r.mult) == (sp.Rational(1, 2), 1)

# %% [markdown]
# **(y − x³)² + x⁸ by hand.** With s = y − x³ (a change that keeps dx dy), K = s² + x⁸, a sum on
# disjoint variables: λ = 1/2 + 1/8 = 5/8, m = 1. The Newton polygon as written has the edge from
# (0, 2) to (6, 0), normal (1, 3): 1/t = (1 + 3)/6 = 2/3, only an upper bound, since its face
# polynomial (y − x³)² vanishes on y = x³. The package's first chart x = u, y = u³v puts that edge
# on E = {u = 0} with the root v = 1 of (v − 1)²; at v = 1 + v' the local function is
# u⁶(v'² + u²) with prior |u|³ (Jacobian u³), whose Newton polygon gives (1·4 + 1·1)/8 = 5/8.

# %%
r = rlct.from_polynomial((y - x**3) ** 2 + x**8, (x, y))
print(r)
assert r.exact and (r.lam, r.mult) == (sp.Rational(5, 8), 1)

# %% [markdown]
# **(x² − 3y²)² by hand.** Over R, x² − 3y² = (x − √3y)(x + √3y); in u = x − √3y, v = x + √3y (a
# linear map) K = u²v², normal crossing: λ = 1/2 with m = 2. The roots ±1/√3 are irrational: the
# package finds them as exact algebraic numbers (the chart x = u, y = uv gives 1 − 3v² on E), and
# at each the branch is smooth and transversal, giving min(2/4, 1/2): both E and the branch
# attain, so m = 2.
#
# **(y² − x⁵)² by hand.** This one is adapted already (the edge's weights (2, 5) are not an
# integer ratio, so no y ↦ y − c·x^k helps). The chart x = u²v, y = u⁵v³ (determinant 2·3 − 1·5 = 1)
# gives y² − x⁵ = u¹⁰v⁵(v − 1): on E, N = 2·10 = 20 and the Jacobian and prior give k + 1 = 2 + 5 =
# 7, so 7/20; the branch v = 1 is smooth with multiplicity 2, giving 1/2 > 7/20. λ = 7/20, m = 1.

# %%
for K, expected in [
    ((x**2 - 3 * y**2) ** 2, (sp.Rational(1, 2), 2)),
    ((y**2 - x**5) ** 2, (sp.Rational(7, 20), 1)),
]:
    r = rlct.from_polynomial(sp.expand(K), (x, y))
    print(K, "→", str(r).splitlines()[0])
    assert r.exact and (r.lam, r.mult) == expected

# %% [markdown]
# In three or more variables the package splits K into blocks on disjoint variables and tries the
# changes x_k ↦ x_k − r(x_{−k}) that the degenerate faces' factors suggest; the substitution is
# recorded, so the claim can be checked by re-running the Newton step on K∘φ. Here
# x' = x + y + z² makes K = x'² + y⁴ + z⁶: λ = 1/2 + 1/4 + 1/6 = 11/12.

# %%
z = sp.Symbol("z")
r = rlct.from_polynomial(sp.expand((x + y + z**2) ** 2 + y**4 + z**6), (x, y, z))
print(r)
assert r.exact and (r.lam, r.mult) == (sp.Rational(11, 12), 1)

# %% [markdown]
# **A singular surface, squared: (xy − z³)².** K's face polynomial (xy − z³)² vanishes on the
# torus, so K is degenerate, and no triangular change helps. But f = xy − z³ is non-degenerate
# *as a hypersurface*: its face polynomials have no singular zero on the torus. A toric resolution
# of f then gives two kinds of pole: the divisors, with λ_N/2 where λ_N = 1/t(f) = 4/3 (the
# diagonal meets the edge (1,1,0)–(0,0,3) at t = 3/4), and the smooth points of the surface
# xy = z³, with 1/2. The smaller wins: λ = 1/2, m = 1. For (x² − y⁴ − z⁶)², λ_N = 11/12 < 1 wins
# instead: λ = 11/24.
#
# **A generator affine in one variable: (x² − y³)² + (y − z²)².** The ideal ⟨x² − y³, y − z²⟩
# equals ⟨y − z², x² − z⁶⟩ (substitute y = z²), and y' = y − z² is a coordinate: λ = 1/2 +
# λ((x² − z⁶)²) = 1/2 + 1/3 = 5/6. `from_polynomial` sees the sum of squares as written.

# %%
for K, expected in [
    ((x * y - z**3) ** 2, (sp.Rational(1, 2), 1)),
    ((x**2 - y**4 - z**6) ** 2, (sp.Rational(11, 24), 1)),
    ((x**2 - y**3) ** 2 + (y - z**2) ** 2, (sp.Rational(5, 6), 1)),
]:
    r = rlct.from_polynomial(K, (x, y, z))
    print(K, "→", r.lam, f"(m = {r.mult}):", r.method)
    assert r.exact and (r.lam, r.mult) == expected


# %% [markdown]
# **A blow-up of the origin: x⁴ + (xy − z²)² = ⟨x², xy − z²⟩.** No face or linear change helps,
# but the tangent cone is simple: the initial forms x² and xy − z² vanish on the projective plane
# only at [0 : 1 : 0]. Blow up the origin. Away from that point K∘π = u⁴·unit with Jacobian |u|²:
# λ_E = 3/4. In the chart of [0 : 1 : 0], x = y·x', z = y·z':
# K = y⁴(x'⁴ + (x' − z'²)²), and x'' = x' − z'² makes it y⁴(x''² + (x'' + z'²)⁴) ≍ y⁴(x''² + z'⁸),
# non-degenerate under the prior |y|²: λ_P = min(3/4, 1/2 + 1/8) = 5/8. So λ = 5/8, m = 1. The
# chart's polynomial, given to the Newton step on its own, confirms λ_P; the package finds the
# point and the chart itself.

# %%
chart = y**4 * (x**2 + (x + z**2) ** 4)  # after x'' = x' − z'², renamed x, y, z
r_chart = rlct.from_polynomial(chart, (x, y, z), (0, 2, 0))
r = rlct.from_ideal([x**2, x * y - z**2], (x, y, z))
print(r_chart.lam, r_chart.method)
print(r)
assert r_chart.exact and r_chart.lam == sp.Rational(5, 8)
assert r.exact and (r.lam, r.mult) == (sp.Rational(5, 8), 1) and "blow-up" in r.method

# %% [markdown]
# **A line of zeros: ⟨xz, yz − x³⟩.** The initial forms xz and yz vanish on the whole line z = 0
# (and at [0 : 0 : 1]), so the points of the exceptional divisor cannot be visited one by one. In
# the chart x = u (y = u·b, z = u·c) the ideal is u²·⟨c, bc − u⟩ = u²·⟨c, u⟩: along the line the
# strict transform is smooth and contains u, K ≍ u⁴(u² + c²) under |u|², and the edge
# (6, 0)–(4, 2) meets t·(3, 1) at t = 3/2: λ = 2/3 at every point of that kind. Only [0 : 1 : 0],
# where the rank of the strict transform's Jacobian drops, is special: there (y = u, x = u·a,
# c' = c − u·a³) the ideal is u²·⟨u·a⁴, c'⟩, and t·(3, 1, 1) meets conv{(6, 8, 0), (4, 0, 2)} + R³₊
# at t = 8/5. So λ = 5/8, m = 1, where Newton alone proves only 1/4 ≤ λ ≤ 2/3.

# %%
special = rlct.from_ideal([x**3 * y**4, x**2 * z], (x, y, z), (2, 0, 0))  # u, a, c' renamed
r = rlct.from_ideal([x * z, y * z - x**3], (x, y, z))
print(special.lam, special.method)
print(r)
assert special.exact and special.lam == sp.Rational(5, 8)
assert r.exact and (r.lam, r.mult) == (sp.Rational(5, 8), 1)

# %% [markdown]
# **A line of zeros inside a wall: ⟨2x²z, −x²z² − xz³⟩ under the prior |z|.** The ideal is
# xz·⟨2x, −xz − z²⟩. In the chart z = u (x = u·a, y = u·b) it is u³·a·⟨2a, −u(a + 1)⟩ under
# |u|³, and its zeros on the divisor are the line a = 0, which lies in the plane that carries the
# factor x: there a and u are not units, so no smooth kind ⟨v, u^j⟩ describes the points. Read
# the generators 2u³a², −u⁴a² − u⁴a in (u, a) with coefficients in Q[b] (none involves b): the
# Newton polygon has the vertices (3, 2) and (4, 1), each generator has one monomial on its edge
# (no zero in the torus), so every point of the line has that polygon and is non-degenerate.
# Under the weights (4, 1) the diagonal of 2Γ reaches the vertex (8, 2) at t = 2: λ = 1/2 with
# m = 2 along the line (`rlct.blowup.walls`). The least λ lies elsewhere, at a special point:
# the blow-up's answer is 2/5, the value Newton's polyhedron gives for the original ideal.

# %%
from rlct.blowup.origin import blow_up_origin  # noqa: E402 (the step itself, to show its kinds)

wall_ideal = [2 * x**2 * z, -(x**2) * z**2 - x * z**3]
prior = (sp.Integer(0), sp.Integer(0), sp.Integer(1))
blown = blow_up_origin([sp.Poly(f, x, y, z) for f in wall_ideal], prior)
for family in blown.families:
    print(family.label, family.lam, family.mult)
assert any(f.wall == "x" and (f.lam, f.mult) == (sp.Rational(1, 2), 2) for f in blown.families)
whole = rlct.from_ideal(wall_ideal, (x, y, z), (0, 0, 1))
newton = rlct.ideal_analysis(wall_ideal, (x, y, z), (0, 0, 1)).result
print(whole)
assert whole.exact and newton.exact and (whole.lam, whole.mult) == (newton.lam, newton.mult)

# %% [markdown]
# **A point that repeats its kind: ⟨x²z, yz − x³⟩.** The blow-up of the origin leaves three
# special points; [0 : 1 : 0] gives 3/5 (`tests/test_rlct_blowup_families.py` derives it), and
# [1 : 0 : 0] is x²·⟨xz, yz − x⟩ under |x|² (chart x, old names). Blowing up that point again
# only brings the same shape back (x²z³·⟨xz, yz − x⟩ at its special point), so blow up the line
# x = z = 0 instead. In the chart x = z·a the ideal is z³a²·⟨za, y − a⟩ under |z|³|a|². Along
# the fibre y = z = 0, at a ≠ 0, y − a is a unit: K ≍ z⁶, λ = 4/6 = 2/3. At a = 0, y' = y − a
# (y carries no weight) gives K ≍ z⁶a⁴(z²a² + y'²), whose Newton polyhedron conv{(6, 0, 8),
# (4, 2, 6)} + R³₊ in (a, y', z) meets t·(3, 1, 4) first at t = 8/5: λ = 5/8. The chart
# z = x·c adds x³·⟨xc, yc − 1⟩ ≍ x³ under |x|³: 2/3. So the point has λ = 5/8 > 3/5, and the
# ideal λ = 3/5, m = 1. `rlct` gets there by its own road: the blow-up of the origin at the
# point, where the line of zeros inside the wall is degenerate for every value of its coordinate
# (its edge polynomial has the root u = c·b), read by the plane resolution with c as a parameter
# (`rlct.plane.along_line`, λ = 9/14 along it), then blow-ups of coordinate lines at its two special
# points (`rlct.blowup.line`).

# %%
from rlct.cascade import _solve_ideal  # noqa: E402 (the point on its own)

point = [sp.Poly(f, x, y, z) for f in (x**3 * z, x**2 * y * z - x**3)]
at_point = _solve_ideal(point, (sp.Integer(2), sp.Integer(0), sp.Integer(0)), 2)
print("[1 : 0 : 0]:", at_point.lam, at_point.mult)
assert at_point.exact and (at_point.lam, at_point.mult) == (sp.Rational(5, 8), 1)
repeated = rlct.from_ideal([x**2 * z, y * z - x**3], (x, y, z))
print(repeated)
assert repeated.exact and (repeated.lam, repeated.mult) == (sp.Rational(3, 5), 1)

# %% [markdown]
# **A weighted blow-up: ⟨x²z − y³, yz − x³⟩.** Its zeros are the z-axis and the curve (t⁴, t⁵, t⁷),
# and both generators are quasi-homogeneous for w = (4, 5, 7) (degrees 15 and 12), so blow up the
# origin with those weights: in the chart x = u⁴, y = u⁵y', z = u⁷z' (|J| = 4|u|¹⁵) the ideal is
# u¹²·⟨y'z' − 1, u³(z' − y'³)⟩ exactly. Off the curve y'z' = 1 the divisor gives 16/24 = 2/3; on
# it, off z' = y'³, the ideal is u¹²·⟨v, u³⟩, K = u²⁴(v² + u⁶) under |u|¹⁵, whose Newton polygon
# meets t·(16, 1) at t = 30/19: λ = 19/30, m = 1. The special points (the curve's point [1 : 1 : 1]
# and the z-axis's [0 : 0 : 1]) give 19/30 again (`tests/test_rlct_blowup_weighted.py` derives
# them). Blow-ups with equal weights do not reach it: before `rlct.blowup.weighted` the package
# proved only 1/4 ≤ λ ≤ 19/30.

# %%
weighted = rlct.from_ideal([x**2 * z - y**3, y * z - x**3], (x, y, z))
print(weighted.lam, weighted.mult, "by", weighted.method.split(" (")[0])
assert weighted.exact and (weighted.lam, weighted.mult) == (sp.Rational(19, 30), 1)

# %% [markdown]
# **Watanabe's tanh network with two hidden units: ⟨ab + cd, ab³ + cd³⟩.** y = a·tanh(bx) +
# c·tanh(dx) against the zero function has K = Σ_k (ab^(2k−1) + cd^(2k−1))² for inputs whose odd
# moments are all non-zero, and the ideal of those generators is ⟨ab + cd, ab³ + cd³⟩ (the fifth
# moment reduces to 0 below). Its zeros contain the whole plane b = d = 0, and blowing up a point
# meets a curve of zeros in RP³, so blow up the plane instead. In the chart d = b·w the ideal is
# b·⟨a + cw, b²(a + cw³)⟩ under |b| (the Jacobian); a' = a + cw is a change of the whole chart
# (Jacobian 1) that leaves b·⟨a', b²·c·w(w² − 1)⟩. At a point w ∉ {−1, 0, 1} of the fibre
# a' = b = c = 0 the ideal is ⟨a'b, b³c⟩ up to a unit: the Newton polyhedron conv{(1, 1, 0),
# (0, 3, 1)} + R³₊ in (a', b, c) meets t·(1, 2, 1) first at t = 3/4 (weights 3/4 and 1/4 on the
# two vertices: t ≥ 3/4, 2t ≥ 3/2, t ≥ 1/4), so λ = 1/(2t) = 2/3, m = 1 (only two coordinates
# tight). At w ∈ {−1, 0, 1} the factor w(w² − 1) contributes one more coordinate to the second
# vertex and the same t, and the chart b = d·b' is the same by symmetry: λ = 2/3, m = 1 (also
# what Aoyagi's 2006 formula for H hidden units gives at H = 2, as we recall it). `rlct` finds
# it by blowing up a = c = 0 (the first centre it tries), reading the fibre by
# `rlct.newton.along_line`.

# %%
a, b, c, d = sp.symbols("a b c d")
tanh_ideal = [a * b + c * d, a * b**3 + c * d**3]
basis = sp.groebner(tanh_ideal, a, b, c, d, order="grevlex")
print("ab⁵ + cd⁵ mod the ideal:", basis.reduce(a * b**5 + c * d**5)[1])
assert basis.reduce(a * b**5 + c * d**5)[1] == 0
tanh_value = rlct.from_ideal(tanh_ideal, (a, b, c, d))
print(tanh_value)
assert tanh_value.exact and (tanh_value.lam, tanh_value.mult) == (sp.Rational(2, 3), 1)

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

# %% [markdown]
# The formula against the exact λ of each network's own ideal, the entries of P(w) − P(w*) at the
# true parameter whose layers are diag(1, …, 1, 0, …, 0) of rank r: every shape with two to eight
# parameters, every rank. Some, such as [1, 2, 2] and [2, 2, 1] at r = 0 (reduced rank regression
# with H = 2 as an ideal) and the eight-parameter networks below, are exact only through the
# blow-up of a coordinate subspace.

# %%
from verification import check_dln_ideals  # noqa: E402

ideals = check_dln_ideals(8)
print(f"{ideals.checked} networks, {ideals.disagreements} disagreements, {ideals.undecided} bounds")
assert (ideals.disagreements, ideals.undecided) == (0, 0) and ideals.checked >= 250
print(rlct.reduced_rank_regression(4, 4, 3, 1))

# %% [markdown]
# Eight parameters: the 2-2-2 network at rank 0, the entries of BA with A and B 2 × 2. Its ideal
# is exact through the blow-up of the coordinate subspace A = 0 (`rlct.blowup.coordinate`):
# in each chart, two triangular changes make it the monomial ideal t·⟨b₀', b₁', b₂·a'', b₃·a''⟩
# under the prior |t|³, whose λ is 3/2 with m = 1, Aoyagi's value.

# %%
A_ = sp.Matrix(2, 2, sp.symbols("a0:4"))
B_ = sp.Matrix(2, 2, sp.symbols("b0:4"))
exact_222 = rlct.from_ideal(list(B_ * A_), [*A_, *B_])
aoyagi_222 = rlct.deep_linear_network([2, 2, 2], 0)
print(exact_222.method, "→ λ =", exact_222.lam, " m =", exact_222.mult)
assert exact_222.exact and (exact_222.lam, exact_222.mult) == (aoyagi_222.lam, aoyagi_222.mult)

# %% [markdown]
# Twelve parameters: the 2-2-2-2 network at rank 0, P = CBA. In chart a₀₀ of the same centre the
# first column becomes t·C·B·(1, a₁₀')ᵀ, and after it the second column leaves t·a''·C·B·e₁ with
# a'' = a₁₁' − a₀₁'a₁₀'. That a'' is *free*: it need not vanish over 0, so the points over 0 are
# not all alike. But every generator is homogeneous in a'' (weight 1, found by an exact linear
# programme, `rlct.algebra.scaling`), so scaling a'' → 0 keeps λ and m, and the chart's origin, in
# the closure of every orbit, has the least λ and the largest m over 0 (semicontinuity). The chart
# is then solved at its origin as an ideal on ten of the twelve variables.

# %%
from verification.closed_forms import dln_ideal  # noqa: E402

exact_2222 = rlct.from_ideal(*dln_ideal([2, 2, 2, 2], 0))
aoyagi_2222 = rlct.deep_linear_network([2, 2, 2, 2], 0)
print(exact_2222.method, "→ λ =", exact_2222.lam, " m =", exact_2222.mult)
assert exact_2222.exact and (exact_2222.lam, exact_2222.mult) == (aoyagi_2222.lam, aoyagi_2222.mult)
print(next(c.statement[:160] for c in exact_2222.conditions if "homogeneous" in c.statement))
