"""Does the step-size check earn its cost on the battery? (issue 60: every rule earns its cost.)

For each data case of the calibration battery (``verification.battery``; the potentials run MALA,
which has no check) at each seed, the default estimator twice: as users run it (the check on
where ``numeric.options.wants_step_check`` says so) and with ``step_check=False``. Both runs
share the random stream up to the end of the draws, so the second's λ̂ is the first's λ̂(ε); the
pair gives the check's wall-time cost and its effect on the verdict against the case's target:

* *rescued*: wrong without the check (|z| > band), correct with it;
* *spoiled*: correct without, wrong with;
* *flagged*: an error finding only the check raises (``drift_after_draws``).

    python benchmarks/bench_step_check.py --seeds 0 --jobs 2
    python benchmarks/bench_step_check.py --only "reduced-rank" --seeds 0 1

Writes benchmarks/out/step_check.json (or --json), each pair as it ends to ``<json>.partial.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

import torch

from verification import battery
from verification.calibration.run import default_estimator

NON_ORIGIN = "away from the origin"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (one torch thread each)")
    ap.add_argument("--json", default="benchmarks/out/step_check.json")
    ap.add_argument("--only", nargs="+", default=None, help="cases whose name or family has one")
    ap.add_argument("--with-non-origin", action="store_true", help="add the 25 non-origin cases")
    ap.add_argument("--band", type=float, default=3.0)
    return ap.parse_args(argv)


def _arm(case, built, seed: int, targets: dict, **options: Any) -> dict[str, Any]:
    """One default estimate (with ``options``), timed, scored against the case's target (kept in
    ``targets`` by (nβ, γ): the two arms share it, and an HMC target costs 20–600 s)."""
    t0 = time.perf_counter()
    try:
        est = default_estimator(case, built, seed, **options)
    except Exception as exc:  # a failed run counts as wrong and caught, as in calibrate
        return {"failure": type(exc).__name__, "seconds": time.perf_counter() - t0}
    seconds = time.perf_counter() - t0
    key = (float(est.nbeta), float(est.config.gamma))
    if key not in targets:
        targets[key] = case.target(built, *key)
    target = targets[key]
    se = math.hypot(est.stderr, target.sigma)
    c, sc = est.config, est.step_check
    return {
        "estimate": est.mean,
        "stderr": est.stderr,
        "target": target.value,
        "target_sigma": target.sigma,
        "z": (est.mean - target.value) / se if se > 0 else math.nan,
        "errors": sorted({f.code for f in est.diagnostics if f.severity == "error"}),
        "codes": sorted({f"{f.code}:{f.severity}" for f in est.diagnostics}),
        "seconds": seconds,
        "burnin": c.num_burnin,
        "draws": c.num_draws,
        "check_steps": 0 if sc is None else 2 * (sc.num_relax + sc.num_draws),
        "check": None
        if sc is None
        else {
            "applied": sc.applied,
            "bias": sc.bias,
            "bias_stderr": sc.bias_stderr,
            "at_step": sc.llc_at_step,
            "at_half": sc.llc_at_half_step,
            "trend": sc.trend,
            "trend_stderr": sc.trend_stderr,
        },
    }


def run_pair(index: int, case_name: str, seed: int) -> dict[str, Any]:
    """The case's two arms at ``seed`` (the case looked up by name: workers rebuild the battery)."""
    torch.set_num_threads(1)
    case = next(c for c in battery("full") if c.name == case_name)
    built = case.build(seed)
    targets: dict = {}
    on = _arm(case, built, seed, targets)
    off = _arm(case, built, seed, targets, step_check=False)
    return {"index": index, "case": case.name, "family": case.family, "dim": case.dim,
            "seed": seed, "on": on, "off": off}  # fmt: skip


def _correct(arm: dict[str, Any], band: float) -> bool:
    return "failure" not in arm and math.isfinite(arm["z"]) and abs(arm["z"]) <= band


def summarise(pairs: list[dict[str, Any]], band: float) -> dict[str, Any]:
    """Where the check ran: how often it was applied, the verdicts it changed, its time share."""
    ran = [p for p in pairs if p["on"].get("check") is not None]
    out = {"pairs": len(pairs), "check_ran": len(ran)}
    out["applied"] = sum(p["on"]["check"]["applied"] for p in ran)
    out["rescued"] = [
        p["case"] for p in ran if _correct(p["on"], band) and not _correct(p["off"], band)
    ]
    out["spoiled"] = [
        p["case"] for p in ran if _correct(p["off"], band) and not _correct(p["on"], band)
    ]
    out["only_check_errors"] = [
        (p["case"], sorted(set(p["on"]["errors"]) - set(p["off"].get("errors", ()))))
        for p in ran
        if set(p["on"].get("errors", ())) - set(p["off"].get("errors", ()))
    ]
    on_s = sum(p["on"]["seconds"] for p in ran)
    off_s = sum(p["off"]["seconds"] for p in ran)
    out["seconds_on"], out["seconds_off"] = on_s, off_s
    out["wrong_off"] = sum(not _correct(p["off"], band) for p in ran)
    out["wrong_on"] = sum(not _correct(p["on"], band) for p in ran)
    return out


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    cases = [c for c in battery("full") if c.kind == "data"]
    if not args.with_non_origin:
        cases = [c for c in cases if NON_ORIGIN not in c.family]
    if args.only:
        cases = [c for c in cases if any(s in c.name or s in c.family for s in args.only)]
    work = [(i, c.name, s) for i, (c, s) in enumerate((c, s) for c in cases for s in args.seeds)]
    os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
    pairs: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    with open(args.json + ".partial.jsonl", "w") as log, ProcessPoolExecutor(args.jobs) as pool:
        for fut in as_completed([pool.submit(run_pair, *w) for w in work]):
            p = fut.result()
            pairs.append(p)
            on, off = p["on"], p["off"]
            print(f"{p['case']} (seed {p['seed']}): on {on.get('estimate', math.nan):.3f} "
                  f"z {on.get('z', math.nan):+.2f} {on['seconds']:.1f} s | off "
                  f"{off.get('estimate', math.nan):.3f} z {off.get('z', math.nan):+.2f} "
                  f"{off['seconds']:.1f} s | check {on.get('check')}", flush=True)  # fmt: skip
            log.write(json.dumps(p) + "\n")
            log.flush()
    pairs.sort(key=lambda p: p["index"])
    summary = summarise(pairs, args.band)
    print(json.dumps(summary, indent=1))
    with open(args.json, "w") as fh:
        json.dump({"summary": summary, "pairs": pairs, "seconds": time.perf_counter() - t0,
                   "settings": vars(args)}, fh, indent=1)  # fmt: skip


if __name__ == "__main__":
    main()
