"""Results as plain data: ``to_dict()`` of verdicts and reports, and records that load into pandas
(optional) or the ``csv`` module without custom parsing."""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass

import pytest
import sympy as sp

import rlct
from verification import CrossCheck, DecisionRule, Settings, check_closed_forms, decide
from verification.report import Report, format_table, write_report

NUMERIC = ["lambda", "lambda_lower", "lambda_upper", "m", "estimate", "stderr", "z", "ess"]
NUMERIC += ["rhat", "nbeta", "target", "bias_sigma", "reference", "seconds", "z_crit"]


@dataclass(frozen=True)
class Estimate:
    mean: float
    stderr: float
    ess: float = 1000.0
    rhat: float = 1.0
    nbeta: float = 1000.0
    diagnostics: tuple = ()


@dataclass(frozen=True)
class Reference:
    value: float
    abserr: float


def _records() -> list[CrossCheck]:
    x, y, z = sp.symbols("x y z")
    half, tie = rlct.normal_crossing([1]), rlct.normal_crossing([1, 1])
    return [
        decide("x²", half, Estimate(0.52, 0.01), reference=Reference(0.5, 0.001), seconds=1.5),
        decide("x²y²", tie, Estimate(0.36, 0.01)),
        decide("nan estimate", half, Estimate(math.nan, 0.01)),
        # degenerate, and no step of rlct solves it: proven bounds only
        decide(
            "⟨xyz, x²−y³+z⁵⟩",
            rlct.from_ideal([x * y * z, x**2 - y**3 + z**5], (x, y, z)),
            Estimate(0.5, 0.01),
        ),
    ]


def test_crosscheck_to_dict_is_plain_json() -> None:
    rows = [r.to_dict() for r in _records()]
    text = json.dumps(rows, allow_nan=False)  # NaN would make invalid JSON
    back = json.loads(text)
    first = back[0]
    assert first["lambda_exact"] == "1/2" and first["lambda"] == 0.5 and first["m"] == 1
    assert first["target"] == 0.5 and first["z"] == pytest.approx(0.02 / math.hypot(0.01, 0.001))
    assert first["verdict"] == "agree" and first["exact"] is True and first["z_crit"] == 3.0
    assert back[1]["target"] == pytest.approx(0.5 - 1 / math.log(1000))
    assert back[2]["estimate"] is None and back[2]["verdict"] == "inconclusive"
    assert back[2]["reasons"] == ["estimate is nan"]
    bound = back[3]
    assert bound["exact"] is False and bound["lambda"] is None and bound["lambda_exact"] is None
    # Newton's 1/(2t) is 31/60 (the diagonal meets x/2 + y/3 + z/5 = 1 at t = 30/31; the face
    # polynomial x² − y³ + z⁵ has torus zeros). Both generators are quasi-homogeneous for
    # w = (15, 10, 6) (degrees 31, 30): in the weighted chart x = u¹⁵ the ideal is
    # u³⁰·⟨u·yz, 1 − y³ + z⁵⟩, at a point of the curve 1 − y³ + z⁵ = 0 with yz ≠ 0 u³⁰·⟨v, u⟩,
    # whose K = u⁶⁰(v² + u²) under |u|³⁰ meets t·(31, 1) at t = 31/16: λ ≤ 16/31. Lower bound
    # 1/ord₀(K) = 1/4
    assert bound["lambda_lower"] == 0.25 and bound["lambda_upper"] == pytest.approx(16 / 31)


def test_closed_forms_and_rule_to_dict_are_plain_json() -> None:
    summaries = check_closed_forms(max_size=2)
    data = json.loads(json.dumps([s.to_dict() for s in summaries], allow_nan=False))
    rrr = next(d for d in data if d["formula"].startswith("Aoyagi 2024 DLN (2 layers)"))
    # M, N, H ∈ {1, 2}, every r ≤ min(M, N, H): 7 shapes with min 1 (r = 0, 1) and (2, 2, 2)
    # (r = 0, 1, 2), so 7·2 + 3 = 17 checks
    assert rrr["checked"] == 17 == len(rrr["checks"])
    assert rrr["smallest_counterexample"] is None
    assert set(rrr["checks"][0]) == {"formula", "case", "formula_value", "exact_value", "agree"}
    assert DecisionRule(z_crit=4.0).to_dict() == {"z_crit": 4.0, "min_ess": 100.0, "max_rhat": 1.05}


def _write(tmp_path) -> Report:
    report = Report(tuple(_records()), check_closed_forms(max_size=2), Settings(seed=3), 2.0)
    write_report(report, tmp_path)
    return report


