"""The provenance block of every serialised result (``numeric.provenance``): versions equal to the
installed metadata, the source commit read from the checkout's own .git, and the run's seed,
dtype and device."""

from __future__ import annotations

import csv
import importlib.metadata
import json
import platform
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from _estimates import FakeEstimate

import numeric
import rlct
from numeric.provenance import DISTRIBUTIONS, git_commit, package_versions, provenance_block
from verification.calibration import CalibrationRecord, CalibrationReport
from verification.crosschecks import Settings
from verification.decision import decide
from verification.records import RecordWriter
from verification.report import Report, write_report

REPO = Path(__file__).resolve().parent.parent
EXPECTED_DISTRIBUTIONS = {
    "slt_check": "slt-check",
    "torch": "torch",
    "python_flint": "python-flint",
    "sympy": "sympy",
    "numpy": "numpy",
}
KEYS = {*EXPECTED_DISTRIBUTIONS, "python", "git_commit", "device", "dtype", "seed"}


def _head_from_git_dir(repo: Path) -> str | None:
    """HEAD's commit read from the files of ``repo/.git`` (not through git): None where .git is
    not a folder (a worktree's file) or the ref is not found."""
    git = repo / ".git"
    if not git.is_dir():
        return None
    head = (git / "HEAD").read_text().strip()
    if not head.startswith("ref: "):
        return head
    ref = head.removeprefix("ref: ")
    if (git / ref).is_file():
        return (git / ref).read_text().strip()
    packed = git / "packed-refs"
    for line in packed.read_text().splitlines() if packed.is_file() else ():
        sha, _, name = line.partition(" ")
        if name == ref:
            return sha
    return None


def _check_versions(block: dict) -> None:
    assert set(block) == KEYS
    for key, dist in EXPECTED_DISTRIBUTIONS.items():
        assert block[key] == importlib.metadata.version(dist), key
    assert block["python"] == platform.python_version()
    assert block["torch"].split("+")[0] == torch.__version__.split("+")[0]


def test_the_block_has_the_installed_versions_and_no_run_settings_by_default() -> None:
    assert DISTRIBUTIONS == EXPECTED_DISTRIBUTIONS
    block = provenance_block()
    _check_versions(block)
    assert block["slt_check"] == rlct.__version__ == numeric.__version__
    assert (block["device"], block["dtype"], block["seed"]) == (None, None, None)
    given = provenance_block(device="cuda:1", dtype="float32", seed=12)
    assert (given["device"], given["dtype"], given["seed"]) == ("cuda:1", "float32", 12)
    json.dumps(block, allow_nan=False)  # plain data


def test_the_commit_is_the_checkouts_head() -> None:
    expected = _head_from_git_dir(REPO)
    if expected is None:
        pytest.skip("not a plain git checkout: the commit cannot be read from .git")
    commit = provenance_block()["git_commit"]
    assert re.fullmatch(r"[0-9a-f]{40}", commit)
    assert commit == expected


def test_the_commit_is_none_outside_the_top_of_a_checkout(tmp_path: Path) -> None:
    assert git_commit(tmp_path) is None  # no repository at all
    assert git_commit(tmp_path / "missing") is None  # not even a folder: never raises
    if (REPO / ".git").exists():
        # an installed copy inside some other repository is not that repository's commit
        assert git_commit(REPO / "numeric") is None


def test_versions_are_read_once_and_each_block_is_fresh() -> None:
    assert package_versions() is package_versions()  # functools.cache: once per process
    first = provenance_block()
    first["torch"] = "changed"
    assert provenance_block()["torch"] == importlib.metadata.version("torch")


def test_the_module_imports_without_torch() -> None:
    """rlct results can use it: loaded from its file alone, it pulls in no torch."""
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('prov', {str(REPO / 'numeric' / 'provenance.py')!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "b = m.provenance_block(seed=3)\n"
        "print('torch' in sys.modules, b['seed'], b['torch'] is not None)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.split() == ["False", "3", "True"]


def test_an_estimate_carries_its_seed_dtype_and_device() -> None:
    est = numeric.estimate_llc_potential(
        lambda w: w[..., 0] ** 2, torch.zeros(1, dtype=torch.float64), 1000, num_chains=2,
        seed=7, num_burnin=40, num_draws=30,
    )  # fmt: skip
    d = json.loads(json.dumps(est.to_dict()))
    block = d["provenance"]
    _check_versions(block)
    assert (block["seed"], block["dtype"], block["device"]) == (7, "float64", "cpu")


def _record(name: str, mean: float):
    return decide(name, rlct.normal_crossing([1]), FakeEstimate(mean))


def test_the_verification_records_and_report_carry_the_runs_seed_and_device(tmp_path) -> None:
    settings = Settings(seed=5, device="cpu")
    report = Report((_record("a", 0.5), _record("b", 0.52)), (), settings, 1.0)
    write_report(report, tmp_path)
    rows = json.loads((tmp_path / "records.json").read_text(encoding="utf-8"))
    assert len(rows) == 2
    for row in rows:
        _check_versions(row["provenance"])
        assert (row["provenance"]["seed"], row["provenance"]["device"]) == (5, "cpu")
    with open(tmp_path / "records.csv", newline="", encoding="utf-8") as fh:
        cells = [json.loads(r["provenance"]) for r in csv.DictReader(fh)]
    assert cells == [row["provenance"] for row in rows]
    whole = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    assert whole["provenance"] == rows[0]["provenance"]
    # no device named: the report says cpu, and so does the block
    default = Report((_record("a", 0.5),), (), Settings(seed=9), 1.0).to_dict()["provenance"]
    assert (default["seed"], default["device"]) == (9, "cpu")


def test_the_record_writer_saves_the_block_it_was_given(tmp_path) -> None:
    writer = RecordWriter(tmp_path, provenance_block(device="cpu", seed=11))
    writer.add(_record("a", 0.5))
    (row,) = json.loads((tmp_path / "records.json").read_text(encoding="utf-8"))
    assert row["provenance"]["seed"] == 11 and row["case"] == "a"


def test_the_calibration_report_carries_the_block_and_still_reads_back() -> None:
    rec = CalibrationRecord.make(
        case="c", family="f", dim=1, kind="potential", seed=4, estimate=0.5, stderr=0.1,
        target=0.5, target_sigma=0.0, findings=[], seconds=1.0,
    )  # fmt: skip
    report = CalibrationReport((rec,))
    d = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    _check_versions(d["provenance"])
    assert d["records"][0]["seed"] == 4 and "provenance" not in d["records"][0]  # once a report
    assert CalibrationReport.from_dict(d).records == report.records
