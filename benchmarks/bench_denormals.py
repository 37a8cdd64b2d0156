"""What flushing denormals to zero (``numeric.backend.denormals``) buys on a trained classifier
(CPU).

A ReLU MLP 64-H-10 trained on digits as in ``bench_lau_goals --mlp`` (SGD with Nesterov momentum,
2,000 steps, batch 64) is confident, so its softmax gives denormal probabilities. Each row is a
fresh process (its own torch thread count, its own processor flags) that times a whole
estimate with fixed settings (4 chains, 200 + 1,000 draws, ε = 3.4·10⁻⁵, BAOAB with friction 2,
no step check), with and without the flags (``numeric.run.estimate_llc.flushing_denormals`` replaced
by a no-op), and records both λ̂. At w* itself no probability is denormal; the chains move to where
some are.

    python benchmarks/bench_denormals.py --hidden 1500 --threads 1,2

Writes benchmarks/out/bench_denormals.json (or --json). Time on a quiet machine.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import numeric  # noqa: E402
import numeric.run.estimate_llc  # noqa: E402
from verification.experiments import sgd, train  # noqa: E402
from verification.experiments.datasets import digits  # noqa: E402
from verification.experiments.networks import num_params, relu_mlp  # noqa: E402


def trained_mlp(hidden: int) -> tuple[torch.nn.Module, tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(0)
    d = digits(g)
    net = relu_mlp([64, hidden, 10], generator=g)
    opt = sgd(0.05, 0.9, nesterov=True)
    train(net, F.cross_entropy, d.train, opt, 2000, generator=g, batch_size=64)
    return net.eval(), d.train


# the default rule's ε on the 64-1500-10 network (bench_lau_goals --mlp 1500, seed 0): given, with
# the friction, so that both runs take the same path up to rounding (an adapted ε or a friction
# raised on a noisy heating measurement can differ between them, and λ̂ then by far more)
STEP_SIZE = 3.4e-5


def estimate_s(net: torch.nn.Module, data: tuple, flush: bool) -> dict:
    if not flush:
        numeric.run.estimate_llc.flushing_denormals = contextlib.nullcontext
    loss_fn, w = numeric.from_module(net, F.cross_entropy)
    start = time.perf_counter()
    est = numeric.estimate_llc(
        loss_fn,
        w,
        data,
        num_chains=4,
        seed=0,
        num_draws=1000,
        num_burnin=200,
        step_check=False,
        step_size=STEP_SIZE,
        integrator="baoab",
        friction=2.0,
    )
    return {
        "estimate_s": time.perf_counter() - start,
        "llc": est.mean,
        "stderr": est.stderr,
        "step_size": est.config.step_size,
        "integrator": est.config.integrator,
        "friction": est.config.friction,
        "findings": [f"{f.code} ({f.severity})" for f in est.diagnostics],
    }


def child(hidden: int, threads: int, flush: bool) -> dict:
    torch.set_num_threads(threads)
    net, data = trained_mlp(hidden)
    return {
        "hidden": hidden,
        "num_params": num_params(net),
        "threads": threads,
        "flush": flush,
        **estimate_s(net, data, flush),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hidden", default="150,1500")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)  # hidden threads flush
    ap.add_argument("--json", default=os.path.join(HERE, "out", "bench_denormals.json"))
    a = ap.parse_args()
    if a.child:
        h, t, fl = a.child
        print(json.dumps(child(int(h), int(t), fl == "1")))
        return
    rows = []
    for h in a.hidden.split(","):
        for t in a.threads.split(","):
            for fl in ("0", "1"):
                cmd = [sys.executable, __file__, "--child", h, t, fl]
                out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
                rows.append(json.loads(out.strip().splitlines()[-1]))
                print(json.dumps(rows[-1]), flush=True)
    info = {"cpus": os.cpu_count(), "torch": torch.__version__}
    with open(a.json, "w") as fh:
        json.dump({"rows": rows, **info}, fh, indent=1)


if __name__ == "__main__":
    main()
