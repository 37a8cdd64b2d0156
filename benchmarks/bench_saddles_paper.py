"""Issue 62, the saddle-to-saddle claim at the authors' own settings, both arms.

*Reproduced?*: the authors' procedure (``verification.experiments.saddles_paper``: a 5-10-10-10-
10-5 linear network trained by SGD from small initialisation on the teacher 10·diag(1, …, 5);
every 50 steps λ̂ by plain SGLD, ε = 10⁻⁶, γ = 1, one chain of 100 steps, on the realisable
targets). *True?*: the exact λ of the learned rank, and the package's estimator (its defaults,
unbudgeted unless ``--time-budget``) at the middle checkpoint of each rank. One torch thread:

    python benchmarks/bench_saddles_paper.py --seed 0

Writes benchmarks/out/saddles_paper_seed{SEED}.json (the records and both verdicts; with a time
budget T, saddles_paper_seed{SEED}_tb{T}.json).
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from verification.experiments.saddles_paper import PAPER_SADDLE, paper_saddle_run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-budget", type=float, default=None)
    args = ap.parse_args()
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    package = {} if args.time_budget is None else {"time_budget": args.time_budget}
    res = paper_saddle_run(PAPER_SADDLE, seed=args.seed, package=package)
    record = {
        "args": vars(args),
        "settings": res.settings.to_dict(),
        "seconds": time.perf_counter() - t0,
        "paper": [p.to_dict() for p in res.paper],
        "paper_verdict": res.paper_verdict.to_dict(),
        "true": [p.to_dict() for p in res.true or ()],
        "true_verdict": res.true_verdict.to_dict() if res.true_verdict else None,
    }
    print("Reproduced?", res.paper_verdict, "\n\nTrue?", res.true_verdict)
    for p in res.true or ():
        print(
            p.step, p.rank, f"{p.estimate.llc:.3f} ± {p.estimate.stderr:.3f}", p.estimate.findings
        )
    print(f"{record['seconds']:.0f} s")
    tag = "" if args.time_budget is None else f"_tb{args.time_budget:g}"
    with open(f"benchmarks/out/saddles_paper_seed{args.seed}{tag}.json", "w") as f:
        json.dump(record, f, indent=1, default=str)


if __name__ == "__main__":
    main()
