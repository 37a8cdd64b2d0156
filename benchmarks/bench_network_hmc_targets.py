"""The battery's linear networks at their true parameter, scored against λ_β(γ) by HMC.

The battery scores reduced-rank regressions and deep linear networks at the true parameter
against the shifted target λ − (m−1)/log nβ − nβ·(L_n(w*) − min L_n), whose systematic
σ = √((½(m−1)/log nβ)² + (β·λ)²) is 10–15% of λ: a band wide enough to hide a biased estimator.
This script computes the exact finite-(nβ, γ) target of the same estimates instead, λ_β(γ) of the
same L_n by Metropolis-adjusted HMC on its closed form (``verification.targets``), and reports
each recorded estimate's z against both. It reads the records of a battery run (``--records``,
default the latest re-run) and rebuilds each case's data at the record's seed; nβ = n/log n and
γ = 1, the settings those estimates ran at.

    python benchmarks/bench_network_hmc_targets.py [--records JSON] [--max-dim 400]

Writes benchmarks/out/network_hmc_targets.json (or --json).
"""

from __future__ import annotations

import argparse
import json
import math
import time

import torch

from verification.calibration import battery
from verification.targets import linear_network_reference

FAMILIES = ("reduced-rank regression", "deep linear network")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", default="benchmarks/out/calibration_rerun.json")
    ap.add_argument("--max-dim", type=int, default=400)
    ap.add_argument("--json", default="benchmarks/out/network_hmc_targets.json")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    by_name = {c.name: c for c in battery("full")}
    with open(args.records, encoding="utf-8") as fh:
        records = json.load(fh)["records"]
    todo = [r for r in records if r["family"] in FAMILIES and r["dim"] < args.max_dim]
    rows, t0 = [], time.perf_counter()
    for r in sorted(todo, key=lambda r: r["dim"]):
        case = by_name[r["case"]]
        built = case.build(r["seed"])
        nbeta = case.n / math.log(case.n)
        start = time.perf_counter()
        ref = linear_network_reference(built.aux["problem"], nbeta, 1.0)
        se = r["stderr"]
        z_hmc = (r["estimate"] - ref.value) / math.hypot(se, ref.abserr)
        row = {
            "case": r["case"], "dim": r["dim"], "seed": r["seed"],
            "estimate": r["estimate"], "stderr": se,
            "target_shifted": r["target"], "sigma_shifted": r["target_sigma"], "z_shifted": r["z"],
            "target_hmc": ref.value, "sigma_hmc": ref.abserr, "z_hmc": z_hmc,
            "hmc_usable": ref.usable,
            "hmc_findings": [f"{f.code} ({f.severity})" for f in ref.hmc.diagnostics],
            "hmc_seconds": time.perf_counter() - start,
            "error_findings": r["error_findings"],
        }  # fmt: skip
        rows.append(row)
        print(json.dumps(row, ensure_ascii=False), flush=True)
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"records": rows, "seconds": time.perf_counter() - t0}, fh, indent=1,
                      ensure_ascii=False)  # fmt: skip


if __name__ == "__main__":
    main()
