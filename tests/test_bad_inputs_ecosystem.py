"""Bad inputs that used to reach raw errors, each now a clear error (issue 63): a dense Hessian too
large to hold, a sweep estimator that returns a float, a loss that does not depend on the
parameters, NaN data or no w* for ``expected_llc``, a report written onto a file. And the
report's output that is skipped without matplotlib, and the CLI's name in its help."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from _bad_inputs import deadline
from _estimates import FakeEstimate

import numeric
import numeric.backend.memory
import rlct
import verification.__main__ as cli
from numeric.errors import InvalidInputError
from numeric.hessian.dense import MAX_DENSE_BYTES, require_dense_fits
from verification import Settings, decide
from verification.errors import InvalidArgumentError
from verification.report import Report, write_report


def _report(seed: int = 0) -> Report:
    record = decide("x²", rlct.normal_crossing([1]), FakeEstimate(0.5))
    return Report((record,), (), Settings(seed=seed), 0.0)


# --- (a) a dense Hessian far too large is refused before it is allocated ---------------------


def test_a_dense_hessian_of_50000_parameters_is_refused_at_once() -> None:
    d = 50_000  # one float32 D×D matrix: 50,000² × 4 B = 10⁸·100 B = 9.31 GiB, over 4 GiB
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(32, d, generator=g), torch.randn(32, generator=g)

    def loss(p, b):
        return (b[1] - b[0] @ p["w"]).square().mean()

    start = time.perf_counter()
    with deadline(20), pytest.raises(InvalidInputError) as info:
        numeric.estimate_llc(
            loss, {"w": torch.zeros(d)}, (x, y), num_chains=2, num_draws=10, num_burnin=10,
            preconditioner="hessian",
        )  # fmt: skip
    assert time.perf_counter() - start < 10  # refused, not attempted (no 10 GB zeros)
    text = str(info.value)
    assert "50,000×50,000" in text and "9.31 GiB" in text  # the size
    assert MAX_DENSE_BYTES == 4 * 2**30 and "the limit of 4 GiB" in text  # the limit
    assert 'preconditioner="lowrank"' in text and '"none"' in text  # the alternatives


def test_a_dense_hessian_beyond_the_free_memory_is_refused(monkeypatch) -> None:
    """Under the fixed limit, the device's free memory decides: 3,000² float64 entries are
    72 MB a matrix, 432 MB for the six held at once, more than the 100 MB said to be free."""
    monkeypatch.setattr(numeric.backend.memory, "available_memory", lambda device: 100 * 2**20)
    with pytest.raises(InvalidInputError, match=r"dense Hessian of 3,000 parameters") as info:
        require_dense_fits(3000, torch.float64, torch.device("cpu"))
    assert "0.402 GiB" in str(info.value)  # 6 · 3000² · 8 B = 432,000,000 B = 0.402 GiB
    assert 'preconditioner="lowrank"' in str(info.value)
    require_dense_fits(100, torch.float64, torch.device("cpu"))  # 0.48 MB: fits


# --- (b) a sweep whose estimator returns a float ------------------------------------------------


def test_a_sweep_estimator_returning_a_float_is_named_at_the_first_temperature() -> None:
    calls: list[float] = []

    def estimator(*, nbeta: float, seed: int) -> float:
        calls.append(nbeta)
        return 0.5

    with pytest.raises(
        InvalidInputError, match=r"returns an LLCEstimate.*returned float 0\.5 at nβ = 10:"
    ):
        numeric.temperature_sweep(estimator, nbetas=[10.0, 100.0, 1000.0])
    assert calls == [10.0]  # refused after the first, not after every estimate


# --- (c) a loss that does not depend on the parameters ------------------------------------------

X = torch.randn(50, 2, generator=torch.Generator().manual_seed(1))
Y = X.sum(1)


@pytest.mark.parametrize(
    "loss",
    [
        lambda p, b: torch.tensor(1.0),  # a constant
        lambda p, b: b[1].square().mean(),  # the data alone
        lambda p, b: (b[1] - b[0] @ p["w"].detach()).square().mean(),  # params detached
    ],
    ids=["constant", "data only", "detached"],
)
def test_a_loss_that_does_not_depend_on_the_parameters_is_refused(loss) -> None:
    w = {"w": torch.zeros(2)}
    with deadline(20), pytest.raises(InvalidInputError, match="does not depend on the parameters"):
        numeric.hessian_trace(loss, w, (X, Y))
    with deadline(20), pytest.raises(InvalidInputError, match="does not depend on the parameters"):
        numeric.hessian_top_eigenvalues(loss, w, (X, Y))


def test_a_loss_linear_in_the_parameters_still_has_trace_zero() -> None:
    """Depending on w with a zero Hessian is not refused: tr(∇²(Σw + c)) = 0 exactly."""
    t = numeric.hessian_trace(lambda p, b: p["w"].sum() + b[1].mean(), {"w": torch.ones(2)}, (X, Y))
    assert (t.mean, t.stderr) == (0.0, 0.0)


# --- (d) expected_llc with NaN data or no w* ----------------------------------------------------


def _with_nan(t: torch.Tensor, index: tuple) -> torch.Tensor:
    t = t.clone()
    t[index] = float("nan")
    return t


@pytest.mark.parametrize(
    ("model", "w_star", "match"),
    [
        (numeric.GaussianLinear(_with_nan(X, (3, 0)), Y), [0.0, 0.0], "X has 1 NaN or inf"),
        (numeric.GaussianLinear(X, _with_nan(Y, (0,))), [0.0, 0.0], "y has 1 NaN or inf"),
        (numeric.GaussianLinear(X, Y), None, "w_star is None"),
        (numeric.GaussianLinear(X, Y), [float("nan"), 0.0], "w_star has NaN or inf"),
        (lambda w: w.square().sum(-1), None, "w_star is None"),
    ],
    ids=["nan X", "nan y", "no w_star", "nan w_star", "potential without w_star"],
)
def test_expected_llc_names_nan_data_and_a_missing_w_star(model, w_star, match) -> None:
    with deadline(20), pytest.raises(InvalidInputError, match=match):
        numeric.expected_llc(model, w_star, nbeta=10.0, gamma=1.0)


# --- (e) the report written onto an existing file -----------------------------------------------


def test_write_report_onto_a_file_says_the_path_is_a_file(tmp_path: Path) -> None:
    target = tmp_path / "report"
    target.write_text("keep me", encoding="utf-8")
    with pytest.raises(InvalidArgumentError, match=r"'.*report' is an existing file"):
        write_report(_report(), target)
    assert target.read_text(encoding="utf-8") == "keep me"  # untouched
    with pytest.raises(InvalidArgumentError, match=r"is inside '.*report', which is an existing"):
        write_report(_report(), target / "sub")


# --- the report says when the figure is skipped -------------------------------------------------


def test_without_matplotlib_the_report_says_the_figure_was_skipped(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib: ImportError
    text = write_report(_report(), tmp_path).read_text(encoding="utf-8")
    assert "llc_vs_exact.png was not written: matplotlib cannot be imported" in text
    assert "slt-check[plots]" in text and "![estimated vs exact λ]" not in text
    assert not (tmp_path / "llc_vs_exact.png").exists()


def test_without_matplotlib_the_cli_summary_says_the_figure_was_skipped(
    tmp_path, monkeypatch, capsys
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setattr(cli, "catalogue", lambda quick: [])
    monkeypatch.setattr(cli, "run_report", lambda quick, settings, **kw: _report(settings.seed))
    assert cli.main(["--out", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "llc_vs_exact.png was not written: matplotlib cannot be imported" in out
    assert out.index("Report written to") < out.index("was not written")


def test_with_matplotlib_nothing_is_said_skipped(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    text = write_report(_report(), tmp_path).read_text(encoding="utf-8")
    assert "was not written" not in text and (tmp_path / "llc_vs_exact.png").stat().st_size > 1000


# --- the CLI names itself -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv0", "usage"),
    [
        ("/usr/local/bin/slt-verify", "usage: slt-verify "),
        (r"C:\venv\Scripts\slt-verify.exe", "usage: slt-verify "),
        (str(Path(cli.__file__)), "usage: python -m verification "),
    ],
)
def test_the_help_names_the_program_it_was_run_as(monkeypatch, capsys, argv0, usage) -> None:
    monkeypatch.setattr(sys, "argv", [argv0, "--help"])
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(usage)
    assert "slt-verify" in out and "python -m verification" in out  # both named in the text


def _help_of(command: list[str]) -> str:
    done = subprocess.run(
        [*command, "--help"], capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout


def test_the_installed_console_script_says_slt_verify() -> None:
    script = shutil.which("slt-verify", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("slt-verify is not installed beside this interpreter (pip install -e .)")
    assert _help_of([script]).startswith("usage: slt-verify [-h] [--quick]")


def test_python_dash_m_verification_says_python_dash_m() -> None:
    assert _help_of([sys.executable, "-m", "verification"]).startswith(
        "usage: python -m verification [-h] [--quick]"
    )
