"""Issue 18, item 1 and 4: the failure cases found reproducing Lau et al., re-measured.

Each case runs ``numeric.estimate_llc`` with the settings the failure was found with (only
``num_chains`` and ``seed`` given unless stated) and records λ̂ ± stderr, λ where it is exact, ESS,
R-hat, the findings, the rules the run chose (preconditioner, integrator, ε, relaxation time) and
the wall time. One torch thread per process; on a shared 2-core machine the times are only
indicative.

    python benchmarks/bench_issue18_cases.py --case dln2091_short
    python benchmarks/bench_issue18_cases.py --case mlp --hidden 150
    python benchmarks/bench_issue18_cases.py --list

Rows are appended to ``benchmarks/out/bench_issue18_cases.jsonl`` (or ``--out``). Cases:

* ``dln2091_short``, ``dln2091_long``, ``dln2091_auto``: the rank-1 deep linear network 14-36-23-33
  (D = 2,091, λ = 165), n = 2000, 200 + 400 steps, 2,000 + 4,000 steps, and the defaults.
* ``dln2902``: 19-24-30-22-26-19 of rank 4 (D = 2,902, λ = 160), n = 10⁴, defaults.
* ``dln306``: 13-9-21 of rank 9 (D = 306, λ = 112.5), n = 10⁴, defaults.
* ``dln42``: 4-3-5-3 of rank 1 (D = 42, λ = 5), n = 10⁴, defaults.
* ``dln1485``: 15-15-27-15-18-10 of rank 0 (w* = 0, D = 1,485, λ = 58.5), n = 10⁴, defaults.
* ``mlp``: a ReLU MLP 64-H-10 trained on digits (as ``bench_lau_goals.py --mlp``): seeds 0 and 1
  and seed 0 with 4× its burn-in and draws.
* ``readme_gamma1``: the README's 5-16-1 tanh network at γ = 1 (the README runs it at γ = 100).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

import numeric
from verification.experiments.llc import mse_loss
from verification.experiments.teachers import dln_teacher

DLN = {
    "dln2091_short": ([14, 36, 23, 33], 1, 1833484933, 2000, {"num_burnin": 200, "num_draws": 400}),
    "dln2091_long": (
        [14, 36, 23, 33],
        1,
        1833484933,
        2000,
        {"num_burnin": 2000, "num_draws": 4000},
    ),
    "dln2091_auto": ([14, 36, 23, 33], 1, 1833484933, 2000, {}),
    "dln2902": ([19, 24, 30, 22, 26, 19], 4, 1827923621, 10_000, {}),
    "dln306": ([13, 9, 21], 9, 0, 10_000, {}),
    "dln42": ([4, 3, 5, 3], 1, 0, 10_000, {}),
    "dln1485": ([15, 15, 27, 15, 18, 10], 0, 0, 10_000, {}),
}


def row(est: numeric.LLCEstimate, seconds: float, **extra: Any) -> dict[str, Any]:
    c = est.config
    return {
        **extra,
        "llc": est.mean,
        "stderr": est.stderr,
        "ess": est.ess,
        "rhat": est.rhat,
        "linear_coefficient": est.linear_coefficient,
        "slow_ess": est.slow_ess,
        "slow_rhat": est.slow_rhat,
        "findings": [f"{f.code} ({f.severity})" for f in est.diagnostics],
        "num_params": c.num_params,
        "num_burnin": c.num_burnin,
        "num_draws": c.num_draws,
        "preconditioner": c.preconditioner,
        "step_size_rule": c.step_size_rule,
        "integrator": c.integrator,
        "friction": c.friction,
        "step_size": c.step_size,
        "curvature": c.curvature,
        "relaxation_steps": c.relaxation_steps,
        "laplace_llc": c.laplace_llc,
        "condition_number": c.condition_number,
        "wall_s": seconds,
    }


def dln_case(name: str, chains: int, seed: int) -> list[dict[str, Any]]:
    widths, rank, tseed, n, kw = DLN[name]
    t = dln_teacher(widths, rank, seed=tseed)
    data = t.sample(n, torch.Generator().manual_seed(0))
    loss_fn, w = numeric.from_module(t.module(), mse_loss)
    t0 = time.perf_counter()
    est = numeric.estimate_llc(loss_fn, w, data, num_chains=chains, seed=seed, **kw)
    lam = float(t.lam)
    out = row(est, time.perf_counter() - t0, case=name, widths=widths, rank=rank, n=n, lam=lam)
    out["rel_error"] = est.mean / lam - 1 if lam else float("nan")
    return [out]


def mlp_case(hidden: int, chains: int, train_steps: int) -> list[dict[str, Any]]:
    from verification.experiments import sgd, train
    from verification.experiments.datasets import digits
    from verification.experiments.networks import relu_mlp

    g = torch.Generator().manual_seed(0)
    d = digits(g)
    net = relu_mlp([64, hidden, 10], generator=g)
    opt = sgd(0.05, 0.9, nesterov=True)
    train(net, F.cross_entropy, d.train, opt, train_steps, generator=g, batch_size=64)
    loss_fn, w = numeric.from_module(net, F.cross_entropy)
    rows, first = [], None
    for label, kw in (("seed 0", {"seed": 0}), ("seed 1", {"seed": 1}), ("4x longer", None)):
        if kw is None:
            c = first.config
            kw = {"seed": 0, "num_draws": 4 * c.num_draws, "num_burnin": 4 * c.num_burnin}
        t0 = time.perf_counter()
        est = numeric.estimate_llc(loss_fn, w, d.train, num_chains=chains, **kw)
        first = first or est
        rows.append(row(est, time.perf_counter() - t0, case="mlp", run=label, hidden=hidden))
        print(json.dumps(rows[-1]), flush=True)
    return rows


def readme_gamma1(chains: int, seed: int) -> list[dict[str, Any]]:
    torch.manual_seed(0)  # the README example initialises from the global generator
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2000, 5, generator=g)
    y = torch.sin(x.sum(1, keepdim=True)) + 0.1 * torch.randn(2000, 1, generator=g)
    model = torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    opt = torch.optim.LBFGS(model.parameters(), max_iter=500, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        return loss

    opt.step(closure)
    loss_fn, w = numeric.from_module(model, F.mse_loss)
    rows = []
    for gamma in (1.0, 100.0):
        t0 = time.perf_counter()
        est = numeric.estimate_llc(loss_fn, w, (x, y), num_chains=chains, seed=seed, gamma=gamma)
        rows.append(row(est, time.perf_counter() - t0, case="readme", gamma=gamma))
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", default="dln2091_short")
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--hidden", type=int, default=150)
    ap.add_argument("--train-steps", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default="benchmarks/out/bench_issue18_cases.jsonl")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        print(" ".join([*DLN, "mlp", "readme_gamma1"]))
        return
    torch.set_num_threads(a.threads)
    if a.case in DLN:
        rows = dln_case(a.case, a.chains, a.seed)
    elif a.case == "mlp":
        rows = mlp_case(a.hidden, a.chains, a.train_steps)
    elif a.case == "readme_gamma1":
        rows = readme_gamma1(8, a.seed)
    else:
        raise SystemExit(f"unknown case {a.case!r}; --list names them")
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    with open(a.out, "a") as f:
        for r in rows:
            r["threads"] = a.threads
            f.write(json.dumps(r) + "\n")
    for r in rows:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
