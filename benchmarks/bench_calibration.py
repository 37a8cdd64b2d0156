"""Calibration of the LLC estimator on the battery (issue 60 item 1, issue 63 item 5).

Runs ``verification.calibrate`` with the default estimator (what users run: 4 chains, every
setting at its default, the case's own nβ/γ/α where it has them) on the battery's cases and
seeds, prints the Markdown table (confusion of correct/wrong against error findings, per-code
rates, one row per run) and writes the report as JSON with the machine it ran on.

    python benchmarks/bench_calibration.py --size fast --seeds 0
    python benchmarks/bench_calibration.py --size full --seeds 0 1 --jobs 2 --skip-large
    python benchmarks/bench_calibration.py --only "two basins" --seeds 0 1 2
    python benchmarks/bench_calibration.py --budget-fraction 0.3 \
        --budget-from benchmarks/out/calibration_rerun2.json --json benchmarks/out/calibration_budget.json

``--budget-fraction F`` runs each data case with ``time_budget`` = F × its wall time in the
report ``--budget-from`` (at least 1 s): the battery's runs cut by the clock, scored like the rest
(the potentials' estimator has no time budget).

Writes benchmarks/out/calibration.json (or --json), and each record as it ends to
``<json>.partial.jsonl``, so that a run cut short keeps what it finished
(``CalibrationReport.from_dict({"records": [...]})`` scores them).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import torch

from verification import battery, calibrate
from verification.calibration.run import default_estimator


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=("fast", "full"), default="full")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (one torch thread each)")
    ap.add_argument("--json", default="benchmarks/out/calibration.json")
    ap.add_argument("--skip-large", action="store_true", help="leave out the large DLNs")
    ap.add_argument("--only", nargs="+", default=None, help="cases whose name or family has one")
    ap.add_argument("--band", type=float, default=3.0)
    ap.add_argument("--budget-fraction", type=float, default=None)
    ap.add_argument("--budget-from", default=None, help="a report whose wall times set the budgets")
    return ap.parse_args(argv)


class Budgeted:
    """The default estimator with ``time_budget`` = ``fraction`` × the case's wall time in an
    earlier report (at least ``MIN_BUDGET`` s); a class, so that worker processes can take it."""

    MIN_BUDGET = 1.0

    def __init__(self, fraction: float, report: str) -> None:
        with open(report) as fh:
            records = json.load(fh)["records"]
        self.fraction = fraction
        self.seconds = {(r["case"], r["seed"]): r["seconds"] for r in records}

    def __call__(self, case, built, seed: int):
        spent = self.seconds.get((case.name, seed), self.seconds.get((case.name, 0)))
        if spent is None:
            raise KeyError(f"no wall time for {case.name!r} in the budget report")
        budget = max(self.fraction * spent, self.MIN_BUDGET)
        return default_estimator(case, built, seed, time_budget=budget)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(int(os.environ.get("THREADS", "1")))
    cases = battery(args.size)
    if args.skip_large:
        cases = [c for c in cases if not c.large]
    if args.only:
        cases = [c for c in cases if any(s in c.name or s in c.family for s in args.only)]
    t0 = time.perf_counter()
    partial_path = args.json + ".partial.jsonl"  # each record as it ends: a cut run keeps them
    os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
    with open(partial_path, "w") as log:

        def progress(record) -> None:
            print(
                f"{record.case} (seed {record.seed}): {record.estimate:.3f} ± {record.stderr:.3f},"
                f" target {record.target:.3f}, z = {record.z:.2f}, "
                f"{len(record.error_findings)} errors, {record.seconds:.1f} s",
                flush=True,
            )
            log.write(json.dumps(record.to_dict(), allow_nan=False) + "\n")
            log.flush()

        estimator = None
        if args.budget_fraction is not None:
            estimator = Budgeted(args.budget_fraction, args.budget_from)
            known = {name for name, _ in estimator.seconds}  # data models: potentials have no clock
            cases = [c for c in cases if c.name in known and c.kind != "potential"]
        report = calibrate(
            estimator, cases=cases, seeds=tuple(args.seeds), band=args.band, jobs=args.jobs,
            progress=progress,
        )  # fmt: skip
    seconds = time.perf_counter() - t0
    out = {
        **report.to_dict(),
        "settings": {
            "size": args.size,
            "seeds": args.seeds,
            "jobs": args.jobs,
            "skip_large": args.skip_large,
            "only": args.only,
            "cases": len(cases),
            "budget_fraction": args.budget_fraction,
            "budget_from": args.budget_from,
        },
        "machine": {
            "torch": torch.__version__,
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "platform": platform.platform(),
        },
        "seconds": seconds,
    }
    os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
    with open(args.json, "w") as fh:
        json.dump(out, fh, indent=1, allow_nan=False)
    print(report.table())
    print(f"\n{len(report.records)} runs in {seconds:.0f} s; wrote {args.json}")


if __name__ == "__main__":
    main()
