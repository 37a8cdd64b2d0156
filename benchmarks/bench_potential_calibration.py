"""Are `estimate_llc_potential`'s error bars honest? z-scores against quadrature, many seeds.

For each potential K at w* (n = 10,000, nβ = n/log n, γ = 1, 8 chains, every other setting at
its default) the estimator runs with seeds 0..S−1, and z = (λ̂ − expected_llc)/stderr is taken
against the exact finite-temperature target (quadrature). Calibrated error bars give mean z ≈ 0
and sd z ≈ 1. Also reported: the smallest ESS of the positions (w_i − w*_i)² over the seeds, the
draws per chain chosen, whether the position-dependent steps were used, the warnings and errors
raised, and the wall time per run (one thread).

    python benchmarks/bench_potential_calibration.py [--seeds 12] [--metric auto|on|off]
        [--only NAME ...] [--json benchmarks/out/bench_potential_calibration.json]
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np
import torch

import numeric
from numeric.potential.reference import expected_llc

POTENTIALS = {
    "w^2": (lambda w: w[..., 0] ** 2, [0.0], "1/2 (1)"),
    "w^4": (lambda w: w[..., 0] ** 4, [0.0], "1/4 (1)"),
    "w^6": (lambda w: w[..., 0] ** 6, [0.0], "1/6 (1)"),
    "(w1-1/2)^2 + 2(w2+3/10)^2": (
        lambda w: (w[..., 0] - 0.5) ** 2 + 2 * (w[..., 1] + 0.3) ** 2,
        [0.5, -0.3],
        "1 (1)",
    ),
    "x^4 + y^6": (lambda w: w[..., 0] ** 4 + w[..., 1] ** 6, [0.0, 0.0], "5/12 (1)"),
    "x^4 + x^2y^2 + y^6": (
        lambda w: w[..., 0] ** 4 + w[..., 0] ** 2 * w[..., 1] ** 2 + w[..., 1] ** 6,
        [0.0, 0.0],
        "1/2 (1)",
    ),
    "w1^2 w2^2": (lambda w: w[..., 0] ** 2 * w[..., 1] ** 2, [0.0, 0.0], "1/2 (2)"),
    "w1^2 w2^4": (lambda w: w[..., 0] ** 2 * w[..., 1] ** 4, [0.0, 0.0], "1/4 (1)"),
    "w1^2 w2^6": (lambda w: w[..., 0] ** 2 * w[..., 1] ** 6, [0.0, 0.0], "1/6 (1)"),
    "w1^2 w2^2 w3^2": (
        lambda w: (w[..., 0] * w[..., 1] * w[..., 2]) ** 2,
        [0.0, 0.0, 0.0],
        "1/2 (3)",
    ),
}


def run(name: str, seeds: int, metric: bool | None) -> dict:
    K, w_star, exact = POTENTIALS[name]
    n = 10_000
    ref = expected_llc(K, w_star, nbeta=n / math.log(n), gamma=1.0)
    z, pos_ess, draws, times, flagged, metric_used = [], [], [], [], 0, 0
    for seed in range(seeds):
        t0 = time.perf_counter()
        est = numeric.estimate_llc_potential(K, w_star, n, num_chains=8, seed=seed, metric=metric)
        times.append(time.perf_counter() - t0)
        z.append((est.mean - ref.value) / est.stderr)
        pos_ess.append(est.slow_ess)
        draws.append(est.config.num_draws)
        flagged += any(f.severity != "info" for f in est.diagnostics)
        metric_used += est.config.preconditioner == "position_dependent"
    zz = np.array(z)
    return {
        "name": name,
        "exact": exact,
        "expected_llc": ref.value,
        "seeds": seeds,
        "z": z,
        "mean_z": float(zz.mean()),
        "sd_z": float(zz.std(ddof=1)),
        "max_abs_z": float(np.abs(zz).max()),
        "min_position_ess": float(min(pos_ess)),
        "draws": [int(min(draws)), int(max(draws))],
        "metric_used": metric_used,
        "flagged": flagged,
        "seconds_per_run": float(np.mean(times)),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=12)
    ap.add_argument("--metric", choices=["auto", "on", "off"], default="auto")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    torch.set_num_threads(1)
    metric = {"auto": None, "on": True, "off": False}[args.metric]
    names = args.only or list(POTENTIALS)
    rows = []
    print(
        "| K | λ (m) | expected_llc | mean z | sd z | max |z| | min position ESS | draws/chain "
        "| position-dependent | flagged | s/run |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        r = run(name, args.seeds, metric)
        rows.append(r)
        print(
            f"| {name} | {r['exact']} | {r['expected_llc']:.4f} | {r['mean_z']:+.2f} | "
            f"{r['sd_z']:.2f} | {r['max_abs_z']:.1f} | {r['min_position_ess']:.0f} | "
            f"{r['draws'][0]}–{r['draws'][1]} | {r['metric_used']}/{r['seeds']} | "
            f"{r['flagged']}/{r['seeds']} | {r['seconds_per_run']:.1f} |",
            flush=True,
        )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"metric": args.metric, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
