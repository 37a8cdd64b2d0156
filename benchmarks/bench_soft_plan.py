"""Soft directions (0 < nβh < γ + α) scaled at their own curvature where the potential is
quadratic along them (``numeric.plan.soft_whitening``), against the clamp to the softest relevant
curvature it lifts: linear regressions with ``unit`` features of scale 1 and ``soft`` of scale
``scale`` (exactly quadratic, so the Laplace value ½Σ nβh/(nβh + γ) is the exact target), defaults
with 4 chains, nβ = 10⁴, γ = 1; and the same with a quartic 10⁻⁴·Σ(w_j − w*_j)⁴ over the soft
coordinates, which the re-plan must leave clamped.

    python benchmarks/bench_soft_plan.py                   # seeds 0-2, 10 + 10 and 50 + 50
    python benchmarks/bench_soft_plan.py --seeds 0 --json /tmp/soft.json

Writes benchmarks/out/bench_soft_plan.json (or --json).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
import torch

import numeric
import numeric.plan.preconditioner

NBETA = 1e4


def regression(unit: int, soft: int, scale: float, n: int = 5000):
    g = torch.Generator().manual_seed(0)
    scales = torch.tensor([1.0] * unit + [scale] * soft, dtype=torch.float64)
    x = torch.randn(n, unit + soft, generator=g, dtype=torch.float64) * scales
    y = x @ torch.randn(unit + soft, generator=g, dtype=torch.float64)
    y = y + torch.randn(n, generator=g, dtype=torch.float64)
    w_star = torch.linalg.lstsq(x, y[:, None]).solution[:, 0]
    h = np.linalg.eigvalsh((x.T @ x / n).numpy())
    exact = float(0.5 * np.sum(NBETA * h / (NBETA * h + 1.0)))
    return x, y, w_star, exact


def loss_with(w_star: torch.Tensor, unit: int, quartic: float):
    def loss(p, batch):
        v = p["w"]
        fit = 0.5 * ((batch[0] @ v - batch[1]) ** 2).mean()
        return fit + quartic * ((v[unit:] - w_star[unit:]) ** 4).sum()

    return loss


def row(unit: int, soft: int, seed: int, replan: bool, quartic: float) -> dict:
    x, y, w_star, exact = regression(unit, soft, 0.007)
    original = numeric.plan.preconditioner.whiten_quadratic_soft
    if not replan:  # the clamp alone, as before numeric.plan.soft_whitening
        numeric.plan.preconditioner.whiten_quadratic_soft = lambda model, w, info, seed: info
    try:
        t0 = time.perf_counter()
        est = numeric.estimate_llc(
            loss_with(w_star, unit, quartic), {"w": w_star.clone()}, (x, y), nbeta=NBETA,
            num_chains=4, seed=seed, progress=False,
        )  # fmt: skip
        seconds = time.perf_counter() - t0
    finally:
        numeric.plan.preconditioner.whiten_quadratic_soft = original
    c = est.config
    return {
        "features": f"{unit} + {soft}",
        "quartic": quartic,
        "seed": seed,
        "replan": replan,
        "llc": est.mean,
        "stderr": est.stderr,
        "exact_laplace": exact if quartic == 0 else None,
        "z": (est.mean - exact) / est.stderr if quartic == 0 else None,
        "soft_whitened": c.soft_whitened,
        "step_size": c.step_size,
        "num_burnin": c.num_burnin,
        "num_draws": c.num_draws,
        "findings": [f"{f.code} ({f.severity})" for f in est.diagnostics],
        "seconds": seconds,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--json", default="benchmarks/out/bench_soft_plan.json")
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("THREADS", "1")))
    seeds = [int(s) for s in args.seeds.split(",")]
    rows = []
    for unit, soft, quartic in ((10, 10, 0.0), (50, 50, 0.0), (10, 10, 1e-4)):
        for seed in seeds:
            for replan in (False, True):
                rows.append(row(unit, soft, seed, replan, quartic))
                r = rows[-1]
                print(
                    f"{r['features']:>8} q={quartic:g} seed {seed} replan={replan!s:5}: "
                    f"{r['llc']:.3f} ± {r['stderr']:.3f} (exact {r['exact_laplace']}) "
                    f"whitened {r['soft_whitened']}, {r['num_burnin']} + {r['num_draws']} "
                    f"steps, {r['findings']}, {r['seconds']:.1f} s",
                    flush=True,
                )
    os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
    with open(args.json, "w") as fh:
        json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
