"""Whole LLC estimates on a GPU: deep linear networks of 10⁶ and 10⁸ parameters, 1,024 chains.

Deep linear network x ↦ W3 W2 W1 x, three square layers of width h (D = 3h²), at w* = random
orthogonal W_i, on noise-free data from itself (x ~ N(0, I_h), n = max(8192, 4h) samples), so w*
is an exact minimum with L_n(w*) = 0. The product map is a submersion there (every W_i is
invertible), so λ = h²/2. That is the nβ → ∞ value: at finite nβ the volume of the fibres (the
GL(h) orbits W1 → A·W1, W2 → W2·A⁻¹, ..., held only by γ) shifts the target by terms of order
1/nβ per identifiable direction, not computed here (on the CPU, h = 30 and h = 100 with the
defaults gave +0.8% and +1.3%). Orthogonal W_i give every identifiable direction a curvature of
about 3·nβ·(smallest eigenvalue of XᵀX/n) ≫ γ; random Gaussian W_i would leave directions with
curvature below γ/nβ, which the localisation holds instead.

- ``dln-1e6``: h = 577, the estimator's defaults (4 chains; ε, burn-in and draws from its rules).
- ``dln-1e8``: h = 5774, 4 chains, batch 256, 1,500 burn-in steps and 1,000 draws (the rule's
  20,000 draws would take tens of minutes); ε from the defaults' rule, 0.25/κ_B with κ_B the
  minibatch Hessian's top curvature (nβ·361 measured at batch 256). The softest identifiable
  direction, κ_min ≈ 3·nβ·(1 − √(h/n))² = 0.75·nβ, relaxes in 2/(ε·κ_min) ≈ 3,900 steps, so
  this run is too short to converge and is reported as such (``low_ess``, ``drift``).
- ``linreg-1024``: a 10-parameter linear regression (n = 10⁴, Gaussian noise) with 1,024 chains,
  eager and ``compile=True`` (first call, then cached), against λ_β from the closed form.

- ``dln-1e8-fit``: the ``dln-1e8`` network at a larger batch (``--batch``, default 2,048: the
  minibatch top curvature ∝ (√h + √B)²/B falls 4.6× from B = 256, so ε rises as much, while a
  step costs less than 4.6× more), with as many steps as fit in ``--budget-s`` (``dln_within``:
  the step's cost timed alone, the set-up's estimated from it, then one estimate).
  ``--compile`` passes ``compile=True`` (one fused kernel for the step's elementwise work: on the
  fourth loan a draw took 0.20 s against 0.096 s for its gradients alone).
  ``--tf32`` lets the matrix products use TF32 (10-bit mantissa, float32 accumulation): its
  rounding, ≈ 5·10⁻⁴·‖f(x)‖ per sample, is far below the posterior's own residual at this nβ
  (‖f_w(x) − y‖ ≈ √(2λ/nβ) ≈ 120 against ‖y‖ ≈ 76), so it moves E[L] by ≈ 10⁻⁷ relatively.

- ``dln-1e8-short``: the same with 100 + 400 fixed steps, to time the set-up's phases
  (``--profile N`` prints the N slowest calls by cumulative time, also when interrupted).

Timings synchronise the device; "steps/s" is burn-in plus draws over the whole call (adaptation,
full-data losses and diagnostics included). Peak memory is torch's peak allocation on the device.

    python benchmarks/bench_gpu_llc.py [--only NAME ...] [--device cuda] [--profile N]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import math
import os
import pstats
import time

import torch

import numeric
from numeric.potential.reference import GaussianLinear, expected_llc


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _orthogonal(h: int, g: torch.Generator) -> torch.Tensor:
    q, r = torch.linalg.qr(torch.randn(h, h, generator=g))
    return q * torch.sign(torch.diagonal(r))  # Haar-distributed


def _dln_problem(dim: int, device: str):
    """(h, n, loss_fn, w*, data) of the module docstring's deep linear network of ≈ dim params."""
    h = max(2, round(math.sqrt(dim / 3)))
    n = max(8192, 4 * h)
    g = torch.Generator().manual_seed(0)
    ws = {f"W{i}": _orthogonal(h, g).to(device) for i in range(3)}
    x = torch.randn(n, h, generator=g).to(device)

    def f(p: dict[str, torch.Tensor], xb: torch.Tensor) -> torch.Tensor:
        return xb @ p["W0"].T @ p["W1"].T @ p["W2"].T

    precision = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")
    with torch.no_grad():
        y = f(ws, x)  # labels in full float32 whatever --tf32 says: the same problem either way
    torch.set_float32_matmul_precision(precision)

    def loss_fn(p: dict[str, torch.Tensor], b: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        xb, yb = b
        return 0.5 * (f(p, xb) - yb).square().sum(-1).mean()

    return h, n, loss_fn, ws, (x, y)


def dln(dim: int, device: str, problem: tuple | None = None, **kw) -> dict:
    h, n, loss_fn, ws, data = problem or _dln_problem(dim, device)
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    _sync(device)
    t = time.perf_counter()
    est = numeric.estimate_llc(loss_fn, ws, data, seed=0, progress=False, **kw)
    _sync(device)
    wall = time.perf_counter() - t
    steps = est.config.num_burnin + est.config.num_draws
    return dict(
        params=3 * h * h,
        n=n,
        chains=est.config.num_chains,
        batch=est.config.batch_size,
        burnin=est.config.num_burnin,
        draws=est.config.num_draws,
        step_size=est.config.step_size,
        integrator=est.config.integrator,
        friction=est.config.friction,
        preconditioner=est.config.preconditioner,
        relaxation_steps=est.config.relaxation_steps,
        nbeta=est.nbeta,
        wall_s=wall,
        steps_per_s=steps / wall,
        chain_steps_per_s=steps * est.config.num_chains / wall,
        estimate=est.mean,
        stderr=est.stderr,
        ess=est.ess,
        rhat=est.rhat,
        exact=h * h / 2,
        findings=[f"{f.severity}:{f.code}" for f in est.diagnostics],
        peak_gib=torch.cuda.max_memory_allocated() / 2**30 if device.startswith("cuda") else None,
    )


# ``dln_within``'s costs in units of a step's gradients (the fifth H200 loan)
DRAW_PER_GRADIENTS = 2.2  # a draw
SETUP_IN_GRADIENTS = 1250  # the set-up and what follows the draws


def gradient_seconds(problem: tuple, batch: int, chains: int, device: str) -> float:
    """Seconds of a control-variate step's minibatch gradients timed alone on this device:
    ∇L_B at w and at w* for each chain, 2·chains gradients (``dln_within`` costs the rest)."""
    _, _, loss_fn, ws, (x, y) = problem
    w = {k: v.detach().clone().requires_grad_(True) for k, v in ws.items()}
    b = (x[:batch], y[:batch])

    def grads() -> None:
        for _ in range(2 * chains):
            torch.autograd.grad(loss_fn(w, b), list(w.values()))

    grads()  # warm-up: kernels chosen, workspace allocated
    _sync(device)
    t = time.perf_counter()
    for _ in range(3):
        grads()
    _sync(device)
    return (time.perf_counter() - t) / 3


def dln_within(dim: int, device: str, budget_s: float, **kw) -> dict:
    """The ``dln`` estimate with as many steps as fit in ``budget_s`` seconds of this call.

    The minibatch gradients of a step are timed alone (``gradient_seconds``, g seconds). The fifth
    H200 loan (``benchmarks/RESULTS.md``, TF32, eager, g = 0.083 s) measured what the run costs
    around them: a draw 0.18 s (2.2·g: the update's passes over [4, 10⁸] and the records), a
    burn-in step 0.14 s, and 62 s of set-up before the burn-in (17 s of Hessian spectrum, 39 s of
    step-size adaptation, 6 s more of warm-up), besides the heating probe and full-data losses
    after the draws. So steps are costed at 2.2·g and the fixed part at 1,250·g (≈ 104 s at
    10⁸; the fourth loan's 1.15·g a step and 1,400·g fixed planned about twice the steps that
    fit, and none of its runs nor the fifth's reached the estimate). The run takes nine
    tenths of the steps that fit after both, a quarter of them burn-in, and no step check; the
    e-folding time of the softest identifiable direction (``relaxation_steps`` in the result)
    says whether the burn-in is long enough. ``compile=True`` adds its first compilation,
    ≈ 90 s cold on the H200 (fifth loan, at 10⁶ parameters), not counted here.
    """
    t0 = time.perf_counter()
    problem = _dln_problem(dim, device)
    precision = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")  # for the record: the step at full float32
    full_fp32 = gradient_seconds(problem, kw["batch_size"], kw["num_chains"], device)
    torch.set_float32_matmul_precision(precision)
    grads_s = gradient_seconds(problem, kw["batch_size"], kw["num_chains"], device)
    print(f"gradients at {precision}: {grads_s:.4f} s, at highest: {full_fp32:.4f} s", flush=True)
    fixed = SETUP_IN_GRADIENTS * grads_s
    left = budget_s - (time.perf_counter() - t0) - fixed
    steps = int(0.9 * left / (DRAW_PER_GRADIENTS * grads_s))
    if steps < 400:
        raise RuntimeError(f"{left:.0f} s left fit only {steps} steps (gradients {grads_s:.3f} s)")
    burnin = steps // 4
    print(f"run: {burnin} + {steps - burnin} steps", flush=True)
    kw.update(num_burnin=burnin, num_draws=steps - burnin, step_check=False)
    row = dln(dim, device, problem, **kw)
    return dict(
        row,
        gradients_s=grads_s,
        gradients_highest_s=full_fp32,
        fixed_guess_s=fixed,
        budget_s=budget_s,
    )


def linreg_1024(device: str) -> dict:
    g = torch.Generator().manual_seed(1)
    X = torch.randn(10_000, 10, generator=g)
    m = GaussianLinear(X, X @ torch.randn(10, generator=g) + torch.randn(10_000, generator=g))
    w_hat = m.minimiser()
    out: dict = {}
    for label, compile_ in (("eager", False), ("compiled_first", True), ("compiled_cached", True)):
        _sync(device)
        t = time.perf_counter()
        est = numeric.estimate_llc(
            m.loss_fn,
            {"w": w_hat},
            m.data,
            num_chains=1024,
            seed=0,
            device=device,
            compile=compile_,
            progress=False,
        )
        _sync(device)
        wall = time.perf_counter() - t
        steps = est.config.num_burnin + est.config.num_draws
        out[label] = dict(
            wall_s=wall,
            steps=steps,
            steps_per_s=steps / wall,
            chain_steps_per_s=1024 * steps / wall,
            estimate=est.mean,
            stderr=est.stderr,
            findings=[f"{f.severity}:{f.code}" for f in est.diagnostics],
        )
    ref = expected_llc(m, w_hat, nbeta=est.nbeta, gamma=1.0).value
    return dict(params=10, chains=1024, exact_finite_temperature=ref, exact=5.0, **out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--json", default="benchmarks/out/bench_gpu_llc.json")
    ap.add_argument("--budget-s", type=float, default=300.0, help="dln-1e8-fit's whole time")
    ap.add_argument("--batch", type=int, default=2048, help="batch size of dln-1e8-fit and -short")
    ap.add_argument("--size", type=float, default=1e8, help="parameters of dln-1e8-fit and -short")
    ap.add_argument("--profile", type=int, default=0, help="print this many cProfile rows")
    ap.add_argument("--tf32", action="store_true", help="TF32 matrix products (module docstring)")
    ap.add_argument("--compile", action="store_true", help="dln-1e8-fit with compile=True")
    args = ap.parse_args()
    dev = args.device
    if args.tf32:  # the documented switch; the older allow_tf32 flag is deprecated since 2.9
        torch.set_float32_matmul_precision("high")
    jobs = {
        "linreg-1024": lambda: linreg_1024(dev),
        "dln-1e6": lambda: dln(10**6, dev, num_chains=4),
        "dln-1e8": lambda: dln(
            10**8, dev, num_chains=4, batch_size=256, num_burnin=1500, num_draws=1000
        ),
        "dln-1e8-short": lambda: dln(
            int(args.size),
            dev,
            num_chains=4,
            batch_size=args.batch,
            num_burnin=100,
            num_draws=400,
            step_check=False,
        ),
        "dln-1e8-fit": lambda: dln_within(
            int(args.size),
            dev,
            args.budget_s,
            num_chains=4,
            batch_size=args.batch,
            compile=args.compile,
        ),
    }
    rows = {}
    profile = cProfile.Profile() if args.profile else None
    try:
        for name, job in jobs.items():
            if args.only and name not in args.only:
                continue
            if profile is not None:
                profile.enable()
            rows[name] = job()
            print(name, json.dumps(rows[name]), flush=True)
    finally:  # also when stopped by SIGINT (timeout -s INT): the profile of what ran
        if profile is not None:
            profile.disable()
            pstats.Stats(profile).sort_stats("cumulative").print_stats(args.profile)
    info = dict(
        torch=torch.__version__,
        device=torch.cuda.get_device_name() if dev.startswith("cuda") else "cpu",
        float32_matmul_precision=torch.get_float32_matmul_precision(),
        matmul_fp32_precision=getattr(torch.backends.cuda.matmul, "fp32_precision", None),
    )
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as fh:
        json.dump(dict(**info, rows=rows), fh, indent=1)


if __name__ == "__main__":
    main()
