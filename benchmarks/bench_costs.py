"""The cost goals of issue 60: wall time of a default estimate, one process at a time.

Defaults (only ``num_chains`` and ``seed`` given), one torch thread unless ``THREADS`` says
otherwise, each case in a fresh process so that no case pays for or profits from another's
caches. Run it on a quiet machine: on 2 cores one other CPU-bound process slows torch 2–7×.

    python benchmarks/bench_costs.py                    # every case
    python benchmarks/bench_costs.py --only saddle rrr  # cases whose name has one of these

Writes benchmarks/out/bench_costs.json (or --json): per case the wall time, λ̂ ± se, the
target where known, the draws and burn-in, the batch size and the findings.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time

# name -> (goal in seconds, battery case name or a builder below)
CASES = {
    "saddle y = x·w0·w1 (2 params, n = 10⁴)": (10.0, "regression y = x·w0·w1 (n=10000)"),
    "rrr(2,2,2,0) (8 params)": (10.0, "rrr(M=2,N=2,H=2,r=0)"),
    "dln 2-2-2-2 (12 params)": (10.0, "dln(2-2-2-2,r=0)"),
    "rrr(3,3,2,0) (12 params)": (10.0, "rrr(M=3,N=3,H=2,r=0)"),
    "rrr(4,4,3,1) (24 params)": (10.0, "rrr(M=4,N=4,H=3,r=1)"),
    "linear regression d = 50": (10.0, "linear regression (d=50)"),
    "dln 12-12-12-12 r=2 (432 params, n = 2·10⁴)": (60.0, "dln(12-12-12-12,r=2)"),
    "dln 20-20-20-20 r=5 (1,200 params, n = 2·10⁴)": (60.0, "dln(20-20-20-20,r=5)"),
    "dln 30-25-20-15 r=3 (1,550 params, n = 2·10⁴)": (60.0, "dln(30-25-20-15,r=3)"),
}


def _one(battery_name: str, chains: int) -> dict:
    """One default estimate of a battery case (run in a child process)."""
    import torch

    import numeric
    from verification import battery

    torch.set_num_threads(int(os.environ.get("THREADS", "1")))
    case = next(c for c in battery("full") if c.name == battery_name)
    built = case.build(0)
    t0 = time.perf_counter()
    est = numeric.estimate_llc(*built.args, num_chains=chains, seed=0, progress=False)
    seconds = time.perf_counter() - t0
    target = case.target(built, float(est.nbeta), float(est.config.gamma))
    c = est.config
    return {
        "seconds": seconds,
        "llc": est.mean,
        "stderr": est.stderr,
        "target": target.value,
        "target_sigma": target.sigma,
        "z": (est.mean - target.value) / math.hypot(est.stderr, target.sigma),
        "num_burnin": c.num_burnin,
        "num_draws": c.num_draws,
        "batch_size": c.batch_size,
        "integrator": c.integrator,
        "findings": [f"{f.code} ({f.severity})" for f in est.diagnostics],
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", default=None)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--json", default="benchmarks/out/bench_costs.json")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child is not None:
        print(json.dumps(_one(args.child, args.chains)))
        return
    rows = []
    for label, (goal, name) in CASES.items():
        if args.only and not any(s in label for s in args.only):
            continue
        out = subprocess.run(
            [sys.executable, __file__, "--child", name, "--chains", str(args.chains)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        row = {"case": label, "goal_s": goal, **json.loads(out.stdout.splitlines()[-1])}
        rows.append(row)
        met = "met" if row["seconds"] <= goal else "NOT met"
        print(
            f"{label}: {row['seconds']:.1f} s (goal {goal:g} s, {met}); λ̂ {row['llc']:.3f} ± "
            f"{row['stderr']:.3f} against {row['target']:.3f} ± {row['target_sigma']:.3f} "
            f"(z {row['z']:+.2f}); {row['num_burnin']} + {row['num_draws']} steps, B = "
            f"{row['batch_size']}; {', '.join(row['findings']) or 'no findings'}",
            flush=True,
        )
    os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
    with open(args.json, "w") as fh:
        json.dump({"chains": args.chains, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
