"""Denormals flushed to zero while the estimator runs on the CPU (numeric.backend.denormals).

A confident classifier's softmax gives denormal probabilities, and x86 arithmetic on them is slow
(estimates of a 112,510-parameter MLP ran 1.9-2.4× faster flushed, benchmarks/RESULTS.md). The
flags are set for the block only: the caller's own arithmetic afterwards keeps IEEE gradual
underflow.
"""

from __future__ import annotations

import pytest
import torch

import numeric
from numeric.backend.denormals import denormals_flushed, flushing_denormals, on_each_torch_thread

pytestmark = pytest.mark.skipif(
    not torch.set_flush_denormal(False), reason="this CPU has no flush-to-zero flags (no SSE3)"
)

TINY = torch.tensor([1e-30], dtype=torch.float32)


def _underflow() -> float:
    """1e-30 · 1e-10 = 1e-40: a float32 denormal, or 0 where denormals are flushed."""
    return float(TINY * 1e-10)


def test_block_flushes_and_restores():
    assert not denormals_flushed()
    assert _underflow() == pytest.approx(1e-40, rel=1e-2)
    with flushing_denormals():
        assert denormals_flushed()
        assert _underflow() == 0.0
    assert not denormals_flushed()
    assert _underflow() == pytest.approx(1e-40, rel=1e-2)


def test_restored_after_an_error():
    with pytest.raises(RuntimeError, match="inside"), flushing_denormals():
        raise RuntimeError("inside")
    assert not denormals_flushed()


def test_a_caller_who_flushes_already_keeps_it():
    torch.set_flush_denormal(True)
    try:
        with flushing_denormals():
            assert denormals_flushed()
        assert denormals_flushed()
    finally:
        torch.set_flush_denormal(False)


@pytest.fixture
def two_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    if len(on_each_torch_thread(lambda: None)) != 2:
        torch.set_num_threads(before)
        pytest.skip("torch's OpenMP runtime here is not its own libgomp (the Linux wheels' one)")
    yield
    torch.set_num_threads(before)


def test_every_thread_of_torchs_team_flushes(two_threads):
    """The flags are per thread: torch's OpenMP workers get them too, and lose them after."""
    assert on_each_torch_thread(denormals_flushed) == [False, False]
    with flushing_denormals():
        assert on_each_torch_thread(denormals_flushed) == [True, True]
        big = torch.full((64, 64), 1e-20)  # a parallel kernel's products underflow to zero
        assert float((big @ big).abs().max()) == 0.0
    assert on_each_torch_thread(denormals_flushed) == [False, False]
    assert float((big @ big).abs().max()) == pytest.approx(64e-40, rel=1e-2)


def test_estimate_llc_runs_flushed_and_restores():
    """The loss sees flushed arithmetic during the estimate; the caller's setting comes back."""
    seen: list[bool] = []

    def loss(params, batch):
        x, y = batch
        if not seen:  # the first call is outside vmap (the loss check at w*)
            seen.append(denormals_flushed())
        return 0.5 * (y - x @ params["w"]).square().mean()

    g = torch.Generator().manual_seed(0)
    x = torch.randn(200, 2, generator=g)
    y = x @ torch.tensor([1.0, -1.0])
    w = {"w": torch.linalg.lstsq(x, y[:, None]).solution[:, 0]}
    est = numeric.estimate_llc(loss, w, (x, y), num_chains=2, num_draws=50, num_burnin=20, seed=0)
    assert seen == [True]
    assert not denormals_flushed()
    assert est.mean > 0
