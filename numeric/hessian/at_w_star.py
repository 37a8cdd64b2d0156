"""H(w*) = ∇²L_n(w*) on the data, as the plan computes it: on at most ``HESSIAN_SAMPLES``
samples (``hessian_subset``: a fixed random subset drawn from the run's seed, not its stream) and,
for the dense Hessian, ``full_data_hessian``: D Hessian-vector products chunk by chunk (the dense
matrix itself: ``numeric.hessian.dense``). The low-rank spectrum (``numeric.hessian.spectrum``)
and the soft directions' check (``numeric.plan.soft_whitening``) take the same samples."""

from __future__ import annotations

import torch
from torch import Tensor

from numeric.hessian.dense import dense_hessian, difference_hessian, require_dense_fits
from numeric.inputs.data import take
from numeric.inputs.problem import DataModel

HESSIAN_SAMPLES = 16384  # at most this many samples (a fixed random subset) for H at w*
HESSIAN_CHUNK = 2048
# the Hessian-vector products times samples that H at w* may take: the dense Hessian (D products)
# uses at most max(HESSIAN_CHUNK, HESSIAN_WORK // D) samples, Lanczos (≤ 256) all 16384
HESSIAN_WORK = 2**22
# Hessian-vector products times samples in one vmapped call: bounds the dense Hessian's memory
# (64 products over 2,048 images of a small CNN held 3.7 GB; 8 of them 0.9 GB, the same bits)
HVP_BATCH_SAMPLES = 2**14


def hessian_subset(n: int, seed: int, device: torch.device, hvps: int = 256) -> Tensor:
    """The samples H(w*) is computed on, by ``hvps`` Hessian-vector products: all n up to
    m = min(``HESSIAN_SAMPLES``, max(``HESSIAN_CHUNK``, ``HESSIAN_WORK``/hvps)), else m drawn
    without replacement by a generator seeded ``seed`` (not the run's stream), in order (a
    smaller m takes a prefix of the same draw)."""
    m = min(n, HESSIAN_SAMPLES, max(HESSIAN_CHUNK, HESSIAN_WORK // max(hvps, 1)))
    if m < n:
        g = torch.Generator().manual_seed(seed)
        return torch.randperm(n, generator=g)[:m].sort().values.to(device)
    return torch.arange(n, device=device)


def full_data_hessian(
    model: DataModel, w_star: Tensor, seed: int, *, difference: bool = False
) -> Tensor:
    """∇²L_n(w*) [D, D] on the samples of ``hessian_subset`` for D products, chunk by chunk: by
    double backward (at most ``HVP_BATCH_SAMPLES`` products × samples vmapped at once), or
    (``difference``) by central differences of the gradient. A D×D matrix too large to hold
    is refused first (``dense.require_dense_fits``)."""
    d = w_star.numel()
    require_dense_fits(d, w_star.dtype, w_star.device)
    idx = hessian_subset(model.n, seed, w_star.device, hvps=d)
    m = idx.numel()
    total = w_star.new_zeros(d, d)
    for s in range(0, m, HESSIAN_CHUNK):
        part = take(model.data, idx[s : s + HESSIAN_CHUNK])
        size = min(m, s + HESSIAN_CHUNK) - s
        f = lambda w, b=part: model.f(w, b)  # noqa: E731
        if difference:
            total += difference_hessian(f, w_star) * (size / m)
        else:
            block = min(64, max(8, HVP_BATCH_SAMPLES // size))
            total += dense_hessian(f, w_star, block) * (size / m)
    return total
