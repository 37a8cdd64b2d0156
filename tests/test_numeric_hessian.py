"""numeric.hessian.measures: eigenvalues only once converged, products chunk by chunk, the loss
checked.

Every expected value is computed independently: eigenvalues of X'X/n by ``numpy.linalg.eigvalsh``
for a least-squares loss ½·mean(y − Xw)², whose Hessian is exactly X'X/n, or of a diagonal
quadratic potential written down by hand.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

import numeric
from numeric.errors import ConvergenceError, InvalidInputError

F = torch.nn.functional


def _least_squares(scales: list[float], n: int = 500, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, len(scales), generator=g, dtype=torch.float64) * torch.tensor(
        scales, dtype=torch.float64
    )
    y = torch.randn(n, generator=g, dtype=torch.float64)

    def loss(p, batch):
        xb, yb = batch
        return 0.5 * (yb - xb @ p["w"]).square().mean()

    w = {"w": torch.zeros(len(scales), dtype=torch.float64)}
    exact = np.linalg.eigvalsh((x.T @ x / n).numpy())[::-1]
    return loss, w, (x, y), exact


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_top_eigenvalues_equal_the_exact_ones_for_every_seed(seed: int) -> None:
    """The k = 2 largest of a 4 × 4 Hessian, whatever the start vector (a subspace iteration
    started nearly orthogonal to the second eigenvector returned λ₃ there)."""
    loss, w, data, exact = _least_squares([1.0, 1.2, 1.4, 0.3], seed=1)
    top = numeric.hessian_top_eigenvalues(loss, w, data, k=2, seed=seed)
    np.testing.assert_allclose(top, exact[:2], rtol=1e-9)


def test_a_pair_of_opposite_eigenvalues_is_not_mistaken_for_convergence() -> None:
    """Eigenvalues +1, −1, 0.1: the largest |λ| is 1 (either sign), not a Rayleigh quotient
    in between (a power iteration whose successive values agree stops at 0.93)."""
    h = torch.tensor([1.0, -1.0, 0.1], dtype=torch.float64)
    top = numeric.hessian_top_eigenvalues(
        lambda v: 0.5 * (h * v * v).sum(), torch.zeros(3).double()
    )
    assert abs(abs(top[0]) - 1.0) < 1e-9
    two = numeric.hessian_top_eigenvalues(
        lambda v: 0.5 * (h * v * v).sum(), torch.zeros(3).double(), k=2
    )
    np.testing.assert_allclose(np.sort(two), [-1.0, 1.0], atol=1e-9)


def test_a_repeated_eigenvalue_is_found_as_often_as_it_occurs() -> None:
    """diag(5, 5, 3, 1): one Krylov space holds one vector of the eigenvalue 5; the deflated
    run finds the second copy, so k = 2 gives (5, 5), not (5, 3)."""
    h = torch.tensor([5.0, 5.0, 3.0, 1.0], dtype=torch.float64)
    top = numeric.hessian_top_eigenvalues(
        lambda v: 0.5 * (h * v * v).sum(), torch.zeros(4).double(), k=3
    )
    np.testing.assert_allclose(top, [5.0, 5.0, 3.0], rtol=1e-9)


def test_a_zero_hessian_gives_zeros() -> None:
    """A linear loss: every eigenvalue is 0, found as such (no error, no division by 0)."""
    c = torch.arange(6, dtype=torch.float64)
    top = numeric.hessian_top_eigenvalues(lambda v: (c * v).sum(), torch.zeros(6).double(), k=2)
    np.testing.assert_array_equal(top, [0.0, 0.0])


def test_too_few_products_is_an_error_not_a_wrong_number() -> None:
    """200 eigenvalues spread over (0, 1]: 3 Lanczos steps cannot resolve the largest."""
    h = torch.linspace(0.005, 1.0, 200, dtype=torch.float64)
    with pytest.raises(ConvergenceError, match="raise num_iters"):
        numeric.hessian_top_eigenvalues(
            lambda v: 0.5 * (h * v * v).sum(), torch.zeros(200).double(), num_iters=3
        )
    top = numeric.hessian_top_eigenvalues(
        lambda v: 0.5 * (h * v * v).sum(), torch.zeros(200).double()
    )
    assert abs(top[0] - 1.0) < 1e-9


def test_products_by_chunks_equal_one_pass() -> None:
    """The trace and the eigenvalues with the data in chunks of 7 samples (the products taken
    chunk by chunk) equal those of one pass, to rounding."""
    loss, w, data, exact = _least_squares([1.0, 2.0, 0.5], n=100)
    whole = numeric.hessian_trace(loss, w, data, num_samples=20, seed=3)
    chunked = numeric.hessian_trace(loss, w, data, num_samples=20, seed=3, chunk_size=7)
    assert chunked.mean == pytest.approx(whole.mean, rel=1e-12)
    assert whole.mean == pytest.approx(float(exact.sum()), rel=0.5)  # Hutchinson, 20 probes
    top = numeric.hessian_top_eigenvalues(loss, w, data, k=3, chunk_size=7)
    np.testing.assert_allclose(top, exact, rtol=1e-9)


def test_a_summed_or_random_loss_and_nan_data_are_refused() -> None:
    loss, w, (x, y), _ = _least_squares([1.0, 2.0])

    def summed(p, batch):
        xb, yb = batch
        return 0.5 * (yb - xb @ p["w"]).square().sum()

    g = torch.Generator().manual_seed(0)

    def noisy(p, batch):
        return loss(p, batch) * (1 + torch.rand((), generator=g, dtype=torch.float64))

    for fn in (numeric.hessian_trace, numeric.hessian_top_eigenvalues):
        with pytest.raises(InvalidInputError, match="sum over the batch"):
            fn(summed, w, (x, y))
        with pytest.raises(InvalidInputError, match="random"):
            fn(noisy, w, (x, y))
        bad = x.clone()
        bad[7, 1] = float("nan")
        with pytest.raises(InvalidInputError, match=r"data\[0\] has NaN or inf"):
            fn(loss, w, (bad, y))


def _restricted():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double().eval()
    x = torch.randn(64, 3, dtype=torch.float64)
    y = torch.randn(64, 1, dtype=torch.float64)
    loss_fn, w = numeric.from_module(model, F.mse_loss)
    rl, u = numeric.restrict(loss_fn, w, "2")
    return rl, u, w, (x, y)


def test_a_restricted_loss_refuses_the_full_w_star_by_name() -> None:
    """Given the full w*, a restricted loss would sample the frozen layer too (the entries of
    params override v*): the restriction void and the λ̂ the unrestricted one, with no
    finding. Refused, as are a missing free parameter and one of another shape."""
    rl, u, w, data = _restricted()
    calls = (
        lambda p: numeric.estimate_llc(rl, p, data, num_chains=2, num_draws=20, num_burnin=5),
        lambda p: numeric.hessian_trace(rl, p, data, num_samples=4),
        lambda p: numeric.hessian_top_eigenvalues(rl, p, data),
    )
    for call in calls:
        with pytest.raises(InvalidInputError, match=r"'0.weight', '0.bias'.*pass u\*"):
            call(w)
        with pytest.raises(InvalidInputError, match=r"lacks .*'2.bias'"):
            call({"2.weight": u["2.weight"]})
        with pytest.raises(InvalidInputError, match=r"params\['2.weight'\] has shape \(2, 4\)"):
            call({"2.weight": torch.zeros(2, 4, dtype=torch.float64), "2.bias": u["2.bias"]})
        with pytest.raises(InvalidInputError, match="does not take"):
            call({**u, "extra": torch.zeros(1, dtype=torch.float64)})
    # u* itself is accepted: the trace of the restricted Hessian (5 × 5) is finite and positive
    assert numeric.hessian_trace(rl, u, data, num_samples=8).mean > 0


def test_a_series_refuses_a_restricted_loss_and_says_to_use_select() -> None:
    """Checkpoints are full state dicts: with a restricted loss every module parameter would
    become free. The series says to pass the unrestricted loss with select=."""
    rl, _, _, data = _restricted()
    module = rl.loss_fn.module
    cps = [{k: v.clone() for k, v in module.state_dict().items()} for _ in range(2)]
    with pytest.raises(InvalidInputError, match=r"select=\['2.weight', '2.bias'\]"):
        numeric.estimate_llc_series(rl, cps, data, num_chains=2, num_draws=20, num_burnin=5)
