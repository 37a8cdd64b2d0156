"""Issue 60's goal for a transformer: a default estimate (``numeric.estimate_llc(loss_fn, params,
data, num_chains=4, seed=0)`` through ``from_module``) of a trained 10⁴-parameter transformer in
at most 5 minutes.

Trains ``verification.experiments.transformer``'s default model (9,384 parameters, running sum
mod 8 over 8 tokens) with Adam on n sequences, then estimates λ̂ at the trained weights (eval
mode) with the estimator's defaults. The ``numeric`` logger's phase lines (INFO) are printed and
kept. ``--time-budget`` passes the estimator's ``time_budget`` (not a default: the phases are
then cut to fit it, with the ``time_budget`` finding). ``--stop-after`` seconds (default 600)
ends a run that is still going: during the draws the estimator returns what it has (the
``interrupted`` finding); in an earlier phase the record says which phase was running.

On a quiet 2-core CPU (torch 2.13, 2 threads) the default estimate did not finish in 600 s:
set-up (Hessian spectrum by Lanczos) 27 s, warm-up 18 s, burn-in 2,152 steps in 228 s, then
3,432 draws in 333 s with the loss trace's ESS at 11 of the 100 the stopping rule asks for;
λ̂ = 500.9 ± 2.4 when stopped (``gradient_at_w_star``: Adam leaves ‖∇L_n(w*)‖ = 0.71).

    python benchmarks/bench_transformer.py [--n 2048] [--steps 2000] [--stop-after 600] [--debug]

Writes benchmarks/out/bench_transformer.json (or --json). Time on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import signal
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import numeric  # noqa: E402
from verification.experiments.transformer import (  # noqa: E402
    TransformerConfig,
    accuracy,
    num_params,
    token_cross_entropy,
    train_transformer,
)


class Phases(logging.Handler):
    """Keeps the ``numeric`` logger's lines with the seconds since the estimate began."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.start = time.perf_counter()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"[{time.perf_counter() - self.start:7.1f} s] {record.getMessage()}")


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # the estimator ends its draws on Ctrl-C and returns what it has


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2048, help="training sequences")
    parser.add_argument("--steps", type=int, default=2000, help="Adam steps")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stop-after", type=float, default=600.0, help="seconds of estimating")
    parser.add_argument("--json", default=os.path.join(HERE, "out", "bench_transformer.json"))
    parser.add_argument("--debug", action="store_true", help="also the phases' planned steps")
    parser.add_argument(
        "--time-budget", type=float, default=None, help="the estimator's time_budget (seconds)"
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s: %(message)s")
    logging.getLogger("numeric").setLevel(logging.DEBUG if args.debug else logging.INFO)

    config = TransformerConfig()
    trained = train_transformer(config, n=args.n, steps=args.steps, seed=args.seed)
    model, data = trained.model.eval(), trained.data
    out = {
        "config": {k: getattr(config, k) for k in config.__dataclass_fields__},
        "num_params": num_params(config),
        "n": trained.n,
        "train_steps": args.steps,
        "train_seconds": round(trained.seconds, 2),
        "train_loss": trained.run.final_loss,
        "train_accuracy": accuracy(model, data),
        "test_loss": trained.test_loss(),
        "test_accuracy": accuracy(model, trained.test),
        "chance_loss": math.log(config.vocab),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "cpus": os.cpu_count(),
        "load_average_before": os.getloadavg(),
        "time_budget": args.time_budget,
    }
    print(json.dumps(out, indent=1), flush=True)

    loss_fn, params = numeric.from_module(model, token_cross_entropy)
    phases = Phases()
    logging.getLogger("numeric").addHandler(phases)
    signal.signal(signal.SIGALRM, _stop)
    signal.setitimer(signal.ITIMER_REAL, args.stop_after)
    t0 = time.perf_counter()
    try:
        est = numeric.estimate_llc(
            loss_fn, params, data, num_chains=4, seed=args.seed, time_budget=args.time_budget
        )
    except KeyboardInterrupt:
        est = None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    out["estimate_seconds"] = round(time.perf_counter() - t0, 2)
    out["load_average_after"] = os.getloadavg()
    out["phases"] = phases.lines
    if est is None:
        out["stopped"] = f"no estimate after {args.stop_after:g} s (stopped before the draws)"
    else:
        out.update(
            llc=est.mean,
            stderr=est.stderr,
            nbeta=est.nbeta,
            init_loss=est.init_loss,
            findings=[(f.code, f.severity) for f in est.diagnostics],
            summary=str(est),
        )
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as fh:
        json.dump(out, fh, indent=1)
    print(json.dumps({k: v for k, v in out.items() if k != "summary"}, indent=1))
    if est is not None:
        print(est)


if __name__ == "__main__":
    main()
