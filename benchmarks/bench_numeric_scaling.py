"""Time per SGLD step against chains (1–1024) and parameters (10²–10⁷), and peak memory (CPU).

Model: a deep linear network x ↦ W3 W2 W1 x (three square layers of width h, D = 3h²) on
noise-free data from itself (n = 4096, batch 64), so w* is an exact minimum. Each configuration
runs in a fresh subprocess; peak RSS (ru_maxrss) there minus the RSS after building the data is
set against the size of one [chains, D] float32 tensor (the baseline is the RSS after a warm-up
call, so one-off imports are not counted), to check memory is O(chains × D) with no
per-chain copies of the data. ε is fixed (no adaptation); the default gradient estimator
(control variate, two forward/backward passes per step) is timed, and plain minibatch SGLD too.
"ms / step" is the steady state: (t(steps) − t(steps/3)) / (2·steps/3) over two estimates, so
the fixed per-call work (full-data gradient at w*, diagnostics) cancels; "call s" is the whole
longer call. On CUDA the timings synchronise and memory is the peak allocated on the device.

    python benchmarks/bench_numeric_scaling.py [--quick]            # CPU grid, 10²–10⁷ params
    python benchmarks/bench_numeric_scaling.py --device cuda        # GPU: DLN 10⁶ and 10⁸ params,
                                                                    # 1–1024 chains of a small one
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time

import torch


def _current_rss() -> int:
    """Resident set size now, in bytes (Linux /proc)."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def one(chains: int, dim: int, gradient: str, steps: int, threads: int, device: str) -> dict:
    import numeric

    torch.set_num_threads(threads)
    cuda = device.startswith("cuda")
    h = max(2, round(math.sqrt(dim / 3)))
    g = torch.Generator().manual_seed(0)
    ws = {f"W{i}": (torch.randn(h, h, generator=g) / math.sqrt(h)).to(device) for i in range(3)}
    x = torch.randn(4096, h, generator=g).to(device)

    def f(p, xb):
        return xb @ p["W0"].T @ p["W1"].T @ p["W2"].T

    y = f(ws, x)

    def loss_fn(p, b):
        xb, yb = b
        return 0.5 * (f(p, xb) - yb).square().sum(-1).mean()

    kw = dict(
        nbeta=100.0,
        gamma=1.0,
        step_size=1e-6,
        num_chains=chains,
        batch_size=64,
        gradient=gradient,
        integrator="euler",
        progress=False,
        full_loss_every=10**9,
    )

    def timed(k: int) -> float:
        if cuda:
            torch.cuda.synchronize()
        t = time.perf_counter()
        numeric.estimate_llc(loss_fn, ws, (x, y), num_draws=k, num_burnin=0, **kw)
        if cuda:
            torch.cuda.synchronize()
        return time.perf_counter() - t

    timed(4)  # warm-up: also the one-off imports (sympy through torch's functorch, ~80 MB)
    base = _current_rss()
    if cuda:
        torch.cuda.reset_peak_memory_stats()
        base_dev = torch.cuda.memory_allocated()
    short = max(4, steps // 3)
    t_long, t_short = timed(steps), timed(short)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    extra = (peak - base) / 2**20
    if cuda:
        extra = (torch.cuda.max_memory_allocated() - base_dev) / 2**20
    d = 3 * h * h
    return dict(
        chains=chains,
        params=d,
        gradient=gradient,
        steps=steps,
        device=torch.cuda.get_device_name() if cuda else "cpu",
        ms_per_step=1e3 * max(t_long - t_short, 0.0) / (steps - short),
        call_s=t_long,
        peak_rss_mb=peak / 2**20,
        extra_mb=extra,
        state_mb=chains * d * 4 / 2**20,
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dims", type=int, nargs="*", help="only the 1-chain rows of these sizes")
    ap.add_argument("--one", nargs=4, metavar=("CHAINS", "DIM", "GRADIENT", "STEPS"))
    ap.add_argument("--json", default="benchmarks/out/bench_numeric_scaling.json")
    args = ap.parse_args()
    if args.one:
        c, d, grad, s = args.one
        print(json.dumps(one(int(c), int(d), grad, int(s), args.threads, args.device)))
        return
    chains = [1, 4, 16, 64, 256, 1024]
    if args.dims:
        configs = [(1, d, "control_variate", 30 if d >= 10**6 else 100) for d in args.dims]
    elif args.device.startswith("cuda"):
        configs = [(c, 300, "control_variate", 300) for c in chains]
        configs += [(1, d, "control_variate", 60) for d in (10**6, 10**8)]
        configs += [(8, 10**6, "control_variate", 60)]
    else:
        dims = [10**2, 10**3, 10**4, 10**5, 10**6] + ([] if args.quick else [10**7])
        configs = [(c, 300, g, 100) for c in chains for g in ("control_variate", "minibatch")]
        configs += [(1, d, "control_variate", 30 if d >= 10**6 else 100) for d in dims]
        configs += [(8, d, "control_variate", 20 if d >= 10**6 else 100) for d in dims[:-1]]
    rows = []
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    for c, d, grad, steps in configs:
        proc = subprocess.run(
            [
                sys.executable,
                __file__,
                "--threads",
                str(args.threads),
                "--device",
                args.device,
                "--one",
                str(c),
                str(d),
                grad,
                str(steps),
            ],
            capture_output=True,
            text=True,
            env=env,
        )
        if proc.returncode != 0:
            sys.exit(f"configuration {(c, d, grad, steps)} failed:\n{proc.stderr}")
        out = proc.stdout.strip().splitlines()[-1]
        row = json.loads(out)
        rows.append(row)
        print(out, flush=True)
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as fh:
        json.dump(dict(torch=torch.__version__, threads=args.threads, rows=rows), fh, indent=1)


if __name__ == "__main__":
    main()
