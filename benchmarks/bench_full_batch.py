"""Minibatches heated by their noise against the full batch (``batch_size = n``), with the
defaults otherwise, at the noisy saddle y = x·w1·w2 (w* = 0), against the exact target by
quadrature of the same L_n (``numeric.expected_llc``): the friction each run used, the ESS of
the chains' positions, λ̂, the ``batch_heating`` finding's gain G and the time.

    python benchmarks/bench_full_batch.py                  # n = 2000, seeds 0 and 1
    python benchmarks/bench_full_batch.py --seeds 0,1,2,3 --json /tmp/full_batch.json

Writes benchmarks/out/bench_full_batch.json (or --json).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import torch

import numeric
from numeric.result.llc_estimate import to_plain
from verification.models import product_regression


def row(n: int, seed: int, batch_size: int | None) -> dict:
    prob = product_regression(n, torch.Generator().manual_seed(seed))
    t0 = time.perf_counter()
    est = numeric.estimate_llc(
        prob.loss_fn, prob.params, prob.data, num_chains=8, seed=seed, batch_size=batch_size,
        progress=False,
    )  # fmt: skip
    seconds = time.perf_counter() - t0
    ref = numeric.expected_llc(prob.potential, [0.0, 0.0], nbeta=est.nbeta, gamma=est.config.gamma)
    c = est.config
    return {
        "seed": seed,
        "batch_size": c.batch_size,
        "gradient": c.gradient,
        "friction": c.friction,
        "step_size": c.step_size,
        "num_burnin": c.num_burnin,
        "num_draws": c.num_draws,
        "position_ess": est.slow_ess,
        "llc": est.mean,
        "stderr": est.stderr,
        "target": ref.value,
        "z": (est.mean - ref.value) / est.stderr,
        "findings": [f"{f.code} ({f.severity})" for f in est.diagnostics],
        "batch_heating": [to_plain(f.values) for f in est.diagnostics if f.code == "batch_heating"],
        "seconds": seconds,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--json", default="benchmarks/out/bench_full_batch.json")
    args = ap.parse_args()
    torch.set_num_threads(1)
    rows = []
    for seed in (int(s) for s in args.seeds.split(",")):
        for batch in (None, args.n):
            r = row(args.n, seed, batch)
            print(json.dumps(r), flush=True)
            rows.append(r)
    os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"args": vars(args), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
