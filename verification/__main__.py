"""The verification report (exact λ vs SGLD estimates, closed forms): ``slt-verify`` (the console
script ``pip install`` adds) or ``python -m verification``, the same options.

Every option is checked before any case runs; records are saved as each case finishes, so
Ctrl-C (exit status 130) or a crash keeps the finished cases in the output folder.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path, PureWindowsPath

from numeric.provenance import provenance_block

from ._validate import MAX_CHAINS, MAX_N, MAX_SEED, check_device, device_unavailable
from .crosschecks import Settings, catalogue
from .errors import InvalidArgumentError
from .records import RecordWriter
from .report import (
    TARGET_NOTE,
    format_closed_forms,
    format_findings,
    format_table,
    plot_unavailable,
    run_report,
    skipped_note,
    summary_line,
    write_report,
)
from .runner import MAX_THREADS, MAX_WORKERS

EXIT_INTERRUPTED = 130  # the shell's status for a process ended by SIGINT (128 + 2)
SCRIPT_NAME, MODULE_COMMAND = "slt-verify", "python -m verification"


def program_name(argv0: str | None = None) -> str:
    """How the user invoked the CLI, for its usage line: ``slt-verify`` when ``argv0`` (default
    ``sys.argv[0]``) is that console script (``slt-verify.exe`` on Windows; PureWindowsPath
    splits at / and \\ both), else ``python -m verification``."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    return SCRIPT_NAME if PureWindowsPath(argv0 or "").stem == SCRIPT_NAME else MODULE_COMMAND


def _int_in(lo: int, hi: int) -> Callable[[str], int]:
    """An argparse type: an integer in [lo, hi] (argparse names the option in its error)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"must be in [{lo}, {hi:,}], got {value}")
        return value

    parse.__name__ = "integer"
    return parse


def _folder(text: str) -> Path:
    """An argparse type: a folder name; "" would silently mean the current folder, whose
    records and previous report a run replaces."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a folder name, got an empty one")
    return Path(text)


def _device(text: str) -> str:
    try:
        return check_device("device", text)
    except InvalidArgumentError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=program_name(),
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,  # no line break inside slt-verify
    )
    p.add_argument(
        "--quick", action="store_true", help="the small catalogue (4 to 10 minutes on 2 CPU cores)"
    )
    p.add_argument(
        "--out", type=_folder, default=Path("report"), help="output folder (default: report/)"
    )
    p.add_argument(
        "--device", type=_device, default=None, help="torch device for the estimates, e.g. cuda"
    )
    p.add_argument(
        "--chains", type=_int_in(1, MAX_CHAINS), default=8, help="chains per estimate (default 8)"
    )
    p.add_argument(
        "--n", type=_int_in(2, MAX_N), default=10_000, help="sample size n (default 10000)"
    )
    p.add_argument("--seed", type=_int_in(0, MAX_SEED), default=0, help="seed (default 0)")
    p.add_argument(
        "--workers",
        type=_int_in(1, MAX_WORKERS),
        default=1,
        help="local worker processes (default 1)",
    )
    p.add_argument(
        "--threads",
        type=_int_in(1, MAX_THREADS),
        default=1,
        help="torch threads per case (default 1: the models are small, and more threads only "
        "contend for the cores; raise it for a large model on an otherwise idle machine)",
    )
    p.add_argument(
        "--engine",
        choices=["local", "ray"],
        default="local",
        help="where cases run (default local)",
    )
    p.add_argument("--ray-address", default=None, help="Ray cluster address (default: start one)")
    p.add_argument("--no-progress", action="store_true")
    return p


def _check_environment(p: argparse.ArgumentParser, a: argparse.Namespace) -> None:
    """What argparse cannot see alone: the device on this machine, Ray's presence."""
    if a.engine == "local" and a.device is not None and (why := device_unavailable(a.device)):
        p.error(f"argument --device: {why}")
    if a.engine == "ray" and importlib.util.find_spec("ray") is None:
        p.error("argument --engine: 'ray' needs the ray extra (pip install 'slt-check[ray]')")
    if a.ray_address is not None and a.engine != "ray":
        p.error("argument --ray-address: only used with --engine ray")


def _print_report(report, settings: Settings, path: Path) -> None:
    print("\nExact λ against estimates:")
    print(format_table(report.records))
    print(TARGET_NOTE)
    if notes := format_findings(report.records):
        print(f"\n{notes}")
    print("\nClosed forms against exact computations (the smallest counterexample of each):")
    print(format_closed_forms(report.closed_forms))
    print(f"\n{summary_line(report)}")
    print(f"Decision rule: {settings.rule.describe()}.")
    print(f"Report written to {path}.")
    if (why := plot_unavailable()) is not None:
        print(skipped_note(why))


def main(argv: list[str] | None = None) -> int:
    p = _parser()
    a = p.parse_args(argv)
    _check_environment(p, a)
    settings = Settings(n=a.n, num_chains=a.chains, seed=a.seed, device=a.device)
    try:
        # fails here, before the run, if --out cannot be written
        writer = RecordWriter(a.out, provenance_block(device=a.device or "cpu", seed=a.seed))
    except OSError as err:
        p.error(f"argument --out: {err.strerror}")
    entries = catalogue(a.quick)
    total = len(entries)
    try:
        report = run_report(
            a.quick,
            settings,
            entries=entries,
            workers=a.workers,
            progress=not a.no_progress,
            engine=a.engine,
            ray_address=a.ray_address,
            threads=a.threads,
            on_record=writer.add,
        )
    except KeyboardInterrupt:
        print(
            f"\nInterrupted: {writer.count} of {total} cases finished and saved in "
            f"{a.out / 'records.csv'} and records.json.",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    except BaseException:
        print(
            f"\n{writer.count} of {total} cases saved in {a.out / 'records.csv'}.", file=sys.stderr
        )
        raise
    path = write_report(report, a.out)
    _print_report(report, settings, path)
    if report.failed:
        print(
            f"{len(report.failed)} case(s) disagree: {', '.join(r.case for r in report.failed)}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
