"""The default estimator on linear networks away from the origin (issue 64, item 5).

Runs ``verification.calibrate(default_estimator, cases, seeds=(seed,))`` on the battery's
"RRR/DLN away from the origin" cases (``verification.factorisations.network_points``), smallest
first, two worker processes, until ``--budget`` seconds have passed (cases not started by then are
listed as not run). Each record is scored against its target, the *local* λ's shifted target, and
also against the same target built from the *global* λ (Aoyagi's at the origin, same rank):

    target_global = target_local − (λ_local − λ_global) + ((m_local − 1) − (m_global − 1))/log nβ,
    σ_global      = √((½(m_global − 1)/log nβ)² + (β·λ_global)²),   nβ = n/log n, β = nβ/n,

(the data shift nβ·(L_n(w*) − min L_n) is the same for both: L_n depends on the product only).
Writes benchmarks/out/calibration_nonorigin.json.

    nice -n 10 python benchmarks/bench_calibration_nonorigin.py --budget 1200
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import time

import torch

from verification.calibration import battery, calibrate, default_estimator


def _global_z(record, case) -> tuple[float, float, float]:
    """(target_global, σ_global, z_global) for a record of ``case`` (a FactorisedCase battery
    case; module docstring)."""
    fc = case.build.keywords["case"]
    loc, glo = fc.exact(), fc.global_exact()
    nbeta = case.n / math.log(case.n)
    log_nb = math.log(nbeta)
    target = record.target - float(loc.lam - glo.lam) + (loc.mult - glo.mult) / log_nb
    sigma = math.hypot(0.5 * (glo.mult - 1) / log_nb, float(glo.lam) * nbeta / case.n)
    z = (record.estimate - target) / math.hypot(record.stderr, sigma)
    return target, sigma, z


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=1200.0, help="seconds; no case starts after")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", default="benchmarks/out/calibration_nonorigin.json")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    cases = sorted((c for c in battery("full") if "away from the origin" in c.family),
                   key=lambda c: c.dim)  # fmt: skip
    t0, rows, not_run = time.perf_counter(), [], []
    for i in range(0, len(cases), args.jobs):
        chunk = cases[i : i + args.jobs]
        if time.perf_counter() - t0 > args.budget:
            not_run += [c.name for c in chunk]
            continue
        report = calibrate(default_estimator, chunk, seeds=(args.seed,), jobs=len(chunk))
        for case, r in zip(chunk, report.records):
            fc = case.build.keywords["case"]
            loc, glo = fc.exact(), fc.global_exact()
            tg, sg, zg = _global_z(r, case)
            row = {
                "case": r.case, "family": r.family, "dim": r.dim, "seed": r.seed,
                "lambda_local": str(loc.lam), "m_local": loc.mult,
                "lambda_global": str(glo.lam), "m_global": glo.mult,
                "estimate": r.estimate, "stderr": r.stderr,
                "target_local": r.target, "sigma_local": r.target_sigma, "z_local": r.z,
                "target_global": tg, "sigma_global": sg, "z_global": zg,
                "error_findings": list(r.error_findings), "failure": r.failure,
                "seconds": r.seconds,
            }  # fmt: skip
            row = {k: _plain(v) for k, v in row.items()}
            rows.append(row)
            print(json.dumps(row, ensure_ascii=False), flush=True)
        _write(args, rows, not_run, time.perf_counter() - t0)
    _write(args, rows, not_run, time.perf_counter() - t0)


def _plain(v: object) -> object:
    """NaN and ±inf as None (JSON)."""
    return None if isinstance(v, float) and not math.isfinite(v) else v


def _write(args: argparse.Namespace, rows: list[dict], not_run: list[str], seconds: float) -> None:
    finite = [r for r in rows if r["z_local"] is not None and math.isfinite(r["z_local"])]
    summary = {
        "cases_run": len(rows),
        "local |z| <= 2": sum(abs(r["z_local"]) <= 2 for r in finite),
        "local |z| <= 3": sum(abs(r["z_local"]) <= 3 for r in finite),
        "global |z| <= 2": sum(abs(r["z_global"]) <= 2 for r in finite),
        "global |z| <= 3": sum(abs(r["z_global"]) <= 3 for r in finite),
        "false alarms (|z_local| <= 3, error finding)": sum(
            abs(r["z_local"]) <= 3 and bool(r["error_findings"]) for r in finite
        ),
        "missed (|z_local| > 3, no error finding)": sum(
            abs(r["z_local"]) > 3 and not r["error_findings"] for r in finite
        ),
        "caught (|z_local| > 3 or failed, error finding)": sum(
            (r not in finite or abs(r["z_local"]) > 3) and bool(r["error_findings"]) for r in rows
        ),
    }
    out = {
        "machine": {"platform": platform.platform(), "torch": torch.__version__},
        "estimator": "verification.calibration.default_estimator (4 chains, defaults), seed "
        f"{args.seed}, {args.jobs} worker processes, nice -n 10 on a shared 2-core machine",
        "summary": summary,
        "records": rows,
        "not_run": not_run,
        "seconds": seconds,
    }
    with open(args.json, "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=1, ensure_ascii=False, allow_nan=False)


if __name__ == "__main__":
    main()
