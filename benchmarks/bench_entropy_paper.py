"""Issue 62, Lau et al.'s entropy-SGD claim at its decisive CPU settings, both arms.

*Reproduced?*: the authors' procedure (``verification.experiments.entropy_paper``: SGD with
Nesterov momentum against their entropy-SGD, lr 10⁻², batch 512; λ̂ by plain SGLD, ε = 10⁻⁵,
γ = 100, nβ = n/log n, 4 chains × 400 steps, no burn-in) on scikit-learn's digits. *True?*: the
package's estimator at its defaults (``--time-budget`` seconds each) at the same end points. One
torch thread; ``--part K/N`` runs every N-th seed from the K-th (two processes side by side), and
``--merge`` joins the parts' records and decides:

    python benchmarks/bench_entropy_paper.py --seeds 8 --part 0/2 &
    python benchmarks/bench_entropy_paper.py --seeds 8 --part 1/2
    python benchmarks/bench_entropy_paper.py --merge

Writes benchmarks/out/entropy_paper{TAG}[.partK].json (the records and the verdicts).
"""

from __future__ import annotations

import argparse
import glob
import json
import time

import torch

from verification.experiments.datasets import digits
from verification.experiments.entropy import MinimumPoint, entropy_verdict
from verification.experiments.entropy_paper import PUBLISHED, entropy_paper_claim, paper_optimizers
from verification.experiments.llc import LLCPoint

OUT = "benchmarks/out/entropy_paper"


def points_of(rows: list[dict]) -> list[MinimumPoint]:
    """The records back from their JSON dicts (``Record.to_dict`` flattens ``estimate.*``)."""
    out = []
    for r in rows:
        est = {k.split(".", 1)[1]: v for k, v in r.items() if k.startswith("estimate.")}
        fields = ("optimizer", "seed", "train_loss", "train_accuracy", "test_accuracy")
        out.append(MinimumPoint(*(r[k] for k in fields), LLCPoint(**est)))
    return out


def merge(out: str) -> None:
    """Both arms' verdicts over all parts' seeds."""
    parts = [json.load(open(f)) for f in sorted(glob.glob(f"{out}.part*.json"))]
    labels = tuple(s.label for s in paper_optimizers())
    record: dict = {"args": parts[0]["args"], "seconds": [p["seconds"] for p in parts]}
    for arm, void in (("paper", False), ("true", True)):
        pts = points_of([row for p in parts for row in p[arm]])
        v = entropy_verdict(pts, *labels, void_errors=void)
        record[arm], record[f"{arm}_verdict"] = [p.to_dict() for p in pts], v.to_dict()
        print(f"{arm} arm:", v, "\n")
    sgd_llc = record["paper_verdict"][f"λ̂ {labels[0]}"]
    esgd_llc = record["paper_verdict"][f"λ̂ {labels[1]}"]
    gap, published = esgd_llc / sgd_llc - 1, PUBLISHED["entropy-SGD"] / PUBLISHED["SGD"] - 1
    record["relative_gap"], record["published_relative_gap"] = gap, published
    print(f"paper arm: entropy-SGD/SGD − 1 = {gap:+.1%} (published {published:+.1%})")
    with open(f"{out}.json", "w") as f:
        json.dump(record, f, indent=1, default=str)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--hidden", default="128,128")
    ap.add_argument("--grad-evals", type=int, default=20_000)
    ap.add_argument("--time-budget", type=float, default=30.0)
    ap.add_argument("--part", default="0/1")
    ap.add_argument("--merge", action="store_true")
    ap.add_argument("--tag", default="", help="appended to the output name")
    args = ap.parse_args()
    out = OUT + args.tag
    if args.merge:
        merge(out)
        return
    torch.set_num_threads(1)
    k, n = (int(x) for x in args.part.split("/"))
    seeds = tuple(range(args.seeds))[k::n]
    data = digits(torch.Generator().manual_seed(0))
    hidden = [int(h) for h in args.hidden.split(",")]
    t0 = time.perf_counter()
    res = entropy_paper_claim(
        data, hidden, args.grad_evals, seeds,
        package=dict(time_budget=args.time_budget), progress=True,
    )  # fmt: skip
    record = {
        "args": vars(args),
        "seconds": time.perf_counter() - t0,
        "paper": [p.to_dict() for p in res.paper.points],
        "true": [p.to_dict() for p in res.true.points] if res.true is not None else [],
    }
    with open(f"{out}.part{k}.json", "w") as f:
        json.dump(record, f, indent=1, default=str)
    print(f"{record['seconds']:.0f} s")


if __name__ == "__main__":
    main()
