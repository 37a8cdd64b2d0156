"""Issue 62, Cullen et al. Figs 1–2 by the authors' own procedure, at their own grid.

Trains each (p, K) of the authors' published runs (``cullen_paper.PUBLISHED``: p ∈ {53, 61, 71},
K = 200–1,600) by their recorded settings, reads λ̂ by their devinterp SGLD at the last
checkpoint, and decides both arms by ``cullen_paper.paper_scaling_verdicts`` (rules fixed in the
module docstring before this run). One torch thread, float32:

    python benchmarks/bench_cullen_paper.py [--seeds 0 1]

Writes benchmarks/out/cullen_paper.json (every point, the verdicts of each seed).
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from verification.experiments.cullen_paper import (
    PUBLISHED,
    paper_scaling_grid,
    paper_scaling_verdicts,
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--json", default="benchmarks/out/cullen_paper.json")
    args = ap.parse_args()
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    record: dict = {"args": vars(args), "seeds": {}}
    for seed in args.seeds:
        points = paper_scaling_grid(sorted(PUBLISHED), seed=seed, progress=True)
        arms = paper_scaling_verdicts(points)
        for v in arms:
            print(v)
        record["seeds"][seed] = {
            "points": [q.to_dict() for q in points],
            "reproduced": arms[0].to_dict(),
            "true": arms[1].to_dict(),
        }
    record["seconds"] = time.perf_counter() - t0
    print(f"{record['seconds']:.0f} s")
    with open(args.json, "w") as f:
        json.dump(record, f, indent=1, default=str)


if __name__ == "__main__":
    main()
