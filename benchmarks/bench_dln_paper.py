"""Issue 62, the deep-linear-network headline (Lau et al. Fig. 1) at its decisive CPU settings.

The paper's smallest sweep is CPU-sized (widths 5–49, 2–4 layers, at most ~7,500 parameters,
n = 10⁵, 10,000 SGLD steps of batch 500), so the *reproduced?* arm runs at the paper's own
settings here (``verification.experiments.dln_paper``, one chain per network as the paper); the
*true?* arm (``dln_truth``) holds the same teachers and samples to the exact local λ, λ_β by HMC
(below ``--hmc-max-params``) and the package's estimator at its defaults. Each arm is one
process (one torch thread); run the two side by side:

    python benchmarks/bench_dln_paper.py --arm paper --teachers 20
    python benchmarks/bench_dln_paper.py --arm true --teachers 20 --time-budget 60

(``--time-budget 0`` runs the estimator unbounded: more than 4 minutes per network here, with
eight draws phases on the first 1,444-parameter teacher: settling rounds, each drawn to precision.)

Writes benchmarks/out/dln_paper_{arm}.json (the records, the fit and the verdict).
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import torch

from verification.experiments.dln_paper import paper_dln_claim, paper_dln_teacher
from verification.experiments.dln_truth import HMC_MAX_PARAMS, dln_truth_claim


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arm", choices=("paper", "true"), required=True)
    ap.add_argument("--teachers", type=int, default=20)
    ap.add_argument("--teacher-seed", type=int, default=62)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--hmc-max-params", type=int, default=HMC_MAX_PARAMS)
    ap.add_argument(
        "--time-budget", type=float, default=60.0,
        help="the package estimator's time_budget in seconds (0: none)",
    )  # fmt: skip
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(args.teacher_seed)
    teachers = [paper_dln_teacher(g) for _ in range(args.teachers)]
    t0 = time.perf_counter()
    if args.arm == "paper":
        result = paper_dln_claim(teachers, seed=args.seed, progress=True)
    else:
        budget = {"time_budget": args.time_budget} if args.time_budget > 0 else {}
        result = dln_truth_claim(
            teachers, seed=args.seed, progress=True, hmc_max_params=args.hmc_max_params, **budget
        )
    seconds = time.perf_counter() - t0
    print(result.verdict)
    print(f"{seconds:.0f} s")
    out = args.json or f"benchmarks/out/dln_paper_{args.arm}.json"
    with open(out, "w") as f:
        json.dump(
            {
                "arm": args.arm,
                "teacher_seed": args.teacher_seed,
                "seed": args.seed,
                "seconds": seconds,
                "machine": platform.platform(),
                "torch": torch.__version__,
                "fit": result.fit.to_dict() if result.fit else None,
                "verdict": result.verdict.to_dict(),
                "points": [p.to_dict() for p in result.points],
            },
            f,
            indent=1,
            default=str,
        )


if __name__ == "__main__":
    main()
