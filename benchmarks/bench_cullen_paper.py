"""Issue 62, Cullen et al. Figs 1–2 by the authors' own procedure, at their own grid.

Trains each (p, K) of the authors' published runs (``cullen_paper.PUBLISHED``: p ∈ {53, 61, 71},
K = 200–1,600) by their recorded settings, reads λ̂ by their devinterp SGLD at the last
checkpoint, and decides both arms by ``cullen_paper.paper_scaling_verdicts`` (rules fixed in the
module docstring before this run). One torch thread, float32:

    python benchmarks/bench_cullen_paper.py [--seeds 0 1]
    python benchmarks/bench_cullen_paper.py --claim tracking [--llc-every 4]
    python benchmarks/bench_cullen_paper.py --claim lr [--weight-decay 1e-4]

Writes benchmarks/out/cullen_paper.json (every point, the verdicts of each seed); the tracking
claim (Fig. 3: the authors' run p = 53, K = 1,024, ``cullen_paper_tracking.paper_tracking_run``,
decided by ``cullen_dynamics.tracking_verdict``) writes benchmarks/out/cullen_paper_tracking.json;
the learning-rate claim (Fig. 4: the authors' batch-128 sweep,
``cullen_paper_tracking.paper_lr_sweep``, decided by
``cullen_dynamics.lr_verdict(raw=True)``) writes benchmarks/out/cullen_paper_lr_wdW.json.
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from verification.experiments.cullen_dynamics import lr_verdict, tracking_verdict
from verification.experiments.cullen_paper import (
    PUBLISHED,
    paper_scaling_grid,
    paper_scaling_verdicts,
)
from verification.experiments.cullen_paper_tracking import paper_lr_sweep, paper_tracking_run


def tracking(args: argparse.Namespace) -> None:
    """Fig. 3 by the authors' procedure, one seed per ``--seeds`` entry."""
    t0 = time.perf_counter()
    record: dict = {"args": vars(args), "seeds": {}}
    for seed in args.seeds:
        authors, centred = paper_tracking_run(llc_every=args.llc_every or 4, seed=seed)
        record["seeds"][seed] = {"llc": [q.to_dict() for q in authors.llc]}
        for name, run in (("authors", authors), ("centred", centred)):
            v = tracking_verdict(run)
            print(f"validation loss as {name}:", v, flush=True)
            record["seeds"][seed] |= {
                f"run_{name}": run.to_dict(),
                f"snapshots_{name}": [s.to_dict() for s in run.snapshots],
                f"verdict_{name}": v.to_dict(),
            }
    record["seconds"] = time.perf_counter() - t0
    print(f"{record['seconds']:.0f} s")
    with open("benchmarks/out/cullen_paper_tracking.json", "w") as f:
        json.dump(record, f, indent=1, default=str)


def lr_sweep(args: argparse.Namespace) -> None:
    """Fig. 4 by the authors' procedure at one weight decay."""
    t0 = time.perf_counter()
    runs = paper_lr_sweep(weight_decay=args.weight_decay, llc_every=args.llc_every or 1)
    for r in runs:
        print(
            f"lr {r.lr:g}: {r.steps} steps, GSM raw {r.gsm_raw:.4f} (centred {r.gsm:.4f}), "
            f"peak λ̂ {r.peak.llc:.1f} ± {r.peak.stderr:.1f} at step {r.peak.step}",
            flush=True,
        )
    v = lr_verdict(runs, raw=True)
    print(v)
    record = {
        "args": vars(args),
        "seconds": time.perf_counter() - t0,
        "runs": [r.to_dict() for r in runs],
        "llc": {r.lr: [q.to_dict() for q in r.llc] for r in runs},
        "verdict": v.to_dict(),
    }
    print(f"{record['seconds']:.0f} s")
    with open(f"benchmarks/out/cullen_paper_lr_wd{args.weight_decay:g}.json", "w") as f:
        json.dump(record, f, indent=1, default=str)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--claim", choices=["scaling", "tracking", "lr"], default="scaling")
    ap.add_argument("--weight-decay", type=float, default=1e-4)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--llc-every", type=int, default=None, help="tracking 4, lr 1 if not given")
    ap.add_argument("--json", default="benchmarks/out/cullen_paper.json")
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.claim in ("tracking", "lr"):
        (tracking if args.claim == "tracking" else lr_sweep)(args)
        return
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
