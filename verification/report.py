"""The verification report: run the catalogue, check the closed forms, write the results.

Outputs in the chosen folder: ``report.md`` (tables), ``records.csv`` / ``records.json`` (one
record per case, plain numbers: :mod:`.records`), ``closed_forms.json`` (every closed-form check),
``llc_vs_exact.png`` (estimated against exact λ on log–log axes with error bars; without
matplotlib it is skipped, and report.md and the CLI say so: :func:`plot_unavailable`). The records
and ``Report.to_dict`` carry a ``provenance`` block (``numeric.provenance``).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from numeric.provenance import provenance_block

from ._validate import check_bool, check_int, check_type
from .closed_forms import ClosedFormSummary, check_closed_forms
from .crosschecks import Entry, Settings, catalogue
from .decision import CrossCheck
from .errors import InvalidArgumentError, InvalidTypeError
from .records import CLOSED_FORMS_NAME, PLOT_NAME, REPORT_NAME, write_records
from .runner import MAX_THREADS, MAX_WORKERS, run_cases

__all__ = ["Report", "plot_unavailable", "run_cases", "run_report", "write_report"]


@dataclass(frozen=True)
class Report:
    records: tuple[CrossCheck, ...]
    closed_forms: tuple[ClosedFormSummary, ...]
    settings: Settings
    seconds: float

    @property
    def failed(self) -> tuple[CrossCheck, ...]:
        """Cases that should agree and do not."""
        return tuple(r for r in self.records if r.verdict == "disagree")

    def provenance(self) -> dict[str, Any]:
        """The versions, source commit, and the run's device (cpu where none was named) and
        seed: ``numeric.provenance.provenance_block``."""
        return provenance_block(device=self.settings.device or "cpu", seed=self.settings.seed)

    def to_dict(self) -> dict[str, object]:
        """Plain data (JSON-able): settings, wall time, records, closed-form summaries and
        ``provenance``."""
        s = self.settings
        return {
            "settings": {
                "n": s.n,
                "num_chains": s.num_chains,
                "seed": s.seed,
                "device": s.device,
                **s.rule.to_dict(),
            },
            "seconds": self.seconds,
            "records": [r.to_dict() for r in self.records],
            "closed_forms": [c.to_dict() for c in self.closed_forms],
            "provenance": self.provenance(),
        }


def run_report(
    quick: bool,
    settings: Settings,
    workers: int = 1,
    progress: bool = True,
    engine: str = "local",
    ray_address: str | None = None,
    *,
    threads: int = 1,
    on_record: Callable[[CrossCheck], None] | None = None,
    entries: Sequence[Entry] | None = None,
) -> Report:
    """Run the catalogue (or ``entries``) with the local engine (``workers`` processes) or on
    Ray, then the closed-form checks. Each case runs with ``threads`` torch threads (see
    :mod:`.runner`); ``on_record`` receives each record as its case finishes (local engine)."""
    check_bool("quick", quick)  # read below even when ``entries`` are given
    check_type("settings", settings, Settings)
    check_int("workers", workers, 1, MAX_WORKERS)
    check_int("threads", threads, 1, MAX_THREADS)
    if engine not in ("local", "ray"):
        raise InvalidArgumentError(f"engine must be 'local' or 'ray', got {engine!r}")
    if ray_address is not None and engine != "ray":
        raise InvalidArgumentError(f"ray_address={ray_address!r} is only used with engine='ray'")
    if on_record is not None and not callable(on_record):
        raise InvalidTypeError(f"on_record must be a function or None, got {on_record!r:.80}")
    t0 = time.perf_counter()
    entries = catalogue(quick) if entries is None else list(entries)
    if engine == "ray":
        from .distributed import run_on_ray

        records = run_on_ray(
            entries, settings, address=ray_address, num_cpus=workers, threads=threads
        )
        for r in records if on_record is not None else ():
            on_record(r)
    else:
        records = run_cases(
            entries, settings, workers, progress, threads=threads, on_record=on_record
        )
    closed = check_closed_forms(max_size=4 if quick else 6, seed=settings.seed)
    return Report(records, closed, settings, time.perf_counter() - t0)


def _fmt(x: float | None, digits: int = 3) -> str:
    return "—" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def _compared_with(r: CrossCheck) -> str:
    """The value z compares the estimate with, its systematic σ_bias, and where it comes from."""
    if r.target is None:
        return "—"
    source = (r.reference_source or "λ_β") if r.reference is not None else "λ − (m−1)/log nβ"
    return f"{_fmt(r.target)} ± {_fmt_sigma(r.bias_sigma)} ({source})"


def _fmt_sigma(sigma: float | None) -> str:
    """σ_bias as 0, to three decimals, or below 0.001 in scientific notation (a quadrature error
    of 3·10⁻⁵ is not "0.000", which reads as no error at all)."""
    if sigma is None or not math.isfinite(sigma):
        return "—"
    if sigma == 0:
        return "0"
    return f"{sigma:.3f}" if sigma >= 0.001 else f"{sigma:.1e}"


def format_table(records: Sequence[CrossCheck]) -> str:
    """One row per case. z compares the estimate with λ_target ± σ_bias, the finite-nβ value a
    perfect sampler returns, not with λ itself: the column says which value that was."""
    head = (
        "| case | exact λ | m | estimate ± se | compared with: λ_target ± σ_bias | z | verdict "
        "| time (s) |"
    )
    lines = [head, "|" + "---|" * 8]
    for r in records:
        lam = str(r.exact.lam) if r.exact.exact else f"[{r.exact.lower}, {r.exact.upper}]"
        lines.append(
            f"| {r.case} | {lam} | {r.exact.mult or '—'} | {_fmt(r.estimate)} ± {_fmt(r.stderr)} | "
            f"{_compared_with(r)} | {_fmt(r.z, 2)} | {r.verdict}"
            f"{' (' + '; '.join(r.reasons) + ')' if r.reasons else ''} | {_fmt(r.seconds, 1)} |"
        )
    return "\n".join(lines)


TARGET_NOTE = (
    "The estimate is compared with λ_target, not with λ: at finite nβ a perfect sampler returns "
    "λ_β, below λ where the model is singular (λ_β from quadrature or a closed form, else "
    "λ − (m−1)/log nβ), and z = (estimate − λ_target)/√(se² + σ_bias²). For the linear "
    "networks (rrr, dln) λ_target is λ_β(γ) of the same L_n by HMC on its closed form: the "
    "chains sit at the true parameter or a factorisation of it, not at the minimum of L_n, and "
    "at γ = 1 they reach more singular points of the zero set nearby; σ_bias is HMC's "
    "standard error."
)


def format_findings(records: Sequence[CrossCheck]) -> str:
    """The error findings behind "inconclusive" verdicts, one line each ("" when there are none)."""
    return "\n".join(f"- {r.case}: {f}" for r in records for f in r.findings)


def format_closed_forms(summaries: Sequence[ClosedFormSummary]) -> str:
    lines = [
        "| formula | cases checked | disagreements | undecided | smallest counterexample |",
        "|---|---|---|---|---|",
    ]
    for s in summaries:
        c = s.smallest_counterexample
        ce = "—" if c is None else f"{c.case}: formula {c.formula_value}, exact {c.exact_value}"
        lines.append(f"| {s.formula} | {s.checked} | {s.disagreements} | {s.undecided} | {ce} |")
    return "\n".join(lines)


def plot_unavailable() -> str | None:
    """Why llc_vs_exact.png cannot be drawn in this environment (None: it can)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as err:
        return f"matplotlib cannot be imported ({err}); pip install 'slt-check[plots]' adds it"
    return None


