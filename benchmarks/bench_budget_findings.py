"""Issue 60: the findings of runs cut by the time budget, scored against a reference.

The battery (``bench_calibration.py``) runs without a budget. Three families of trained or
teacher networks have estimates at a budget that cuts them, and a reference for each:

* ``entropy``: 16 digits MLPs (18,186 parameters) at ``time_budget=30``
  (``bench_entropy_paper.py --tag T``); reference: the same points at ``time_budget=120``, where
  every run ended on its own with no error finding (``entropy_paper_tb120.json``).
* ``saddles``: the saddle-to-saddle checkpoints (a 400-parameter linear network) at
  ``time_budget=20`` (``bench_saddles_paper.py --time-budget 20``); reference: the same checkpoints
  unbudgeted (``saddles_paper_seed{S}.json``).
* ``dln``: the paper's 20 deep-linear teachers (413–4,540 parameters, n = 10⁵) at
  ``time_budget=60`` (``bench_dln_paper.py --arm true``); target: λ_β by HMC where it was run
  (``--dln-hmc``: records of the same teachers), else the battery's shifted target for its large
  networks, Aoyagi's λ ± λ·nβ/n (8.7% of λ).

Each run becomes a ``verification.calibration.CalibrationRecord`` (correct: |z| ≤ 3 against the
reference with its own se; flagged: an error finding other than the premise ones), and the
report prints the confusion matrix and per-code rates:

    python benchmarks/bench_budget_findings.py --entropy benchmarks/out/entropy_paper_T.json \\
        --saddles benchmarks/out/saddles_paper_seed0_tb20.json ... --dln benchmarks/out/dln_paper_true.json

Writes ``--out`` (default benchmarks/out/budget_findings.json).
"""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from verification.calibration.report import CalibrationRecord, CalibrationReport, finding_pair

OUT = "benchmarks/out"


def _findings(listed: str) -> list[tuple[str, str]]:
    """An ``LLCPoint``'s "code (severity); …" back to pairs."""
    return [finding_pair(p.strip()) for p in listed.split(";") if p.strip()]


def _record(family: str, case: str, est: dict[str, Any], target: float, sigma: float):
    """A record of an ``LLCPoint`` dict (``estimate.*`` keys stripped) against a target."""
    return CalibrationRecord.make(
        case=case, family=family, dim=int(est["num_params"]), kind="budget", seed=0,
        estimate=est["llc"], stderr=est["stderr"], target=target, target_sigma=sigma,
        findings=_findings(est["findings"]), seconds=est["seconds"],
    )  # fmt: skip


def _est(row: dict[str, Any], prefix: str = "estimate.") -> dict[str, Any]:
    return {k.removeprefix(prefix): v for k, v in row.items() if k.startswith(prefix)}


def entropy_records(path: str, reference: str) -> list[CalibrationRecord]:
    """The entropy-SGD family's budget-cut runs against the same points at 120 s."""
    ref = {(r["optimizer"], r["seed"]): _est(r) for r in json.load(open(reference))["true"]}
    out = []
    for row in json.load(open(path))["true"]:
        r = ref[(row["optimizer"], row["seed"])]
        case = f"entropy {row['optimizer']} seed {row['seed']}"
        out.append(_record("entropy", case, _est(row), r["llc"], r["stderr"]))
    return out


def saddle_records(path: str) -> list[CalibrationRecord]:
    """A saddle run's budget-cut checkpoints against the same checkpoints unbudgeted
    (``saddles_paper_seed{S}.json`` beside it)."""
    cut = json.load(open(path))
    seed = cut["args"]["seed"]
    ref = {
        r["step"]: _est(r) for r in json.load(open(f"{OUT}/saddles_paper_seed{seed}.json"))["true"]
    }
    out = []
    for row in cut["true"]:
        r = ref[row["step"]]
        case = f"saddle seed {seed} step {row['step']} rank {row['rank']}"
        out.append(_record("saddles", case, _est(row), r["llc"], r["stderr"]))
    return out


def _hmc_targets(paths: list[str]) -> dict[str, tuple[float, float]]:
    """Teacher widths → (λ_β by HMC, se) from records of the same teachers: a sweep's
    (``points``, their ``target.*``) or one teacher's (``widths``, ``hmc``, ``se``)."""
    out: dict[str, tuple[float, float]] = {}
    for path in paths:
        data = json.load(open(path))
        if "points" in data:
            for p in data["points"]:
                if math.isfinite(p["target.llc"]):
                    out[p["teacher.widths"]] = (p["target.llc"], p["target.stderr"])
        else:
            out["-".join(map(str, data["widths"]))] = (data["hmc"], data["se"])
    return out


def dln_records(path: str, hmc_from: list[str] = ()) -> list[CalibrationRecord]:
    """The teachers' budget-cut runs against λ_β by HMC where it was run (this record or
    ``hmc_from``), else the battery's shifted target for its large networks
    (``verification.calibration.models.shifted_target``; the labels are noise-free, so
    L_n(w*) = min L_n): λ − (m−1)/log nβ ± √((½(m−1)/log nβ)² + (λ·nβ/n)²)."""
    hmc = _hmc_targets([path, *hmc_from])
    out = []
    for p in json.load(open(path))["points"]:
        lam, m, nbeta = p["teacher.lam"], p["teacher.mult"], p["estimate.nbeta"]
        shift = (m - 1) / math.log(nbeta)
        sigma = math.hypot(0.5 * shift, lam * nbeta / p["n"])
        target, sigma = hmc.get(p["teacher.widths"], (lam - shift, sigma))
        out.append(_record("dln", f"dln {p['teacher.widths']}", _est(p), target, sigma))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entropy", nargs="*", default=[])
    ap.add_argument("--entropy-reference", default=f"{OUT}/entropy_paper_tb120.json")
    ap.add_argument("--saddles", nargs="*", default=[])
    ap.add_argument("--dln", nargs="*", default=[])
    ap.add_argument("--dln-hmc", nargs="*", default=[], help="records of the same teachers' HMC")
    ap.add_argument("--out", default=f"{OUT}/budget_findings.json")
    args = ap.parse_args()
    records = [r for p in args.entropy for r in entropy_records(p, args.entropy_reference)]
    records += [r for p in args.saddles for r in saddle_records(p)]
    records += [r for p in args.dln for r in dln_records(p, args.dln_hmc)]
    report = CalibrationReport(tuple(records))
    print(report.table())
    with open(args.out, "w") as f:
        json.dump({"args": vars(args), **report.to_dict()}, f, indent=1)


if __name__ == "__main__":
    main()
