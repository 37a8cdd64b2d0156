"""numeric.estimate_llc against devinterp 1.3.2 on identical settings (CPU).

Both run plain SGLD (Euler step, minibatch gradients: devinterp's update) with the same n, batch
size, chains, burn-in, draws, nβ, γ and ε; both estimate nβ·(mean minibatch loss − L(w*)). The
data are realisable and noise-free (y = f_{w*}(x)), so w* is an exact minimum of L_n with
L_n(w*) = 0 and the exact λ applies to both. ε is the one numeric's automatic rule picks (run
once per model beforehand, outside the timing). numeric is timed three ways in one process:
eager (after a first call, which also pays torch's one-off warm-up and is reported apart), and
with ``compile=True`` on its first call (which compiles the kernel) and on later calls (which
reuse the cached kernel, as every later estimate on the same model does). Eager and cached calls
take a second or less, so each is timed ``REPEATS`` times and the median reported; devinterp's
runs take 7–80 s and are timed once.

The per-step floor: the steady-state time per step (from two run lengths, so fixed per-call costs
cancel) of numeric eager and compiled, beside a bare eager loop that does only what any
vectorised SGLD must (draw a minibatch per chain, one vmapped forward, one backward, the update)
with nothing recorded.

    python benchmarks/bench_vs_devinterp.py            # 8 chains × 1200 steps, 256 × 250
    python benchmarks/bench_vs_devinterp.py --quick    # fewer steps; a few minutes

Needs the ``bench`` extra (devinterp==1.3.2: the last release whose sampler takes a general
``evaluate(model, batch)`` loss; 2.x only samples language models from ``input_ids``).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import numeric

REPEATS = 3  # numeric calls are short and timed REPEATS times (median); devinterp once


class Product(nn.Module):
    """f(x) = w1^a · w2^b · x (scalar parameters)."""

    def __init__(self, a: int, b: int) -> None:
        super().__init__()
        self.a, self.b = a, b
        self.w1 = nn.Parameter(torch.zeros(()))
        self.w2 = nn.Parameter(torch.zeros(()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w1**self.a * self.w2**self.b * x


@dataclass
class Case:
    name: str
    build: Callable[[torch.Generator], tuple[nn.Module, int]]  # model at w*, input dim
    exact: float | None
    mult: int | None  # multiplicity m
    eps_scale: float = 1.0  # ε = eps_scale × the automatic rule's ε


def _linreg(g: torch.Generator) -> tuple[nn.Module, int]:
    m = nn.Linear(10, 1, bias=False)
    with torch.no_grad():
        m.weight.copy_(torch.randn(1, 10, generator=g))
    return m, 10


def _rrr(g: torch.Generator) -> tuple[nn.Module, int]:
    """y = BAx, A: 3×4, B: 4×3, BA of rank 1: A = [a; 0; 0], B = [b, 0, 0] (M=N=4, H=3, r=1)."""
    m = nn.Sequential(nn.Linear(4, 3, bias=False), nn.Linear(3, 4, bias=False))
    with torch.no_grad():
        m[0].weight.zero_()
        m[1].weight.zero_()
        m[0].weight[0] = torch.randn(4, generator=g)
        m[1].weight[:, 0] = torch.randn(4, generator=g)
    return m, 4


def _mlp(g: torch.Generator) -> tuple[nn.Module, int]:
    torch.manual_seed(int(torch.randint(1 << 30, (1,), generator=g)))  # nn init only
    return nn.Sequential(nn.Linear(50, 100), nn.Tanh(), nn.Linear(100, 50)), 50


CASES = [
    Case("linear regression (d=10)", _linreg, 5.0, 1),
    # Aoyagi case 1, M+N+H+r = 12 even: [2(H+r)(M+N) − (M−N)² − (H+r)²]/8 = (64 − 0 − 16)/8 = 6
    Case("reduced rank regression M=N=4, H=3, r=1", _rrr, 6.0, 1),
    Case("y = w1·w2·x at 0", lambda g: (Product(1, 1), 1), 0.5, 2),
    # K ∝ w1^4 w2^6: λ = min(1/4, 1/6) = 1/6, m = 1
    # plain SGLD at the rule's ε diverged (a chain at step 712 of 1,200, after the random stream
    # changed): K grows like w2⁶ along the flat axis, so this case runs at half that ε
    Case("y = w1²·w2³·x at 0", lambda g: (Product(2, 3), 1), 1 / 6, 1, eps_scale=0.5),
    Case("2-layer MLP 50-100-50 (10,150 params)", _mlp, None, None),
]


def half_sq(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return 0.5 * (out - y).square().reshape(out.shape[0], -1).sum(-1).mean()


def make_data(model: nn.Module, d_in: int, n: int, g: torch.Generator):
    x = torch.randn(n, d_in, generator=g)
    with torch.no_grad():
        y = model(x)
    return x, y


def run_numeric(
    model, data, *, chains, burnin, draws, nbeta, gamma, eps, batch, seed, compile=False
):
    loss_fn, params = numeric.from_module(model, half_sq)
    t = time.perf_counter()
    est = numeric.estimate_llc(
        loss_fn,
        params,
        data,
        nbeta=nbeta,
        gamma=gamma,
        step_size=eps,
        num_chains=chains,
        num_draws=draws,
        num_burnin=burnin,
        batch_size=batch,
        seed=seed,
        gradient="minibatch",
        integrator="euler",
        full_loss_every=0,
        progress=False,
        compile=compile,
    )
    return time.perf_counter() - t, est.mean, est.stderr


def bare_loop_step_us(model, data, *, chains, nbeta, gamma, eps, batch, seed=0, steps=300) -> float:
    """µs per step of the minimal vectorised SGLD loop (nothing recorded, no diagnostics)."""
    from torch.func import functional_call, vmap

    from numeric.inputs.flat_params import flatten_params

    w_star, spec = flatten_params(dict(model.named_parameters()), dtype=None, device=None)

    def f(w, xb, yb):
        return half_sq(functional_call(model, spec.unflatten(w), (xb,)), yb)

    per_chain = vmap(f)
    x, y = data
    g = torch.Generator().manual_seed(seed)
    w = w_star.expand(chains, -1).clone()

    def run(k: int) -> float:
        nonlocal w
        t = time.perf_counter()
        for _ in range(k):
            idx = torch.randint(len(x), (chains, batch), generator=g)
            ww = w.requires_grad_(True)
            (gr,) = torch.autograd.grad(per_chain(ww, x[idx], y[idx]).sum(), ww)
            with torch.no_grad():
                xi = torch.randn(w.shape, generator=g)
                w = w - 0.5 * eps * (nbeta * gr + gamma * (w - w_star)) + math.sqrt(eps) * xi
        return time.perf_counter() - t

    run(20)
    return (run(steps) - run(steps // 3)) / (steps - steps // 3) * 1e6


def steady_step_us(model, data, *, chains, compile, **kw) -> float:
    """µs per step of numeric in the steady state: (t(long) − t(short)) / (extra steps)."""
    long, short = 600, 200
    t_long, _, _ = run_numeric(
        model, data, chains=chains, burnin=0, draws=long, compile=compile, **kw
    )
    t_short, _, _ = run_numeric(
        model, data, chains=chains, burnin=0, draws=short, compile=compile, **kw
    )
    return (t_long - t_short) / (long - short) * 1e6


def run_devinterp(model, data, *, chains, burnin, draws, nbeta, gamma, eps, batch, seed):
    from devinterp.optim.sgld import SGLD
    from devinterp.slt.sampler import estimate_learning_coeff_with_summary

    loader = DataLoader(TensorDataset(*data), batch_size=batch, shuffle=True)

    def evaluate(m, b):
        x, y = b
        return half_sq(m(x), y)

    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = estimate_learning_coeff_with_summary(
            model,
            loader,
            evaluate=evaluate,
            sampling_method=SGLD,
            optimizer_kwargs=dict(lr=eps, localization=gamma, nbeta=nbeta),
            num_chains=chains,
            num_draws=draws,
            num_burnin_steps=burnin,
            init_loss=1e-300,
            verbose=False,
            seed=seed,
            device="cpu",
        )
    dt = time.perf_counter() - t
    per_chain = torch.tensor([r[f"llc-chain/{i}"] for i in range(chains)])
    return dt, float(r["llc/mean"]), float(per_chain.std()) / math.sqrt(chains)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cases", type=int, nargs="*", help="indices into CASES (default: all)")
    ap.add_argument("--json", default="benchmarks/out/bench_vs_devinterp.json")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    n, batch, gamma = 10_000, 100, 1.0
    nbeta = n / math.log(n)
    plans = [
        (8, 100, 400) if args.quick else (8, 200, 1000),
        (256, 10, 40) if args.quick else (256, 50, 200),
    ]
    rows = []
    for case in [CASES[i] for i in args.cases] if args.cases else CASES:
        g = torch.Generator().manual_seed(0)
        model, d_in = case.build(g)
        data = make_data(model, d_in, n, g)
        loss_fn, params = numeric.from_module(model, half_sq)
        auto = numeric.estimate_llc(
            loss_fn,
            params,
            data,
            nbeta=nbeta,
            gamma=gamma,
            batch_size=batch,
            num_chains=4,
            num_draws=200,
            seed=99,
            gradient="minibatch",
            integrator="euler",
        )
        eps = auto.config.step_size * case.eps_scale
        for chains, burnin, draws in plans:
            kw = dict(
                chains=chains,
                burnin=burnin,
                draws=draws,
                nbeta=nbeta,
                gamma=gamma,
                eps=eps,
                batch=batch,
                seed=1,
            )
            t_eager_first, _, _ = run_numeric(model, data, **kw)
            eager_runs = [run_numeric(model, data, **kw) for _ in range(REPEATS)]
            t_first, _, _ = run_numeric(model, data, **kw, compile=True)  # includes compiling
            comp_runs = [run_numeric(model, data, **kw, compile=True) for _ in range(REPEATS)]
            # same seed: every repeat returns the same estimate; the time is the median
            t_num, (_, m_num, s_num) = statistics.median(r[0] for r in eager_runs), eager_runs[0]
            t_comp, (_, m_comp, s_comp) = statistics.median(r[0] for r in comp_runs), comp_runs[0]
            t_dev, m_dev, s_dev = run_devinterp(model, data, **kw)
            fkw = dict(nbeta=nbeta, gamma=gamma, eps=eps, batch=batch, seed=1)
            floor = dict(
                bare_us=bare_loop_step_us(model, data, chains=chains, **fkw),
                eager_us=steady_step_us(model, data, chains=chains, compile=False, **fkw),
                compiled_us=steady_step_us(model, data, chains=chains, compile=True, **fkw),
            )
            row = dict(
                model=case.name,
                chains=chains,
                burnin=burnin,
                draws=draws,
                eps=eps,
                nbeta=nbeta,
                gamma=gamma,
                batch=batch,
                n=n,
                exact=case.exact,
                m=case.mult,
                numeric_first_s=t_eager_first,
                numeric_s=t_num,
                numeric_runs_s=[r[0] for r in eager_runs],
                compiled_runs_s=[r[0] for r in comp_runs],
                devinterp_s=t_dev,
                ratio=t_dev / t_num,
                compiled_s=t_comp,
                compile_s=t_first - t_comp,
                ratio_compiled=t_dev / t_comp,
                compiled_llc=m_comp,
                compiled_se=s_comp,
                numeric_llc=m_num,
                numeric_se=s_num,
                devinterp_llc=m_dev,
                devinterp_se=s_dev,
                devinterp_step_us=t_dev / (burnin + draws) * 1e6,
                **floor,
            )
            rows.append(row)
            print(json.dumps(row), flush=True)
    import os

    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(dict(torch=torch.__version__, threads=args.threads, rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
