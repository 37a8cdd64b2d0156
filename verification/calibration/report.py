r"""Records and report of a calibration run (:func:`verification.calibrate`).

A run is *correct* when |z| ≤ band, z = (λ̂ − target)/√(se² + σ²), σ the target's own
uncertainty; *flagged* when a finding of severity "error" fired that says λ̂ is off its target
(the premise findings, ``numeric.findings.codes.PREMISE_CODES``, which say w* is not a minimum, are
counted apart: their rates are in the per-code table). A run with no z (an estimate,
standard error or target that is NaN, a failed run) is wrong. The confusion of the two:

=============  ============================  ======================
               error finding                 no error finding
=============  ============================  ======================
correct        false alarm                   quiet
wrong          caught                        missed
=============  ============================  ======================

false-alarm rate = false alarms / correct, miss rate = missed / wrong (NaN when there are none).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import asdict, dataclass

from numeric.findings.codes import PREMISE_CODES
from numeric.provenance import provenance_block

from .._validate import check_real, check_type

__all__ = ["Accuracy", "CalibrationRecord", "CalibrationReport", "CodeRate", "Confusion"]

COVERAGE_LEVELS = (1, 2, 3)


def _ratio(num: int, den: int) -> float:
    return num / den if den else math.nan


def _plain(x: float) -> float | None:
    """JSON-ready: None for NaN and ±inf."""
    return float(x) if math.isfinite(x) else None


@dataclass(frozen=True)
class CalibrationRecord:
    """One case at one seed: the estimate, the target and what the estimator said.

    ``findings`` are (code, severity) pairs in the estimator's order; ``error_findings`` the codes
    of severity "error"; ``rel_error`` = (λ̂ − target)/|target| (signed; NaN at target 0);
    ``failure`` the error a failed run raised ("" otherwise)."""

    case: str
    family: str
    dim: int
    kind: str
    seed: int
    estimate: float
    stderr: float
    target: float
    target_sigma: float
    z: float
    correct: bool
    rel_error: float
    findings: tuple[tuple[str, str], ...]
    error_findings: tuple[str, ...]
    seconds: float
    failure: str = ""

    @classmethod
    def make(
        cls,
        *,
        case: str,
        family: str,
        dim: int,
        kind: str,
        seed: int,
        estimate: float,
        stderr: float,
        target: float,
        target_sigma: float,
        findings: Iterable[tuple[str, str]],
        seconds: float,
        band: float = 3.0,
        failure: str = "",
    ) -> CalibrationRecord:
        """A record with z, ``correct``, ``rel_error`` and ``error_findings`` derived."""
        band = check_real("band", band, 0.0, open_lo=True)
        estimate, stderr, target, sigma = map(float, (estimate, stderr, target, target_sigma))
        findings = tuple((str(c), str(s)) for c, s in findings)
        denom = math.hypot(stderr, sigma) if math.isfinite(stderr + sigma) else math.nan
        diff = estimate - target
        z = diff / denom if math.isfinite(diff) and denom > 0 else math.nan
        return cls(
            case=case,
            family=family,
            dim=dim,
            kind=kind,
            seed=seed,
            estimate=estimate,
            stderr=stderr,
            target=target,
            target_sigma=sigma,
            z=z,
            correct=bool(abs(z) <= band),  # False for NaN
            rel_error=diff / abs(target) if target != 0 else math.nan,
            findings=findings,
            error_findings=tuple(dict.fromkeys(c for c, s in findings if s == "error")),
            seconds=float(seconds),
            failure=failure,
        )

    @property
    def flagged(self) -> bool:
        """An error finding fired that says λ̂ is off its target (not one of the premise
        findings, ``numeric.findings.codes.PREMISE_CODES``, which say w* is not a minimum)."""
        return any(c not in PREMISE_CODES for c in self.error_findings)

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        for key in ("estimate", "stderr", "target", "target_sigma", "z", "rel_error", "seconds"):
            out[key] = _plain(out[key])
        out["findings"] = [f"{c} ({s})" for c, s in self.findings]
        out["error_findings"] = list(self.error_findings)
        return out


@dataclass(frozen=True)
class Confusion:
    """Counts of (correct, wrong) × (error finding, none) and the two rates."""

    false_alarm: int  # correct, flagged
    quiet: int  # correct, not flagged
    caught: int  # wrong, flagged
    missed: int  # wrong, not flagged

    @property
    def false_alarm_rate(self) -> float:
        return _ratio(self.false_alarm, self.false_alarm + self.quiet)

    @property
    def miss_rate(self) -> float:
        return _ratio(self.missed, self.caught + self.missed)

    def to_dict(self) -> dict[str, object]:
        return {
            **asdict(self),
            "false_alarm_rate": _plain(self.false_alarm_rate),
            "miss_rate": _plain(self.miss_rate),
        }


@dataclass(frozen=True)
class CodeRate:
    """How one finding code (at one severity) fired: on correct runs, on wrong runs, and the
    precision (share of its firings that were on wrong runs)."""

    code: str
    severity: str
    on_correct: int
    share_of_correct: float
    on_wrong: int
    share_of_wrong: float

    @property
    def precision(self) -> float:
        return _ratio(self.on_wrong, self.on_correct + self.on_wrong)

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        for key in ("share_of_correct", "share_of_wrong"):
            out[key] = _plain(out[key])
        return {**out, "precision": _plain(self.precision)}


def finding_pair(text: str) -> tuple[str, str]:
    """ "code (severity)", as records list a finding, back to (code, severity)."""
    code, _, sev = text.rpartition(" (")
    return code, sev.rstrip(")")


def _num(x: object, default: float = math.nan) -> float:
    """A JSON number back to a float (None, which ``_plain`` wrote for NaN/inf: ``default``)."""
    return default if x is None else float(x)  # type: ignore[arg-type]


def _fmt(x: float, digits: int = 3) -> str:
    return "—" if not math.isfinite(x) else f"{x:.{digits}f}"


def _sigma(x: float) -> str:
    if not math.isfinite(x):
        return "—"
    return "0" if x == 0 else (f"{x:.3f}" if x >= 0.001 else f"{x:.1e}")


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else math.nan


def _median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else math.nan


@dataclass(frozen=True)
class Accuracy:
    """Over a report's records: how many ran, had a z, failed; the mean bias λ̂ − target (and
    relative to |target|), mean and median |z|, the share with |z| ≤ 2 (95% for honest error
    bars and a Gaussian z) and the median wall time per run."""

    runs: int
    with_z: int
    failed: int
    mean_bias: float
    mean_rel_bias: float
    mean_abs_z: float
    median_abs_z: float
    coverage_2: float
    median_seconds: float

    def to_dict(self) -> dict[str, object]:
        return {k: v if isinstance(v, int) else _plain(v) for k, v in asdict(self).items()}

    def line(self) -> str:
        return (
            f"mean bias {_fmt(self.mean_bias)} ({_fmt(100 * self.mean_rel_bias, 1)}%), "
            f"|z| mean {_fmt(self.mean_abs_z, 2)}, median {_fmt(self.median_abs_z, 2)}, "
            f"|z| ≤ 2: {_fmt(self.coverage_2, 2)} of {self.with_z}; "
            f"median {_fmt(self.median_seconds, 1)} s a run, {self.failed} failed"
        )


@dataclass(frozen=True)
class CalibrationReport:
    """The records of a calibration run and the ``band`` |z| ≤ band that made them correct."""

    records: tuple[CalibrationRecord, ...]
    band: float = 3.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "records", tuple(self.records))
        for i, r in enumerate(self.records):
            check_type(f"records[{i}]", r, CalibrationRecord)
        object.__setattr__(self, "band", check_real("band", self.band, 0.0, open_lo=True))

    def confusion(self) -> Confusion:
        rs = self.records
        return Confusion(
            false_alarm=sum(r.correct and r.flagged for r in rs),
            quiet=sum(r.correct and not r.flagged for r in rs),
            caught=sum(not r.correct and r.flagged for r in rs),
            missed=sum(not r.correct and not r.flagged for r in rs),
        )

    def code_rates(self) -> tuple[CodeRate, ...]:
        """Per (code, severity), sorted; a code counts once per record however often it fired."""
        n_correct = sum(r.correct for r in self.records)
        n_wrong = len(self.records) - n_correct
        keys = sorted({f for r in self.records for f in r.findings})
        rates = []
        for key in keys:
            on_c = sum(r.correct and key in r.findings for r in self.records)
            on_w = sum(not r.correct and key in r.findings for r in self.records)
            rates.append(
                CodeRate(key[0], key[1], on_c, _ratio(on_c, n_correct), on_w, _ratio(on_w, n_wrong))
            )
        return tuple(rates)

    def coverage(self) -> dict[int, float]:
        """Share of records with |z| ≤ 1, 2, 3 among those with a finite z (NaN when none)."""
        zs = [abs(r.z) for r in self.records if math.isfinite(r.z)]
        return {k: _ratio(sum(z <= k for z in zs), len(zs)) for k in COVERAGE_LEVELS}

    def accuracy(self) -> Accuracy:
        """Bias, |z| and cost over the records (bias and |z| over those with a finite z)."""
        fin = [r for r in self.records if math.isfinite(r.z)]
        rel = [r.rel_error for r in fin if math.isfinite(r.rel_error)]
        zs = [abs(r.z) for r in fin]
        return Accuracy(
            runs=len(self.records),
            with_z=len(fin),
            failed=sum(bool(r.failure) for r in self.records),
            mean_bias=_mean([r.estimate - r.target for r in fin]),
            mean_rel_bias=_mean(rel),
            mean_abs_z=_mean(zs),
            median_abs_z=_median(zs),
            coverage_2=_ratio(sum(z <= 2 for z in zs), len(zs)),
            median_seconds=_median([r.seconds for r in self.records]),
        )

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> CalibrationReport:
        """The report a ``to_dict()`` (a benchmark's JSON) was made from: every record rebuilt
        from its raw numbers and findings, so z, ``correct`` and ``flagged`` follow today's rules
        (an older run is scored as a new one would be)."""
        band = float(data.get("band", 3.0))  # type: ignore[arg-type]
        records = []
        for r in data["records"]:  # type: ignore[union-attr]
            findings = [finding_pair(text) for text in r["findings"]]
            nan = math.nan
            records.append(
                CalibrationRecord.make(
                    case=r["case"],
                    family=r["family"],
                    dim=r["dim"],
                    kind=r["kind"],
                    seed=r["seed"],
                    estimate=_num(r["estimate"]),
                    stderr=_num(r["stderr"]),
                    target=_num(r["target"]),
                    target_sigma=_num(r["target_sigma"], nan),
                    findings=findings,
                    seconds=_num(r["seconds"]),
                    band=band,
                    failure=r.get("failure", ""),
                )
            )
        return cls(tuple(records), band)

    def to_dict(self) -> dict[str, object]:
        """Plain data: band, confusion, coverage, code rates, records and ``provenance`` (the
        versions and source commit; each record holds its own seed)."""
        return {
            "band": self.band,
            "confusion": self.confusion().to_dict(),
            "coverage": {str(k): _plain(v) for k, v in self.coverage().items()},
            "accuracy": self.accuracy().to_dict(),
            "code_rates": [c.to_dict() for c in self.code_rates()],
            "records": [r.to_dict() for r in self.records],
            "provenance": provenance_block(),
        }

    def table(self) -> str:
        """Markdown: a summary, the finding codes and one row per record."""
        c, cov = self.confusion(), self.coverage()
        no_z = sum(not math.isfinite(r.z) for r in self.records)
        lines = [
            f"{len(self.records)} runs, band |z| ≤ {self.band:g}: "
            f"{c.false_alarm + c.quiet} correct, {c.caught + c.missed} wrong ({no_z} without z).",
            "",
            "| | error finding | none | rate |",
            "|---|---|---|---|",
            f"| correct | {c.false_alarm} (false alarm) | {c.quiet} | "
            f"false-alarm rate {_fmt(c.false_alarm_rate, 2)} |",
            f"| wrong | {c.caught} (caught) | {c.missed} (missed) | "
            f"miss rate {_fmt(c.miss_rate, 2)} |",
            "",
            "coverage: " + ", ".join(f"|z| ≤ {k}: {_fmt(v, 2)}" for k, v in cov.items()),
            "",
            self.accuracy().line(),
            "",
            "| finding | severity | on correct | on wrong | precision |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {r.code} | {r.severity} | {r.on_correct} ({_fmt(r.share_of_correct, 2)}) | "
            f"{r.on_wrong} ({_fmt(r.share_of_wrong, 2)}) | {_fmt(r.precision, 2)} |"
            for r in self.code_rates()
        ]
        lines += ["", "| case | seed | dim | λ̂ ± se | target ± σ | z | findings | s |"]
        lines.append("|---|---|---|---|---|---|---|---|")
        for r in self.records:
            found = ", ".join(f"{code} ({sev})" for code, sev in r.findings) or "—"
            if r.failure:
                found = f"failed: {r.failure[:60]}; {found}"
            lines.append(
                f"| {r.case} | {r.seed} | {r.dim} | {_fmt(r.estimate)} ± {_fmt(r.stderr)} | "
                f"{_fmt(r.target)} ± {_sigma(r.target_sigma)} | {_fmt(r.z, 2)} | {found} | "
                f"{_fmt(r.seconds, 1)} |"
            )
        return "\n".join(lines)
