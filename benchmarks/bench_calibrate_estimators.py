"""Other estimators on the calibration battery (issue 62 item 1, issue 63 item 5).

``verification.calibrate`` scores, on the same ``battery("fast")`` cases and seeds:

* ``default`` — ``numeric.estimate_llc`` / ``estimate_llc_potential`` at its defaults, 4 chains;
* ``paper_sgld`` — the paper procedure (``verification.experiments.paper_sgld``) at the paper
  code's settings: ε = 10⁻⁵, γ = 10, 5,000 steps, B = 100, nβ = n/log n, no burn-in, 4 chains;
* ``devinterp_defaults`` — devinterp 1.3.2 at its documented defaults (lr = 0.01, γ = 0,
  nβ = B/log B, 10 chains × 100 draws, no burn-in; B = 256), data cases only;
* ``devinterp_recommended`` — devinterp 1.3.2 at its examples' settings (lr = 4·10⁻⁴, γ = 100,
  200 draws; the rest as the defaults), data cases only.

Prints each estimator's summary (bias, coverage, |z|, confusion where it has findings, wall time)
and writes benchmarks/out/calibrate_estimators.json: one ``CalibrationReport.to_dict()`` per
estimator, with the settings.

    nice -n 10 python benchmarks/bench_calibrate_estimators.py --seeds 0
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from functools import partial

import torch

from verification.calibration import (
    battery,
    calibrate,
    default_estimator,
    devinterp_estimator,
    paper_sgld_estimator,
)

SETTINGS = {
    "default": "numeric.estimate_llc / estimate_llc_potential, 4 chains, every setting at its "
    "default (the case's own kwargs)",
    "paper_sgld": "paper procedure: Euler SGLD, ε = 1e-5, γ = 10, 5000 steps, B = 100 (shuffled "
    "epochs), nβ = n/log n, minibatch loss trace, no burn-in, 4 chains, stderr across chains",
    "devinterp_defaults": "devinterp 1.3.2 estimate_learning_coeff_with_summary: SGLD lr = 0.01, "
    "localization 0, nβ = B/log B, B = 256 (shuffle), 10 chains × 100 draws, no burn-in, "
    "init_loss from 10 minibatches; stderr across chains",
    "devinterp_recommended": "devinterp 1.3.2 as its examples: lr = 4e-4, localization 100, "
    "nβ = B/log B, B = 256, 10 chains × 200 draws, no burn-in; stderr across chains",
}

ESTIMATORS = {
    "default": (default_estimator, False),
    "paper_sgld": (paper_sgld_estimator, False),
    "devinterp_defaults": (devinterp_estimator, True),
    "devinterp_recommended": (partial(devinterp_estimator, settings="recommended"), True),
}  # name → (estimator, data cases only)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--estimators", nargs="+", choices=list(ESTIMATORS), default=list(ESTIMATORS))
    ap.add_argument("--json", default="benchmarks/out/calibrate_estimators.json")
    args = ap.parse_args(argv)
    torch.set_num_threads(int(os.environ.get("THREADS", "1")))
    cases = battery("fast")
    out: dict[str, object] = {
        "machine": {"platform": platform.platform(), "torch": torch.__version__},
        "seeds": args.seeds,
        "estimators": {},
    }
    for name in args.estimators:
        estimator, data_only = ESTIMATORS[name]
        chosen = [c for c in cases if c.kind == "data"] if data_only else cases
        t0 = time.perf_counter()
        report = calibrate(estimator, chosen, seeds=tuple(args.seeds), progress=True)
        elapsed = time.perf_counter() - t0
        print(f"\n## {name} ({elapsed:.0f} s)\n\n{report.table()}\n", flush=True)
        out["estimators"][name] = {  # type: ignore[index]
            "settings": SETTINGS[name],
            "cases": [c.name for c in chosen],
            "seconds": elapsed,
            "report": report.to_dict(),
        }
    os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