def _plot(records: Sequence[CrossCheck], path: Path) -> str | None:
    """Draw the figure into ``path``; None when drawn, else why it was skipped."""
    if (why := plot_unavailable()) is not None:
        return why
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as err:
        return f"matplotlib.pyplot cannot be imported ({err})"
    pts = [r for r in records if r.exact.exact and math.isfinite(r.estimate)]
    fig, ax = plt.subplots(figsize=(5, 5))
    colours = {"agree": "C2", "disagree": "C3", "inconclusive": "C1"}
    labelled: set[str] = set()
    for r in pts:
        label = None if r.verdict in labelled else r.verdict
        labelled.add(r.verdict)
        ax.errorbar(
            float(r.exact.lam),
            r.estimate,
            yerr=2 * r.stderr,
            fmt="o",
            color=colours.get(r.verdict, "C0"),
            label=label,
        )
    lo = min([0.1] + [float(r.exact.lam) for r in pts] + [max(r.estimate, 1e-2) for r in pts]) * 0.8
    hi = max([1.0] + [float(r.exact.lam) for r in pts] + [r.estimate for r in pts]) * 1.25
    ax.plot([lo, hi], [lo, hi], "k:", label="estimate = exact")
    ax.set(
        xscale="log",
        yscale="log",
        xlim=(lo, hi),
        ylim=(lo, hi),
        xlabel="exact λ",
        ylabel="estimated λ (± 2 se)",
    )
    ax.set_title("LLC estimates against exact λ")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None