def test_report_to_dict_round_trips_through_json(tmp_path) -> None:
    report = _write(tmp_path)
    data = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    assert data["settings"]["seed"] == 3 and data["settings"]["z_crit"] == 3.0
    assert [r["case"] for r in data["records"]] == [r.case for r in report.records]
    closed = json.loads((tmp_path / "closed_forms.json").read_text(encoding="utf-8"))
    assert closed == data["closed_forms"]


def test_records_csv_reads_with_the_csv_module(tmp_path) -> None:
    _write(tmp_path)
    with open(tmp_path / "records.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["case"] for r in rows] == ["x²", "x²y²", "nan estimate", "⟨xyz, x²−y³+z⁵⟩"]
    for row in rows:
        for col in NUMERIC:  # each cell a plain number or empty: no units, no "±"
            assert row[col] == "" or math.isfinite(float(row[col])), (col, row[col])
    assert float(rows[0]["estimate"]) == 0.52 and float(rows[0]["stderr"]) == 0.01
    assert rows[2]["estimate"] == "" and rows[2]["reasons"] == "estimate is nan"
    on_disk = json.loads((tmp_path / "records.json").read_text(encoding="utf-8"))
    assert [r["case"] for r in on_disk] == [r["case"] for r in rows]


def test_records_load_into_pandas_as_numbers(tmp_path) -> None:
    pd = pytest.importorskip("pandas", reason="pandas is optional; the csv test covers the files")
    _write(tmp_path)
    for df in (
        pd.read_csv(tmp_path / "records.csv"),
        pd.read_json(tmp_path / "records.json"),
    ):
        assert list(df["case"]) == ["x²", "x²y²", "nan estimate", "⟨xyz, x²−y³+z⁵⟩"]
        for col in NUMERIC:
            assert pd.api.types.is_numeric_dtype(df[col]), (col, df[col].dtype)
        assert df["estimate"].iloc[0] == 0.52 and math.isnan(df["estimate"].iloc[2])
        assert df["lambda"].iloc[1] == 0.5 and math.isnan(df["lambda"].iloc[3])
        assert df["verdict"].tolist() == ["agree", "agree", "inconclusive", "no exact value"]


def test_the_table_names_the_target_z_used_and_its_sigma() -> None:
    two = rlct.normal_crossing([1, 1])  # λ = 1/2, m = 2
    nbeta = math.e**4  # (m − 1)/log nβ = 1/4
    plain = decide("w0²w1²", two, Estimate(0.3, 0.01, nbeta=nbeta))
    given = decide("w0²w1²", two, Estimate(0.3, 0.01, nbeta=nbeta), reference=Reference(0.28, 0.02))
    table = format_table([plain, given])
    assert "| 0.250 ± 0.125 (λ − (m−1)/log nβ) |" in table
    assert "| 0.280 ± 0.020 (λ_β) |" in table
    assert (
        "| 0.40 |" in table and "| 0.89 |" in table
    )  # 0.05/√(0.01² + 0.125²), 0.02/√(0.01² + 0.02²)


def test_a_tiny_sigma_is_not_printed_as_zero() -> None:
    from verification.report import _fmt_sigma

    assert [_fmt_sigma(s) for s in (0.0, 3e-5, 0.0125, None)] == ["0", "3.0e-05", "0.013", "—"]


def test_the_summary_counts_add_up_with_cases_without_an_exact_value() -> None:
    from verification.report import summary_line

    report = Report(tuple(_records()), (), Settings(), 12.0)
    line = summary_line(report)
    assert line.startswith("4 cases: 2 agree, 0 disagree, 1 inconclusive")
    assert "1 without an exact value" in line
    counts = [int(part.split()[0]) for part in line.split(": ")[1].split(";")[0].split(", ")]
    assert sum(counts) == 4


def test_a_potential_case_with_a_string_k_is_refused_before_any_exact_work() -> None:
    from verification import crosscheck
    from verification.cases import PotentialCase
    from verification.errors import InvalidTypeError

    x = sp.Symbol("x")
    case = PotentialCase("s", "x**2", (x,), (sp.Integer(0),), None, None)
    with pytest.raises(InvalidTypeError, match="a string is refused"):
        crosscheck(case, Settings(n=100, num_chains=2))


def test_a_quadratic_teacher_below_the_generic_rank_is_inconclusive_before_any_estimate() -> None:
    """w = 0: rank 0 < generic rank 1. ŵ, fitted to noisy targets, leaves the special point, so
    the exact λ at the teacher is not what the chains at ŵ estimate."""
    from verification import crosscheck
    from verification.cases import QuadraticCase

    case = QuadraticCase(((0,),), ((1,),), ((0,), (0,), (0,), (1,)), "zero feature", "X")
    r = crosscheck(case, Settings(n=100, num_chains=2))
    assert r.verdict == "inconclusive" and math.isnan(r.estimate)
    assert "rank 0 < generic rank 1" in r.reasons[0]
