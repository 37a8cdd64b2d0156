"""The report's records as plain rows, and a writer that saves them as each case finishes.

One row per case, the flat :meth:`CrossCheck.to_dict` with its lists joined by "; ". Numbers are
plain numbers (empty in CSV, null in JSON where missing or non-finite), so ``pd.read_csv`` and
``pd.read_json`` load them as numeric columns with no custom parsing. Columns: case, verdict,
exact, lambda_exact ("1/2"), lambda, lambda_lower, lambda_upper, m, method, estimate, stderr,
ess, rhat, nbeta, target, bias_sigma, reference, z, reasons, findings, seconds, z_crit, min_ess,
max_rhat, provenance (the versions, source commit, device and seed: ``numeric.provenance``; a JSON
object in records.json, its JSON text in records.csv).
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from numeric.provenance import provenance_block

from .decision import CrossCheck

__all__ = ["RecordWriter", "record_row", "write_records"]

CSV_NAME, JSON_NAME = "records.csv", "records.json"
# Written from the finished run's records (verification.report.write_report).
REPORT_NAME, CLOSED_FORMS_NAME, PLOT_NAME = "report.md", "closed_forms.json", "llc_vs_exact.png"


def record_row(check: CrossCheck, provenance: Mapping[str, Any] | None = None) -> dict[str, object]:
    """A JSON-ready row: :meth:`CrossCheck.to_dict` with lists joined by "; ", and the
    ``provenance`` block (default: the versions and commit, no device or seed)."""
    row: dict[str, object] = {
        k: "; ".join(v) if isinstance(v, list) else v for k, v in check.to_dict().items()
    }
    row["provenance"] = dict(provenance_block() if provenance is None else provenance)
    return row


def _csv_cell(value: object) -> object:
    """A CSV cell: a nested block (the provenance) as its JSON text, anything else as it is."""
    return json.dumps(value, ensure_ascii=False) if isinstance(value, dict) else value


def _replace(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file, so a crash leaves the old or the new
    file, never half of one."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_records(
    records: Sequence[CrossCheck], out: Path, provenance: Mapping[str, Any] | None = None
) -> None:
    """records.csv and records.json in ``out`` (which must exist), every row with the
    ``provenance`` block (see :func:`record_row`)."""
    rows = [record_row(r, provenance) for r in records]
    fields = list(rows[0]) if rows else ["case"]
    tmp = out / (CSV_NAME + ".tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows({k: _csv_cell(v) for k, v in row.items()} for row in rows)
    os.replace(tmp, out / CSV_NAME)
    _replace(out / JSON_NAME, json.dumps(rows, indent=2, ensure_ascii=False, allow_nan=False))


class RecordWriter:
    """Saves every record as it arrives: a crash or Ctrl-C keeps the finished cases on disk.

    Creating it checks that ``out`` can be written (it is created if missing) and fails there,
    before any case runs, with an ``OSError`` naming the folder. It empties the records and
    removes a previous run's report.md, closed_forms.json and plot, so the folder never shows
    another run's report beside this run's records (an interrupted run leaves records only).
    Every row carries ``provenance`` (:func:`record_row`).
    """

    def __init__(self, out: Path, provenance: Mapping[str, Any] | None = None) -> None:
        self.out = Path(out)
        self.records: list[CrossCheck] = []
        self.provenance = None if provenance is None else dict(provenance)
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            write_records([], self.out)
            for name in (REPORT_NAME, CLOSED_FORMS_NAME, PLOT_NAME):
                (self.out / name).unlink(missing_ok=True)
        except OSError as err:
            raise OSError(
                err.errno, f"cannot write the report to {str(self.out)!r}: {err.strerror}"
            ) from err

    def add(self, record: CrossCheck) -> None:
        self.records.append(record)
        write_records(self.records, self.out, self.provenance)

    @property
    def count(self) -> int:
        return len(self.records)
