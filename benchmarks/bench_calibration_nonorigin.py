"""The default estimator on linear networks away from the origin (issue 64, item 5).

Runs ``verification.calibrate(default_estimator, cases, seeds=(seed,))`` on the battery's
"RRR/DLN away from the origin" cases (``verification.factorisations.network_points``), smallest
first, two worker processes, until ``--budget`` seconds have passed (cases not started by then are
listed as not run). Each record is scored against three values:

* the battery's target, λ_β(γ) of the same L_n by HMC on its closed form
  (``verification.calibration.models.hmc_target``): what the estimator estimates;
* the *local* λ's shifted target (``shifted_target`` of the ``FactorisedCase``):
  λ_loc − (m_loc−1)/log nβ − nβ·(L_n(w*) − min L_n) ± √((½(m_loc−1)/log nβ)² + (β·λ_loc)²);
* the same built from the *global* λ (Aoyagi's at the origin, same rank),

    target_global = target_local − (λ_local − λ_global) + ((m_local − 1) − (m_global − 1))/log nβ,
    σ_global      = √((½(m_global − 1)/log nβ)² + (β·λ_global)²),   nβ = n/log n, β = nβ/n,

(the data shift nβ·(L_n(w*) − min L_n) is the same for both: L_n depends on the product only).
``--rescore JSON`` reads the estimates of an earlier run instead and scores them (rebuilding
each case's data at the record's seed). Writes benchmarks/out/calibration_nonorigin.json.

    nice -n 10 python benchmarks/bench_calibration_nonorigin.py --budget 1200
    python benchmarks/bench_calibration_nonorigin.py --rescore benchmarks/out/calibration_nonorigin.json
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import time

import torch

from numeric.findings.codes import PREMISE_CODES
from verification.calibration import battery, calibrate, default_estimator
from verification.calibration.models import TargetError, shifted_target


def _scores(case, seed: int, estimate: float, stderr: float, target_hmc=None) -> dict:
    """The three targets of one estimate of ``case`` (module docstring) and its z against each;
    ``target_hmc`` (value, σ) where the run already has it."""
    fc = case.build.keywords["case"]
    loc, glo = fc.exact(), fc.global_exact()
    nbeta = case.n / math.log(case.n)
    log_nb = math.log(nbeta)
    built = case.build(seed)
    local = shifted_target(built, nbeta, 1.0, case=fc, n=case.n)
    t_glo = local.value - float(loc.lam - glo.lam) + (loc.mult - glo.mult) / log_nb
    s_glo = math.hypot(0.5 * (glo.mult - 1) / log_nb, float(glo.lam) * nbeta / case.n)
    hmc_failure = ""
    if target_hmc is None:
        try:
            t = case.target(built, nbeta, 1.0)
            target_hmc = (t.value, t.sigma)
        except TargetError as exc:
            target_hmc, hmc_failure = (math.nan, math.nan), str(exc)

    def z(value: float, sigma: float) -> float:
        return (estimate - value) / math.hypot(stderr, sigma)

    return {
        "lambda_local": str(loc.lam), "m_local": loc.mult,
        "lambda_global": str(glo.lam), "m_global": glo.mult,
        "estimate": estimate, "stderr": stderr,
        "target_hmc": target_hmc[0], "sigma_hmc": target_hmc[1], "z_hmc": z(*target_hmc),
        "hmc_failure": hmc_failure,
        "target_local": local.value, "sigma_local": local.sigma, "z_local": z(local.value, local.sigma),
        "target_global": t_glo, "sigma_global": s_glo, "z_global": z(t_glo, s_glo),
    }  # fmt: skip


def _rescore(args: argparse.Namespace, by_name: dict) -> None:
    with open(args.rescore, encoding="utf-8") as fh:
        earlier = json.load(fh)
    t0, rows = time.perf_counter(), []
    for r in earlier["records"]:
        scored = _scores(by_name[r["case"]], r["seed"], r["estimate"], r["stderr"])
        row = {k: r[k] for k in ("case", "family", "dim", "seed")}
        row |= scored | {k: r[k] for k in ("error_findings", "failure", "seconds")}
        rows.append({k: _plain(v) for k, v in row.items()})
        print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    args.estimator_note = f"the estimates of {args.rescore} ({earlier['estimator']}), re-scored"
    _write(args, rows, earlier.get("not_run", []), time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=1200.0, help="seconds; no case starts after")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--min-dim", type=int, default=0, help="only cases of at least this size")
    ap.add_argument("--rescore", default=None, help="score the estimates of this JSON instead")
    ap.add_argument("--json", default="benchmarks/out/calibration_nonorigin.json")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    cases = sorted((c for c in battery("full") if "away from the origin" in c.family),
                   key=lambda c: c.dim)  # fmt: skip
    if args.rescore:
        _rescore(args, {c.name: c for c in cases})
        return
    args.estimator_note = (
        "verification.calibration.default_estimator (4 chains, defaults), seed "
        f"{args.seed}, {args.jobs} worker processes"
    )
    cases = [c for c in cases if c.dim >= args.min_dim]
    t0, rows, not_run = time.perf_counter(), [], []
    for i in range(0, len(cases), args.jobs):
        chunk = cases[i : i + args.jobs]
        if time.perf_counter() - t0 > args.budget:
            not_run += [c.name for c in chunk]
            continue
        report = calibrate(default_estimator, chunk, seeds=(args.seed,), jobs=len(chunk))
        for case, r in zip(chunk, report.records):
            hmc = (r.target, r.target_sigma) if math.isfinite(r.target) else None
            row = {"case": r.case, "family": r.family, "dim": r.dim, "seed": r.seed}
            row |= _scores(case, r.seed, r.estimate, r.stderr, hmc)
            row |= {"error_findings": list(r.error_findings), "failure": r.failure,
                    "seconds": r.seconds}  # fmt: skip
            rows.append({k: _plain(v) for k, v in row.items()})
            print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
        _write(args, rows, not_run, time.perf_counter() - t0)
    _write(args, rows, not_run, time.perf_counter() - t0)


def _plain(v: object) -> object:
    """NaN and ±inf as None (JSON)."""
    return None if isinstance(v, float) and not math.isfinite(v) else v


def _flagged(row: dict) -> bool:
    """An error finding that says λ̂ is off (the premise findings, w* not a minimum, apart)."""
    return any(code not in PREMISE_CODES for code in row["error_findings"])


def _write(args: argparse.Namespace, rows: list[dict], not_run: list[str], seconds: float) -> None:
    summary: dict[str, object] = {"cases_run": len(rows)}
    for which in ("hmc", "local", "global"):
        key = f"z_{which}"
        finite = [r for r in rows if r[key] is not None and math.isfinite(r[key])]
        summary[f"{which}: scored"] = len(finite)
        summary[f"{which}: |z| <= 2"] = sum(abs(r[key]) <= 2 for r in finite)
        summary[f"{which}: |z| <= 3"] = sum(abs(r[key]) <= 3 for r in finite)
        summary[f"{which}: false alarms (|z| <= 3, flagged)"] = sum(
            abs(r[key]) <= 3 and _flagged(r) for r in finite
        )
        summary[f"{which}: missed (|z| > 3, not flagged)"] = sum(
            abs(r[key]) > 3 and not _flagged(r) for r in finite
        )
        summary[f"{which}: caught (|z| > 3, flagged)"] = sum(
            abs(r[key]) > 3 and _flagged(r) for r in finite
        )
    out = {
        "machine": {"platform": platform.platform(), "torch": torch.__version__},
        "estimator": args.estimator_note,
        "summary": summary,
        "records": rows,
        "not_run": not_run,
        "seconds": seconds,
    }
    with open(args.json, "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=1, ensure_ascii=False, allow_nan=False)


if __name__ == "__main__":
    main()
