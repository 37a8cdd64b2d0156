"""Issue 18's accuracy goals with numeric's defaults (only ``num_chains`` and ``seed`` given).

* Deep linear networks at the true parameter (noise-free labels, λ from Aoyagi's formula):
  |λ̂/λ − 1| per network, its median, the findings and the time, for random teachers of
  ``--min``..``--max`` parameters (``verification.experiments.teachers.random_dln_teacher``).
  ``--target also``/``only``: the estimator's target λ_β at the same n, nβ, γ and inputs by an
  independent sampler (MALA on L_n in closed form, ``dln.dln_target``), so that λ̂/λ − 1 splits
  into the target's distance from λ and the estimator's error λ̂/λ_β − 1.
* ``--mlp``: a ReLU MLP trained on digits (64-H-10): the default estimate for two estimator
  seeds and with a 4× longer run (draws and burn-in 4× the first run's automatic ones).

    python benchmarks/bench_lau_goals.py --networks 12 --min 100 --max 10000
    python benchmarks/bench_lau_goals.py --networks 2 --pick 1 --min 90000 --max 120000 --gamma 10
    python benchmarks/bench_lau_goals.py --networks 0 --mlp 150
    python benchmarks/bench_lau_goals.py --networks 8 --min 100 --max 1000 --target only
    python benchmarks/bench_lau_goals.py --networks 8 --min 100 --max 1000 --target only \
        --reference hmc --target-draws 300 --pick 1,4

Writes benchmarks/out/bench_lau_goals.json (or --json). Timings mean little on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time

import torch
import torch.nn.functional as F

from numeric.result.llc_estimate import to_plain
from verification.experiments import llc_at, sgd, train
from verification.experiments.datasets import digits
from verification.experiments.dln import dln_estimate, dln_target, dln_target_hmc
from verification.experiments.networks import num_params, relu_mlp
from verification.experiments.teachers import DLNTeacher, random_dln_teacher

# the run's set-up, recorded with each row: what explains a step size or a slow direction
RUN_CONFIG = (
    "step_size", "step_size_rule", "curvature", "integrator", "friction", "preconditioner",
    "condition_number", "relaxation_steps", "anchor_every",
)  # fmt: skip


def target_row(
    t: DLNTeacher, n: int, chains: int, seed: int, draws: int, reference: str = "mala"
) -> dict:
    """λ_β by MALA (``dln_target``) or by HMC (``dln_target_hmc``: ``draws`` trajectories per
    chain, 16 chains) on the closed-form L_n, against λ."""
    lam = float(t.lam)
    if reference == "hmc":
        start = time.perf_counter()
        r = dln_target_hmc(t, n, seed=seed, num_draws=draws, num_burnin=max(draws // 3, 50))
        target = {
            "sampler": "hmc",
            "llc": r.mean,
            "stderr": r.stderr,
            "ess": r.ess,
            "rhat": r.rhat,
            "acceptance": r.acceptance,
            "step_size": r.step_size,
            "trajectory": r.trajectory,
            "num_chains": len(r.per_chain),
            "num_draws": r.num_draws,
            "wall_s": time.perf_counter() - start,
        }
        return {"target": target, "target_rel_to_lam": r.mean / lam - 1 if lam else math.nan}
    p, _ = dln_target(t, n, num_chains=chains, seed=seed, num_draws=draws, num_burnin=draws // 10)
    return {
        "target": p.to_dict(),
        "target_rel_to_lam": p.llc / lam - 1 if lam else float("nan"),
    }


def dln_rows(
    networks: int,
    lo: int,
    hi: int,
    n: int,
    chains: int,
    target: str,
    target_draws: int,
    reference: str = "mala",
    pick: set[int] | None = None,
    gamma: float = 1.0,
) -> list[dict]:
    g = torch.Generator().manual_seed(2024)
    rows = []
    for i in range(networks):
        t = random_dln_teacher(g, lo, hi)
        if pick is not None and i not in pick:
            continue
        t0 = time.perf_counter()
        if target == "only":
            row = {**t.to_dict(), **target_row(t, n, chains, i, target_draws, reference)}
            row["wall_s"] = time.perf_counter() - t0
            print(json.dumps(row), flush=True)
            rows.append(row)
            continue
        try:
            p, est = dln_estimate(t, n, num_chains=chains, seed=i, progress=True, gamma=gamma)
            laplace = est.config.laplace_llc
            row = {
                **t.to_dict(),
                **p.estimate.to_dict(),
                "rel_error": p.rel_error,
                "gamma": gamma,
                "laplace_llc": laplace,
                "laplace_llc_bounds": est.config.laplace_llc_bounds,
                # nan where no direction is quadratic at w* (rank 0: the Laplace value is 0)
                "rel_to_laplace": p.estimate.llc / laplace - 1 if laplace else float("nan"),
                "step_check": to_plain(est.step_check),
                "num_burnin": est.config.num_burnin,
                "num_draws": est.config.num_draws,
                "finding_values": {f.code: dict(f.values) for f in est.diagnostics},
                "config": {k: getattr(est.config, k) for k in RUN_CONFIG},
            }
            if target == "also":
                row.update(target_row(t, n, chains, i, target_draws, reference))
                row["rel_to_target"] = p.estimate.llc / row["target"]["llc"] - 1
        except Exception as e:  # recorded, not hidden
            row = {**t.to_dict(), "error": f"{type(e).__name__}: {e}"}
        row["wall_s"] = time.perf_counter() - t0
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


MLP_RUNS = ("seed 0", "seed 1", "4x longer")


def mlp_rows(
    hidden: int,
    chains: int,
    train_steps: int,
    runs: tuple[str, ...] = MLP_RUNS,
    base_lengths: tuple[int, int] | None = None,
) -> list[dict]:
    """``runs``: a subset of ``MLP_RUNS`` (the 4× run scales seed 0's automatic lengths, so it
    runs seed 0 first even where seed 0 is not asked for, without recording it, unless
    ``base_lengths`` = (burn-in, draws) gives them from an earlier run). Training runs on one
    torch thread, so that the trained network is the same bits whatever the estimate's threads."""
    g = torch.Generator().manual_seed(0)
    d = digits(g)
    net = relu_mlp([64, hidden, 10], generator=g)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    train(
        net,
        F.cross_entropy,
        d.train,
        sgd(0.05, 0.9, nesterov=True),
        train_steps,
        generator=g,
        batch_size=64,
    )
    torch.set_num_threads(threads)
    four = "4x longer" in runs and base_lengths is None
    needed = set(runs) | ({"seed 0"} if four else set())
    rows = []
    first = None
    for label, kw in (("seed 0", {"seed": 0}), ("seed 1", {"seed": 1}), ("4x longer", None)):
        if label not in needed:
            continue
        if kw is None:
            burnin, draws = base_lengths or (first.config.num_burnin, first.config.num_draws)
            kw = {"seed": 0, "num_draws": 4 * draws, "num_burnin": 4 * burnin}
        t0 = time.perf_counter()
        p, est = llc_at(net, F.cross_entropy, d.train, num_chains=chains, progress=True, **kw)
        first = first or est
        if label not in runs:
            continue
        row = {
            "run": label,
            "num_params": num_params(net),
            **p.to_dict(),
            "num_draws": est.config.num_draws,
            "num_burnin": est.config.num_burnin,
            "step_check": to_plain(est.step_check),
            "linear_coefficient": est.linear_coefficient,
            "wall_s": time.perf_counter() - t0,
        }
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--networks", type=int, default=12)
    ap.add_argument("--min", type=int, default=100)
    ap.add_argument("--max", type=int, default=10_000)
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument(
        "--target",
        choices=("off", "also", "only"),
        default="off",
        help="λ_β by MALA on the closed-form loss (dln_target): beside λ̂, or instead of it",
    )
    ap.add_argument("--target-draws", type=int, default=200_000)
    ap.add_argument(
        "--reference",
        choices=("mala", "hmc"),
        default="mala",
        help="the target's sampler: MALA, or Metropolis-adjusted HMC (--target-draws trajectories)",
    )
    ap.add_argument("--pick", default="", help="only these networks, by index: 1,4")
    ap.add_argument("--gamma", type=float, default=1.0, help="the localisation γ (default 1)")
    ap.add_argument("--mlp", type=int, default=0, help="hidden width of the digits MLP (0: skip)")
    ap.add_argument("--train-steps", type=int, default=2000)
    ap.add_argument(
        "--mlp-runs", default=",".join(MLP_RUNS), help=f"a subset of {','.join(MLP_RUNS)}"
    )
    ap.add_argument(
        "--mlp-base-lengths",
        default="",
        help="BURNIN,DRAWS of an earlier seed-0 run: the 4x run scales these instead of re-running",
    )
    ap.add_argument("--json", default="benchmarks/out/bench_lau_goals.json")
    a = ap.parse_args()
    out = {"args": vars(a), "threads": torch.get_num_threads(), "cpus": os.cpu_count()}
    pick = {int(i) for i in a.pick.split(",")} if a.pick else None
    out["dln"] = dln_rows(
        a.networks,
        a.min,
        a.max,
        a.n,
        a.chains,
        a.target,
        a.target_draws,
        a.reference,
        pick,
        a.gamma,
    )
    if a.mlp:
        runs = tuple(r.strip() for r in a.mlp_runs.split(","))
        unknown = set(runs) - set(MLP_RUNS)
        if unknown:
            ap.error(f"--mlp-runs: unknown {sorted(unknown)}; choose from {MLP_RUNS}")
        base = tuple(int(v) for v in a.mlp_base_lengths.split(",")) if a.mlp_base_lengths else None
        if base is not None and len(base) != 2:
            ap.error("--mlp-base-lengths: give BURNIN,DRAWS, for example 2592,20000")
        out["mlp"] = mlp_rows(a.mlp, a.chains, a.train_steps, runs, base)
    with open(a.json, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
