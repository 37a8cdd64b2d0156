r"""Whether λ̂ rests on the rounding of the loss (``check_resolution``).

λ̂ averages nβ·(L(w) − L(w*)). Each L(w) is rounded to the run's dtype, an error of up to half an
ulp of |L(w*)|, about ε_mach·|L(w*)|/2, and nβ multiplies it: where r = nβ·ε_mach·|L(w*)| is not
small against λ̂ the chains sample a loss whose differences are rounding (the Metropolis test and
the loss trace see steps of that size) and λ̂ is biased without any other finding seeing it.
Measured (float32, K = 1 + w₁² + w₂², λ = 1): n = 10⁸ (nβ = 5.4·10⁶, r = 0.65) read 0.854 ±
0.016; n = 10⁴ with K + 10⁴ (r = 1.3) 0.673 ± 0.023; both without a finding. In float64, or
float32 at a trained network's L(w*) ≈ 0.01 and nβ ≈ 200 (r ≈ 2·10⁻⁷), nothing fires.
"""

from __future__ import annotations

import math

import torch

from numeric.findings import Finding

WARN = 0.01  # r / |λ̂| from which the rounding is named
ERROR = 0.1  # and from which λ̂ cannot be used


def check_resolution(
    llc: float, nbeta: float, loss_star: float, dtype: torch.dtype
) -> tuple[Finding, ...]:
    """The ``loss_resolution`` finding (module docstring) for λ̂ = ``llc`` at L(w*) =
    ``loss_star`` in ``dtype``: a warning from r = ``WARN``·|λ̂|, an error from ``ERROR``·|λ̂|."""
    if not (math.isfinite(llc) and math.isfinite(loss_star)) or not dtype.is_floating_point:
        return ()
    r = nbeta * torch.finfo(dtype).eps * abs(loss_star)
    ratio = r / abs(llc) if llc != 0 else math.inf
    if not ratio >= WARN or r == 0:
        return ()
    severity = "error" if ratio >= ERROR else "warning"
    name = str(dtype).removeprefix("torch.")
    return (
        Finding(
            "loss_resolution",
            severity,
            f"L(w*) = {loss_star:.6g} in {name}: each loss is rounded by about ε·|L(w*)|, which "
            f"nβ = {nbeta:.4g} turns into {r:.3g}, {100 * ratio:.2g}% of λ̂ = {llc:.4g}, so the "
            "differences nβ·(L(w) − L(w*)) the estimate averages are partly rounding: run in "
            "float64 (dtype=torch.float64), or subtract the loss's constant part",
            {"resolution": r, "ratio": ratio},
        ),
    )
