"""Issue 62, Cullen et al. Fig. 3 (λ̂ mirrors the validation loss through grokking) with enough
λ̂ values for the rank test to decide.

The notebook's small mode reads λ̂ at 5 checkpoints, where Spearman's ρ cannot reach p < 0.05
unless |ρ| = 1. This runs the same model and training (p = 23, K = 24, AdamW lr 2·10⁻³, weight
decay 0.2, 4,000 steps, seed 0; ``cullen_dynamics.grokking_run``) with λ̂ by the paper's sampler
(``cullen.PAPER_SAMPLER``) at every one of ``--checkpoints`` snapshots, and decides by the rule of
``cullen_dynamics.tracking_verdict`` (fixed before this run). One torch thread:

    python benchmarks/bench_grokking_tracking.py --checkpoints 40

Writes benchmarks/out/grokking_tracking.json (the snapshots, the λ̂ values and the verdict).
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from verification.experiments.cullen import PAPER_SAMPLER
from verification.experiments.cullen_dynamics import grokking_run, tracking_verdict
from verification.experiments.modular import modular_task


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoints", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default="benchmarks/out/grokking_tracking.json")
    args = ap.parse_args()
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    task = modular_task(23, 0.5, seed=0, device="cpu")
    run = grokking_run(
        task, 24, lr=0.002, weight_decay=0.2, steps=4000, seed=args.seed,
        num_checkpoints=args.checkpoints, llc_every=1, settings=PAPER_SAMPLER,
    )  # fmt: skip
    v = tracking_verdict(run)
    print(v)
    record = {
        "args": vars(args),
        "seconds": time.perf_counter() - t0,
        "run": run.to_dict(),
        "snapshots": [s.to_dict() for s in run.snapshots],
        "llc": [q.to_dict() for q in run.llc],
        "verdict": v.to_dict(),
    }
    print(f"{record['seconds']:.0f} s")
    with open(args.json, "w") as f:
        json.dump(record, f, indent=1, default=str)


if __name__ == "__main__":
    main()
