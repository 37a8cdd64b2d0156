"""The progress bar names the run's phases (warm-up, burn-in, draws, the step check), so that a
user watching a long run knows where it is, and asking for the bar changes no number."""

from __future__ import annotations

import torch

import numeric


def _loss(params: dict[str, torch.Tensor], batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
    x, y = batch
    return 0.5 * (y - x @ params["w"]).square().mean()


def _regression() -> tuple[dict[str, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]:
    """Linear regression at its least-squares solution: an exact minimum."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(300, 3, generator=g, dtype=torch.float64)
    y = x @ torch.tensor([1.0, -2.0, 0.5], dtype=x.dtype) + 0.3 * torch.randn(
        300, generator=g, dtype=x.dtype
    )
    return {"w": torch.linalg.lstsq(x, y[:, None]).solution[:, 0]}, (x, y)


def _phases(text: str) -> list[str]:
    """The bar's descriptions in the order they first appear (tqdm redraws with '\\r')."""
    seen: list[str] = []
    for frame in text.replace("\r", "\n").splitlines():
        if not frame.startswith("SGLD "):  # the bar as created, before the first phase
            continue
        name = "SGLD warm-up" if frame.startswith("SGLD warm-up") else frame.split(":", 1)[0]
        if name not in seen:
            seen.append(name)
    return seen


def test_the_bar_names_each_phase_and_changes_no_number(capsys) -> None:
    w, data = _regression()
    kw = dict(num_chains=2, seed=3, num_draws=200, step_check=True)
    quiet = numeric.estimate_llc(_loss, w, data, progress=False, **kw)
    assert capsys.readouterr().err == ""
    loud = numeric.estimate_llc(_loss, w, data, progress=True, **kw)
    err = capsys.readouterr().err
    phases = _phases(err)
    assert phases == [
        "SGLD warm-up",
        "SGLD burn-in",
        "SGLD draws",
        "SGLD step check at ε/2",
        "SGLD step check back at ε",
    ]
    burn_in = [f for f in err.replace("\r", "\n").splitlines() if f.startswith("SGLD burn-in")]
    assert burn_in and not any("%" in f for f in burn_in)  # automatic: an open count, no total
    assert loud.mean == quiet.mean and loud.stderr == quiet.stderr
    assert loud.config.num_burnin == quiet.config.num_burnin


def test_a_given_burn_in_is_a_bar_that_fills(capsys) -> None:
    """With ``num_burnin`` given the burn-in's length is known: the bar shows 'n/total'."""
    w, data = _regression()
    numeric.estimate_llc(
        _loss, w, data, progress=True, num_chains=2, seed=0, num_burnin=120, num_draws=80,
        step_size=1e-4, step_check=False,
    )  # fmt: skip
    err = capsys.readouterr().err
    assert "SGLD burn-in" in err and "120/120" in err
    assert "SGLD draws" in err and "80/80" in err
    assert "step check" not in err


def test_the_potential_estimator_names_its_phases(capsys) -> None:
    est = numeric.estimate_llc_potential(
        lambda w: (w**2).sum(-1), [0.0, 0.0], 1000, num_chains=2, seed=0, num_draws=300,
        progress=True,
    )  # fmt: skip
    phases = _phases(capsys.readouterr().err)
    assert phases[:3] == ["SGLD warm-up", "SGLD burn-in", "SGLD draws"]
    assert abs(est.mean - 1.0) < 0.3
