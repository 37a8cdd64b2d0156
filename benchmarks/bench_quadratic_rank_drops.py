"""Exact λ at quadratic networks' rank drops (``rlct.quadratic.llc`` through the map's ideal)
against the package's own estimate on the same loss.

For random integer points of at most ``--max-params`` parameters (entries in {−1, 0, 1}, so
ranks often drop) whose λ the ideal search finds exactly, the potential
K(θ) = ‖Φ(θ) − Φ(θ*)‖² (data-free, Φ = (Q_k, r_k, s_k)) is sampled with
``numeric.estimate_llc_potential`` at w* = θ* and n = ``--n``; the estimate is compared with λ
(z = (λ̂ − λ)/se). Writes a table to stdout and JSON to ``benchmarks/out``.

    python benchmarks/bench_quadratic_rank_drops.py --points 12 --seed 0
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

import numeric
from rlct.quadratic import llc, num_parameters
from rlct.quadratic.point import parse_point


def potential(W: np.ndarray, V: np.ndarray, b: np.ndarray | None):
    """K(w) = ‖Φ(w) − Φ(θ*)‖² for w[..., N] ordered W (row-major), V (row-major), b, c."""
    d, K = W.shape
    p = V.shape[0]
    iu = torch.triu_indices(d, d)

    def phi(w: torch.Tensor) -> torch.Tensor:
        Wt = w[..., : d * K].reshape(*w.shape[:-1], d, K)
        Vt = w[..., d * K : d * K + p * K].reshape(*w.shape[:-1], p, K)
        Q = torch.einsum("...kj,...aj,...bj->...kab", Vt, Wt, Wt)[..., iu[0], iu[1]]
        parts = [Q.flatten(-2)]
        if b is not None:
            o = d * K + p * K
            bt, ct = w[..., o : o + K], w[..., o + K : o + K + p]
            r = 2 * torch.einsum("...kj,...j,...aj->...ka", Vt, bt, Wt)
            s = torch.einsum("...kj,...j->...k", Vt, bt**2) + ct
            parts += [r.flatten(-2), s]
        return torch.cat(parts, -1)

    star = [W.ravel(), V.ravel()] + ([b, np.zeros(p)] if b is not None else [])
    w_star = torch.tensor(np.concatenate(star).astype(float), dtype=torch.float64)
    phi_star = phi(w_star)
    return (lambda w: (phi(w) - phi_star).square().sum(-1)), w_star


def draw(rng: np.random.Generator, max_params: int):
    while True:
        d, p, K = (int(x) for x in rng.integers(1, 4, size=3))
        bias = bool(rng.random() < 0.3)
        if num_parameters(d, p, K, bias) <= max_params:
            break
    W = rng.integers(-1, 1, size=(d, K), endpoint=True)
    V = rng.integers(-1, 1, size=(p, K), endpoint=True)
    b = rng.integers(-1, 1, size=K, endpoint=True) if bias else None
    return W, V, b


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-params", type=int, default=10)
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--out", default="benchmarks/out/bench_quadratic_rank_drops.json")
    a = ap.parse_args()
    torch.set_num_threads(1)
    rng = np.random.default_rng(a.seed)
    rows = []
    print("| point (W; V; b) | N | ranks prove | exact λ (m) | λ̂ ± se | z | findings | wall |")
    print("|---|---|---|---|---|---|---|---|")
    while len(rows) < a.points:
        W, V, b = draw(rng, a.max_params)
        bounds = llc(W, V, b=b, search_seconds=0)
        if bounds.exact:
            continue  # no rank drop (or the ranks decide it): not what this measures
        t0 = time.perf_counter()
        exact = llc(W, V, b=b)
        t_exact = time.perf_counter() - t0
        if not exact.exact:
            continue
        K, w_star = potential(W, V, b)
        t0 = time.perf_counter()
        est = numeric.estimate_llc_potential(K, w_star, a.n, num_chains=a.chains, seed=a.seed)
        wall = time.perf_counter() - t0
        z = (est.mean - float(exact.lam)) / est.stderr
        findings = ", ".join(f.code for f in est.diagnostics) or "none"
        point = f"{W.tolist()}; {V.tolist()}" + (f"; {b.tolist()}" if b is not None else "")
        N = len(w_star)
        print(
            f"| {point} | {N} | [{bounds.lower}, {bounds.upper}] | {exact.lam} ({exact.mult}) "
            f"| {est.mean:.3f} ± {est.stderr:.3f} | {z:+.2f} | {findings} | {wall:.0f} s |",
            flush=True,
        )
        parse_point(W, V, b=b)  # the point as rlct read it (validated)
        rows.append(
            dict(
                W=W.tolist(),
                V=V.tolist(),
                b=None if b is None else b.tolist(),
                N=N,
                lower=str(bounds.lower),
                upper=str(bounds.upper),
                lam=str(exact.lam),
                mult=exact.mult,
                exact_seconds=t_exact,
                llc=est.mean,
                stderr=est.stderr,
                z=z,
                findings=[f.code for f in est.diagnostics],
                seconds=wall,
            )
        )
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(dict(args=vars(a), rows=rows), indent=1))


if __name__ == "__main__":
    main()
