"""Time per step of the full batch (``batch_size = n``) on deep linear networks at their true
parameter: fixed step size and lengths (no warm-up rules, no step check), eager and compiled;
the set-up (checks, ∇L_n and H at w*) is timed by a run of 16 steps and taken off.
The full batch's data are shared by the chains (``KernelSpec.full_batch``: vmapped with the
data not mapped), not gathered per chain.

    python benchmarks/bench_full_batch_speed.py                  # 15-18-11-26-18-23, n = 10⁴
    python benchmarks/bench_full_batch_speed.py --widths 38-45-45-46-44-44 --n 10000

Writes benchmarks/out/bench_full_batch_speed.json (or --json).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import torch
from torch.nn.functional import mse_loss

import numeric
from verification.experiments.dln import dln_data
from verification.experiments.teachers import dln_teacher


def row(widths: list[int], n: int, chains: int, steps: int, compile: bool, dtype: str) -> dict:
    teacher = dln_teacher(widths, min(widths), seed=0)
    dt = getattr(torch, dtype)
    data, _ = dln_data(teacher, n, 0, dt)
    loss_fn, params = numeric.from_module(teacher.module(dt).eval(), mse_loss)
    kw = dict(
        num_chains=chains, seed=0, batch_size=n, step_size=1e-7, num_burnin=8, progress=False,
        step_check=False, compile=compile,
    )  # fmt: skip
    numeric.estimate_llc(loss_fn, params, data, num_draws=8, **kw)  # compile, caches, pages
    t0 = time.perf_counter()
    numeric.estimate_llc(loss_fn, params, data, num_draws=8, **kw)  # the set-up and 16 steps
    t1 = time.perf_counter()
    est = numeric.estimate_llc(loss_fn, params, data, num_draws=8 + steps, **kw)
    seconds = time.perf_counter() - t1
    setup = t1 - t0
    return {
        "widths": widths,
        "params": sum(p.numel() for p in params.values()),
        "n": n,
        "chains": chains,
        "compile": compile,
        "dtype": dtype,
        "gradient": est.config.gradient,
        "seconds": seconds,
        "setup_and_16_steps_s": setup,
        "ms_per_step": 1e3 * (seconds - setup) / steps,  # the steps beyond the set-up run's
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--widths", default="15-18-11-26-18-23")
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--dtype", default="float64")
    ap.add_argument("--json", default="benchmarks/out/bench_full_batch_speed.json")
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("THREADS", "1")))
    widths = [int(w) for w in args.widths.split("-")]
    rows = []
    for compile in (False, True):
        r = row(widths, args.n, args.chains, args.steps, compile, args.dtype)
        print(json.dumps(r), flush=True)
        rows.append(r)
    with open(args.json, "w") as fh:
        json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
