"""``python -m verification``: the verification report (exact λ vs SGLD estimates, closed forms)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .catalogue import Settings
from .report import (
    format_closed_forms,
    format_findings,
    format_table,
    run_report,
    summary_line,
    write_report,
)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m verification", description=__doc__)
    p.add_argument(
        "--quick", action="store_true", help="the small catalogue (under 2 minutes on 2 CPU cores)"
    )
    p.add_argument(
        "--out", type=Path, default=Path("report"), help="output folder (default: report/)"
    )
    p.add_argument("--device", default=None, help="torch device for the estimates, e.g. cuda")
    p.add_argument("--chains", type=int, default=8, help="chains per estimate (default 8)")
    p.add_argument("--n", type=int, default=10_000, help="sample size n (default 10000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=1, help="local worker processes (default 1)")
    p.add_argument(
        "--engine",
        choices=["local", "ray"],
        default="local",
        help="where cases run (default local)",
    )
    p.add_argument("--ray-address", default=None, help="Ray cluster address (default: start one)")
    p.add_argument("--no-progress", action="store_true")
    a = p.parse_args(argv)
    settings = Settings(n=a.n, num_chains=a.chains, seed=a.seed, device=a.device)
    report = run_report(
        a.quick,
        settings,
        workers=a.workers,
        progress=not a.no_progress,
        engine=a.engine,
        ray_address=a.ray_address,
    )
    path = write_report(report, a.out)
    print(format_table(report.records))
    if notes := format_findings(report.records):
        print(f"\n{notes}")
    print()
    print(format_closed_forms(report.closed_forms))
    print(f"\n{summary_line(report)}")
    print(f"Decision rule: {settings.rule.describe()}.")
    print(f"Report written to {path}.")
    if report.failed:
        print(
            f"{len(report.failed)} case(s) disagree: {', '.join(r.case for r in report.failed)}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
