"""Does the stopping rule's ESS floor earn its cost? (issue 60: every rule earns its cost.)

Automatic draws go on until λ̂'s own loss trace has ``numeric.types.MIN_LOSS_ESS`` effective
draws, whatever the standard error. On the small models of the cost goals that floor, not the
precision target (``rtol``), sets the length. This runs battery cases with known targets at many
chain seeds (one data set, data seed 0), defaults with 4 chains, once per floor, and reports for
each floor the spread of z = (λ̂ − target)/√(se² + σ²), the runs outside |z| ≤ 2 and 3 (and of
those, the ones with no error finding), the draws and the wall time.

    python benchmarks/bench_ess_floor.py --floors 100 50 --seeds 0-11
    python benchmarks/bench_ess_floor.py --only "dln(2-2-2-2" --floors 50 --seeds 0-3

One torch thread per run; the floors run one after the other in one process unless ``--floors``
names one (run two processes side by side for the two floors: their wall times are then both
under load, comparable with each other only). Writes benchmarks/out/ess_floor.json (or --json).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from typing import Any

import numpy as np
import torch
from bench_relu_minibatch import parse_seeds, run_record, z_summary  # a sibling script

import numeric
import numeric.run.full_batch_switch as full_batch_switch
import numeric.types as numeric_types
from verification import battery

CASES = (
    "regression y = x·w0·w1 (n=10000)",
    "rrr(M=2,N=2,H=2,r=0)",
    "dln(2-2-2-2,r=0)",
    "rrr(M=3,N=3,H=2,r=0)",
    "rrr(M=4,N=4,H=3,r=1)",
    "linear regression (d=50)",
)


def set_floor(floor: float) -> None:
    """The ESS floor the stopping rule and the full-batch switch's projection read."""
    numeric_types.MIN_LOSS_ESS = floor
    full_batch_switch.MIN_LOSS_ESS = floor


def one_run(built: Any, seed: int, chains: int) -> dict[str, Any]:
    """One default estimate at chain seed ``seed``: λ̂ ± se, ESS, lengths, findings, wall time."""
    t0 = time.perf_counter()
    est = numeric.estimate_llc(*built.args, num_chains=chains, seed=seed, progress=False)
    record = run_record(est, seed, time.perf_counter() - t0)
    return {**record, "burnin": est.config.num_burnin, "batch_size": est.config.batch_size}


def summary(runs: list[dict[str, Any]], value: float, sigma: float) -> dict[str, Any]:
    """z against the target ± σ over the runs (``z_summary``): its spread and mean, the runs
    outside |z| ≤ 2 and 3 (and those with no error finding), the median draws and wall time."""
    est = np.array([r["estimate"] for r in runs])
    z, counts = z_summary(runs, np.array([r["stderr"] for r in runs]), value, sigma)
    return {
        "runs": len(runs),
        "mean": float(est.mean()),
        "sd": float(est.std(ddof=1)) if len(est) > 1 else math.nan,
        **counts,
        "mean_z": float(z.mean()),
        "error_findings": sum(any(s == "error" for _, s in r["findings"]) for r in runs),
        "median_draws": float(np.median([r["draws"] for r in runs])),
        "median_seconds": float(np.median([r["seconds"] for r in runs])),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--floors", type=float, nargs="+", default=[100.0, 50.0])
    ap.add_argument("--seeds", type=parse_seeds, default=parse_seeds("0-11"))
    ap.add_argument("--only", nargs="*", default=None, help="cases whose name has one of these")
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--json", default="benchmarks/out/ess_floor.json")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    names = [c for c in CASES if not args.only or any(s in c for s in args.only)]
    cases = {c.name: c for c in battery("full")}
    out: dict[str, Any] = {"floors": args.floors, "seeds": args.seeds, "cases": {}}
    for name in names:
        case = cases[name]
        built = case.build(0)
        per_floor: dict[str, Any] = {}
        target = None
        for floor in args.floors:
            set_floor(floor)
            runs = []
            for seed in args.seeds:
                runs.append(one_run(built, seed, args.chains))
                r = runs[-1]
                print(
                    f"{name} floor {floor:g} seed {seed}: {r['estimate']:.3f} ± "
                    f"{r['stderr']:.3f} ({r['draws']} draws, ESS {r['ess']:.0f}) "
                    f"{r['seconds']:.1f} s",
                    flush=True,
                )
            if target is None:
                target = case.target(built, runs[0]["nbeta"], runs[0]["gamma"])
            per_floor[f"{floor:g}"] = {
                "summary": summary(runs, target.value, target.sigma),
                "runs": runs,
            }
            print(json.dumps(per_floor[f"{floor:g}"]["summary"]), flush=True)
        out["cases"][name] = {"target": [target.value, target.sigma], "floors": per_floor}
        os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