def skipped_note(why: str) -> str:
    """The line report.md and the CLI print for the figure not drawn."""
    return f"{PLOT_NAME} was not written: {why}."


def summary_line(report: Report) -> str:
    """One line: how many cases agree / disagree / are inconclusive / have no exact value (each
    shown where any has it, so the counts add up), and the wall time."""
    counts = {
        v: sum(r.verdict == v for r in report.records)
        for v in ("agree", "disagree", "inconclusive", "no exact value")
    }
    parts = [f"{counts['agree']} agree", f"{counts['disagree']} disagree"]
    parts.append(f"{counts['inconclusive']} inconclusive")
    if counts["no exact value"]:
        parts.append(f"{counts['no exact value']} without an exact value")
    return f"{len(report.records)} cases: {', '.join(parts)}; {report.seconds:.0f} s in all."


def _check_folder(out: Path) -> None:
    """``out`` is, or can be made, a folder: neither it nor a parent is an existing file."""
    for path in (out, *out.parents):
        if path.exists():
            if not path.is_dir():
                what = "is" if path == out else f"is inside {str(path)!r}, which is"
                raise InvalidArgumentError(
                    f"out must be a folder for the report's files, but {str(out)!r} {what} an "
                    "existing file; name a new or existing folder instead"
                )
            return


def write_report(report: Report, out: Path) -> Path:
    """Write report.md, records.csv, records.json, closed_forms.json and llc_vs_exact.png into
    ``out`` (a folder, created if missing; an existing file there raises
    ``InvalidArgumentError``). Without matplotlib the figure is skipped and report.md says why."""
    check_type("report", report, Report)
    out = Path(out)
    _check_folder(out)
    out.mkdir(parents=True, exist_ok=True)
    write_records(report.records, out, report.provenance())
    closed = json.dumps([c.to_dict() for c in report.closed_forms], indent=2, ensure_ascii=False)
    (out / CLOSED_FORMS_NAME).write_text(closed, encoding="utf-8")
    skipped = _plot(report.records, out / PLOT_NAME)
    s = report.settings
    md = [
        "# Verification report",
        "",
        summary_line(report),
        f"Settings: n = {s.n}, {s.num_chains} chains, seed {s.seed}, device {s.device or 'cpu'}.",
        f"Decision rule: {s.rule.describe()}.",
        "",
        "## Exact λ against estimates",
        "",
        "λ_target is the λ_β reference where there is one: the value a perfect sampler returns at "
        "this n, nβ and γ (closed form for linear regression; quadrature of K for potentials, and "
        "of the data's L_n for normal-crossing regressions, whose chains sit at the true "
        "parameter, not at a minimum of L_n; HMC on the closed-form L_n for linear networks, "
        "whose chains also sit at the true parameter or a factorisation of it). For linear "
        "networks of 400 parameters or more it is λ − (m − 1)/log nβ − nβ·(L_n(w*) − min L_n), "
        "the data's shift computed exactly (first order for a singular model), with β·λ in "
        "σ_bias. Elsewhere it is "
        "λ − (m − 1)/log nβ, with half that shift, and β·λ for regressions localised at the true "
        "parameter, as σ_bias.",
        "",
        format_table(report.records),
        *(["", notes] if (notes := format_findings(report.records)) else []),
        "",
        "## Closed forms against exact computations",
        "",
        format_closed_forms(report.closed_forms),
    ]
    if skipped is None:
        md += ["", f"![estimated vs exact λ]({PLOT_NAME})"]
    else:
        md += ["", skipped_note(skipped)]
    path = out / REPORT_NAME
    path.write_text("\n".join(md) + "\n", encoding="utf-8")
    return path
