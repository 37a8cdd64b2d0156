"""The report CLI under accidents: Ctrl-C, a crashing case, an unwritable folder; torch threads.

The catalogue is replaced by three instant fake cases and the function that runs one case
(``verification.runner._run_one``) by one that fails on a chosen case.
"""

from __future__ import annotations

import csv
import json
import multiprocessing
import time
from functools import partial
from pathlib import Path

import pytest
import torch

import rlct
import verification.__main__ as cli
from verification import Settings, decide
from verification import runner as runner_mod
from verification.crosschecks import Entry
from verification.runner import run_cases


class Estimate:
    def __init__(self, mean: float) -> None:
        self.mean, self.stderr, self.ess, self.rhat, self.nbeta = mean, 0.01, 1e3, 1.0, 1e3
        self.diagnostics = ()


def _fake_run(name: str, settings: Settings, seed: int):
    """A case whose name records the torch threads it ran with."""
    return decide(
        f"{name} threads={torch.get_num_threads()}", rlct.normal_crossing([1]), Estimate(0.5)
    )


ENTRIES = [Entry(n, "fake", partial(_fake_run, n)) for n in ("a", "b", "c")]


def _saved(out: Path) -> list[str]:
    with open(out / "records.csv", newline="", encoding="utf-8") as fh:
        csv_cases = [row["case"] for row in csv.DictReader(fh)]
    json_cases = [r["case"] for r in json.loads((out / "records.json").read_text("utf-8"))]
    assert csv_cases == json_cases
    return csv_cases


@pytest.fixture
def fake_catalogue(monkeypatch):
    monkeypatch.setattr(cli, "catalogue", lambda quick: list(ENTRIES))


def _failing_at(monkeypatch, index: int, error: BaseException) -> None:
    real = runner_mod._run_one

    def run_one(job):
        if job[0] == index:
            raise error
        return real(job)

    monkeypatch.setattr(runner_mod, "_run_one", run_one)


def test_ctrl_c_keeps_finished_cases_and_exits_130(tmp_path, monkeypatch, capsys, fake_catalogue):
    _failing_at(monkeypatch, 2, KeyboardInterrupt())
    out = tmp_path / "report"
    assert cli.main(["--quick", "--out", str(out), "--no-progress"]) == 130
    assert _saved(out) == ["a threads=1", "b threads=1"]
    assert "Interrupted: 2 of 3 cases finished and saved" in capsys.readouterr().err
    assert not (out / "report.md").exists()


def test_a_crashing_case_keeps_the_cases_before_it(tmp_path, monkeypatch, capsys, fake_catalogue):
    _failing_at(monkeypatch, 1, RuntimeError("case b blew up"))
    out = tmp_path / "report"
    with pytest.raises(RuntimeError, match="case b blew up"):
        cli.main(["--quick", "--out", str(out), "--no-progress"])
    assert _saved(out) == ["a threads=1"]
    assert "1 of 3 cases saved" in capsys.readouterr().err


def test_unwritable_out_fails_before_any_case_runs(tmp_path, monkeypatch, capsys, fake_catalogue):
    _failing_at(monkeypatch, 0, AssertionError("a case ran before --out was checked"))
    blocker = tmp_path / "a file"
    blocker.write_text("not a folder")
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--quick", "--out", str(blocker / "report"), "--no-progress"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --out: cannot write the report to" in err and "a file" in err


def test_the_whole_cli_run_writes_the_report(tmp_path, capsys, fake_catalogue):
    out = tmp_path / "report"
    assert cli.main(["--quick", "--out", str(out), "--no-progress", "--threads", "2"]) == 0
    assert _saved(out) == ["a threads=2", "b threads=2", "c threads=2"]
    assert "3 cases: 3 agree, 0 disagree, 0 inconclusive" in (out / "report.md").read_text("utf-8")
    assert "Report written to" in capsys.readouterr().out


def test_cases_run_on_the_given_threads_and_the_callers_setting_returns() -> None:
    old = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        got = run_cases(ENTRIES[:2], Settings(), progress=False, threads=1)
        assert [r.case for r in got] == ["a threads=1", "b threads=1"]
        assert torch.get_num_threads() == 2
        got = run_cases(ENTRIES[:1], Settings(), progress=False, threads=3)
        assert got[0].case == "a threads=3" and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(old)


def test_worker_processes_run_one_thread_each_and_report_as_cases_finish() -> None:
    seen: list[str] = []
    got = run_cases(
        ENTRIES, Settings(), workers=2, progress=False, on_record=lambda r: seen.append(r.case)
    )
    assert [r.case for r in got] == ["a threads=1", "b threads=1", "c threads=1"]
    assert sorted(seen) == [r.case for r in got]  # each record handed over once, in finish order


def _slow_run(name: str, seconds: float, settings: Settings, seed: int):
    time.sleep(seconds)
    return _fake_run(name, settings, seed)


def test_ctrl_c_during_a_pool_run_ends_the_running_workers() -> None:
    """Ctrl-C arrives in the parent while a worker is inside a long case: the worker is ended,
    not waited for (the interpreter would otherwise wait at exit for the case to finish)."""
    entries = [
        Entry("fast", "fake", partial(_slow_run, "fast", 0.0)),
        Entry("slow", "fake", partial(_slow_run, "slow", 120.0)),
    ]

    def interrupt(record) -> None:
        raise KeyboardInterrupt

    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_cases(entries, Settings(), workers=2, progress=False, on_record=interrupt)
    # the pool's own manager thread may still be reaping a worker it saw exit: wait a little
    while multiprocessing.active_children() and time.monotonic() - t0 < 30:
        time.sleep(0.1)
    assert multiprocessing.active_children() == []
    assert time.monotonic() - t0 < 60  # a hang guard: the slow case alone takes 120 s


def test_a_new_run_removes_the_previous_runs_report(tmp_path, monkeypatch, capsys, fake_catalogue):
    out = tmp_path / "report"
    assert cli.main(["--quick", "--out", str(out), "--no-progress"]) == 0
    assert (out / "report.md").exists() and (out / "closed_forms.json").exists()
    _failing_at(monkeypatch, 1, KeyboardInterrupt())
    assert cli.main(["--quick", "--out", str(out), "--no-progress"]) == 130
    assert _saved(out) == ["a threads=1"]
    # the finished run's report would describe three cases beside a record of one
    assert not (out / "report.md").exists() and not (out / "closed_forms.json").exists()


def test_the_printed_table_shows_what_the_estimate_is_compared_with(
    tmp_path, capsys, fake_catalogue
):
    assert cli.main(["--quick", "--out", str(tmp_path / "r"), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    # K = w² has m = 1: the target is λ = 1/2 itself, with no systematic σ_bias
    assert "| 0.500 ± 0 (λ − (m−1)/log nβ) |" in printed
    assert "compared with λ_target, not with λ" in printed
    assert "Exact λ against estimates:" in printed  # each table has a title
    assert "Closed forms against exact computations" in printed
