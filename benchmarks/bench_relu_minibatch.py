"""Is the minibatch estimate of a ReLU network calibrated at n = 10⁴? (issue 60: no silent misses.)

The battery's ReLU family (``verification.calibration.relu``) at a size the battery cannot afford:
a 2-3-6-1 student (25 parameters) at the minimum L-BFGS reaches, n = 10,000, ``batch_size=256``,
4 chains, otherwise the defaults, at many chain seeds on one data set (data seed 0). The target is
λ_β(γ) by HMC on the full-data loss (``relu_hmc_target``, ~11 minutes on 2 cores: pass
``--target VALUE SIGMA`` to reuse one). Each run records λ̂ ± se (the minibatch trace, what
``estimate_llc`` reports), the full-data estimate from L_n at the chains (``LLCEstimate.full_data``)
± its se, both traces' ESS, the draws, the findings and the wall time; the summary gives, for each
error bar, the spread of z and the runs outside |z| ≤ 2 and 3 (the target's σ included), and which
of those carried an error finding (caught) or none (missed).

    python benchmarks/bench_relu_minibatch.py --seeds 0-29 --target 5.806 0.071

Writes benchmarks/out/relu_minibatch.json (or --json).
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

import numeric
from verification.calibration.relu import build_relu, relu_hmc_target

SIZES = dict(d=2, teacher=3, student=6, out=1)


def parse_seeds(text: str) -> list[int]:
    """``"0-29"`` or ``"0,3,5"`` → the chain seeds."""
    if "-" in text:
        lo, hi = (int(x) for x in text.split("-"))
        return list(range(lo, hi + 1))
    return [int(x) for x in text.split(",")]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=parse_seeds, default=parse_seeds("0-29"))
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--target", type=float, nargs=2, default=None, metavar=("VALUE", "SIGMA"))
    ap.add_argument("--json", default="benchmarks/out/relu_minibatch.json")
    return ap.parse_args(argv)


def one_run(built: Any, seed: int, args: argparse.Namespace) -> dict[str, Any]:
    """One default estimate at chain seed ``seed``, with its full-data estimate."""
    t0 = time.perf_counter()
    est = numeric.estimate_llc(
        *built.args, num_chains=args.chains, seed=seed, batch_size=args.batch_size, progress=False
    )
    fd = est.full_data
    full = None
    if fd is not None:
        full = {"estimate": fd.mean, "stderr": fd.stderr, "ess": fd.ess}
        full["evaluations"] = int(fd.loss_trace.size)
    record = run_record(est, seed, time.perf_counter() - t0)
    return {**record, "relaxation_steps": est.config.relaxation_steps, "full_data": full}


def run_record(est: Any, seed: int, seconds: float) -> dict[str, Any]:
    """What every run of these scripts records: the seed, λ̂ ± se, ESS, draws, findings, nβ, γ
    and the wall time."""
    return {
        "seed": seed,
        "estimate": est.mean,
        "stderr": est.stderr,
        "ess": est.ess,
        "draws": est.config.num_draws,
        "findings": [(f.code, f.severity) for f in est.diagnostics],
        "nbeta": float(est.nbeta),
        "gamma": float(est.config.gamma),
        "seconds": seconds,
    }


def z_summary(
    runs: list[dict[str, Any]], ses: np.ndarray, value: float, sigma: float
) -> tuple[np.ndarray, dict[str, Any]]:
    """z = (λ̂ − target)/√(se² + σ²) of each run with the error bars ``ses``, and its summary:
    the mean error bar, the sd of z, the runs outside |z| ≤ 2 and 3, and those outside 3 with
    no error finding (missed)."""
    est = np.array([r["estimate"] for r in runs])
    z = (est - value) / np.hypot(ses, sigma)
    caught = np.array([any(s == "error" for _, s in r["findings"]) for r in runs])
    return z, {
        "mean_stderr": float(np.mean(ses)),
        "sd_z": float(z.std(ddof=1)) if len(z) > 1 else math.nan,
        "outside_2": int((abs(z) > 2).sum()),
        "outside_3": int((abs(z) > 3).sum()),
        "missed_3": int(((abs(z) > 3) & ~caught).sum()),
    }


def summary(runs: list[dict[str, Any]], value: float, sigma: float) -> dict[str, Any]:
    """Per error bar (the reported one; the larger of it and the full-data one): sd of z, and
    the runs outside |z| ≤ 2 and 3, split by whether an error finding fired."""
    out: dict[str, Any] = {"runs": len(runs)}
    est = np.array([r["estimate"] for r in runs])
    out["mean"], out["sd"] = float(est.mean()), float(est.std(ddof=1)) if len(est) > 1 else math.nan
    bars = {
        "reported": [r["stderr"] for r in runs],
        "max(reported, full-data)": [
            max(r["stderr"], r["full_data"]["stderr"] if r["full_data"] else 0.0) for r in runs
        ],
    }
    for name, ses in bars.items():
        out[name] = z_summary(runs, np.array(ses), value, sigma)[1]
    fd_ess = [r["full_data"]["ess"] for r in runs if r["full_data"]]
    out["full_data_ess"] = {"median": float(np.median(fd_ess)), "max": float(np.max(fd_ess))}
    return out


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(1)
    built = build_relu(0, n=args.n, **SIZES)
    runs = []
    for seed in args.seeds:
        runs.append(one_run(built, seed, args))
        r = runs[-1]
        fd = r["full_data"]
        print(
            f"seed {seed:3d}: {r['estimate']:.3f} ± {r['stderr']:.3f} ({r['draws']} draws, "
            f"ESS {r['ess']:.0f}); full data {fd['estimate']:.3f} ± {fd['stderr']:.3f} "
            f"(ESS {fd['ess']:.0f} of {fd['evaluations']}); {r['seconds']:.1f} s",
            flush=True,
        )
    if args.target is not None:
        value, sigma = args.target
        source = "given (--target)"
    else:
        t0 = time.perf_counter()
        target = relu_hmc_target(built, runs[0]["nbeta"], runs[0]["gamma"])
        value, sigma, source = target.value, target.sigma, f"HMC, {time.perf_counter() - t0:.0f} s"
    result = {
        "settings": {**SIZES, "n": args.n, "batch_size": args.batch_size, "chains": args.chains},
        "target": {"value": value, "sigma": sigma, "source": source},
        "summary": summary(runs, value, sigma),
        "runs": runs,
    }
    os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
    with open(args.json, "w") as fh:
        json.dump(result, fh, indent=1)
    print(json.dumps(result["summary"], indent=1))


if __name__ == "__main__":
    main()
