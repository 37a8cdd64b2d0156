"""SGLD on data at a singular true parameter, against the exact target by quadrature.

y = x·w1·w2 + noise with true w1·w2 = 0 and the chains localised at w* = 0 (not a minimum of L_n).
L_n is a function of w through the sufficient statistics (mean x², xy, y²), so the estimator's
exact target at this n, nβ and γ, nβ·(E_β[L_n] − L_n(w*)), is a 2-D quadrature of the same L_n
(``numeric.expected_llc``). Compares the anchored control variate (the default) with the one
centred at w* only (``anchor_every=0``), with the default burn-in (which re-measures the
curvature as the chains spread; with a fixed burn-in of 6,000 steps at the adaptation's ε one
chain of seed 6 diverged at step 10,305) and a fixed number of draws, over seeds. The
integrator is the default (BAOAB at such points) unless ``--integrator lm`` is given.

    python benchmarks/bench_saddle_data.py            # n = 2000, seeds 0-7, 20000 draws
    python benchmarks/bench_saddle_data.py --integrator lm --json /tmp/lm.json
"""

from __future__ import annotations

import argparse
import json
import os
import time

import torch

import numeric


def run(
    n: int, seed: int, anchor_every: int | None, burnin: int | None, draws: int, integrator: str
) -> dict:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, generator=g, dtype=torch.float64)
    y = torch.randn(n, generator=g, dtype=torch.float64)

    def loss_fn(p, batch):
        xb, yb = batch
        return 0.5 * (yb - xb * p["w"][0] * p["w"][1]).square().mean()

    sxx, sxy, syy = (x * x).mean(), (x * y).mean(), (y * y).mean()

    def potential(w: torch.Tensor) -> torch.Tensor:
        u = w[..., 0] * w[..., 1]
        return 0.5 * (syy - 2 * u * sxy + u * u * sxx)

    t0 = time.perf_counter()
    est = numeric.estimate_llc(
        loss_fn,
        {"w": torch.zeros(2, dtype=torch.float64)},
        (x, y),
        num_chains=8,
        seed=seed,
        anchor_every=anchor_every,
        num_burnin=burnin,
        num_draws=draws,
        integrator=integrator,
        progress=False,
    )
    seconds = time.perf_counter() - t0
    ref = numeric.expected_llc(potential, [0.0, 0.0], nbeta=est.nbeta, gamma=est.config.gamma)
    return dict(
        n=n,
        seed=seed,
        anchor_every=est.config.anchor_every,
        integrator=est.config.integrator,
        friction=est.config.friction,
        estimate=est.mean,
        stderr=est.stderr,
        target=ref.value,
        num_burnin=est.config.num_burnin,
        z=(est.mean - ref.value) / est.stderr,
        seconds=seconds,
        findings=[f.code for f in est.diagnostics],
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--burnin", type=int, default=None, help="default: the estimator's rule")
    ap.add_argument("--draws", type=int, default=20_000)
    ap.add_argument("--integrator", default="auto", help="auto (BAOAB here), lm, baoab, euler")
    ap.add_argument("--json", default="benchmarks/out/bench_saddle_data.json")
    args = ap.parse_args()
    torch.set_num_threads(1)
    rows = []
    for anchor_every in (None, 0):
        for seed in range(args.seeds):
            row = run(args.n, seed, anchor_every, args.burnin, args.draws, args.integrator)
            rows.append(row)
            print(json.dumps(row), flush=True)
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(dict(torch=torch.__version__, rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
