r"""Whether λ̂ rests on the rounding of the loss (``check_resolution``).

λ̂ averages nβ·(L(w) − L(w*)). Each L(w) is rounded to the run's dtype, an error of up to half an
ulp of |L(w*)|, about ε_mach·|L(w*)|/2, and nβ multiplies it: where r = nβ·ε_mach·|L(w*)| is not
small against λ̂ the chains sample a loss whose differences are rounding (the Metropolis test and
the loss trace see steps of that size) and λ̂ is biased without any other finding seeing it.
Measured (float32, K = 1 + w₁² + w₂², λ = 1): n = 10⁸ (nβ = 5.4·10⁶, r = 0.65) read 0.854 ±
0.016; n = 10⁴ with K + 10⁴ (r = 1.3) 0.673 ± 0.023; both without a finding. In float64, or
float32 at a trained network's L(w*) ≈ 0.01 and nβ ≈ 200 (r ≈ 2·10⁻⁷), nothing fires.

That scale misses the rounding inside the loss: a regression whose predictions are ~10³ and
residuals ~1 has L(w*) ≈ 0.5 (r = 0.003), yet each residual is rounded at ε·|ŷ| and float32
read λ̂ = 1.28 ± 0.04 and 1.34 ± 0.05 against an exact 1.59 (float64: 1.62, 1.52), with no
finding. ``check_rounding`` measures it: the differences nβ·(L(w) − L(w*)) at the chains' last
positions, in the run's dtype and in float64 on the same samples (up to ``ROUNDING_SAMPLES``);
their mean gap, where it is 3 of its standard errors, from ``WARN``·|λ̂| is ``rounding_bias``
(a warning; from ``ERROR``·|λ̂| an error).

A gap g(w) that averages out can still bias λ̂: the chains sample exp(−U − g), not exp(−U), and
to first order E₃₂[U + g] − E[U] = E[g] − Cov(U, g), which no mean test sees. Where g's root mean
square reaches ``ROUGH_WARN`` (in units of the temperature, as U is) it is a warning; from
``ROUGH_ERROR`` the sampled landscape is rough at the chains' own thermal scale, the expansion
fails, and it is an error. Measured on a regression whose predictions carry a constant c inside
the loss (residuals ~1, 5 features, nβ = 10⁵, the exact λ_β = 2.50): c = 10⁵ read 6.81 with gaps
of rms 9.6 and a mean within 3 of its standard errors, so the mean test was silent; c = 10³ has
rms 0.08 and read 2.51 (float64: 2.58 ± 0.06), silent under both tests.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from numeric.inputs.data import take, to_device
from numeric.inputs.problem import Problem, on_run
from numeric.types import Finding

WARN = 0.01  # r / |λ̂| from which the rounding is named
ERROR = 0.1  # and from which λ̂ cannot be used
ROUGH_WARN = 0.3  # rms of the gap nβ·(ΔL − ΔL₆₄) from which the rounding is named
ROUGH_ERROR = 1.0  # and from which the sampled landscape is not the target's
ROUNDING_SAMPLES = 4096  # samples on which check_rounding compares the dtypes


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


def check_rounding(problem: Problem, positions: Tensor, llc: float) -> tuple[Finding, ...]:
    """``rounding_bias`` (module docstring) at ``positions`` [C, D], for runs narrower than
    float64; () where the loss cannot be evaluated in float64 (a loss holding tensors of its
    own dtype) or nothing is measurable."""
    w_star = problem.w_star
    if w_star.dtype == torch.float64 or positions.shape[0] < 2 or not math.isfinite(llc):
        return ()
    idx = torch.arange(min(problem.n, ROUNDING_SAMPLES), device=w_star.device)
    batch = take(problem.model.data, idx)
    wide = on_run(problem.loss_fn, w_star.device, torch.float64)
    batch64 = to_device(batch, w_star.device, torch.float64)
    spec, nbeta = problem.spec, problem.nbeta
    try:
        with torch.no_grad():
            narrow = [float(problem.model.f(w, batch)) for w in (w_star, *positions)]
            exact = [float(wide(spec.unflatten(w.double()), batch64)) for w in (w_star, *positions)]
    except (RuntimeError, TypeError):
        return ()
    gaps = [nbeta * ((a - narrow[0]) - (b - exact[0])) for a, b in zip(narrow[1:], exact[1:])]
    if not all(map(math.isfinite, gaps)):
        return ()
    mean = sum(gaps) / len(gaps)
    se = math.sqrt(sum((g - mean) ** 2 for g in gaps) / (len(gaps) - 1) / len(gaps))
    rms = math.sqrt(sum(g * g for g in gaps) / len(gaps))
    share = abs(mean) / abs(llc) if llc != 0 else math.inf
    shifted = share >= WARN and abs(mean) >= 3 * se
    if not (shifted or rms >= ROUGH_WARN):
        return ()
    error = (shifted and share >= ERROR) or rms >= ROUGH_ERROR
    name = str(w_star.dtype).removeprefix("torch.")
    return (
        Finding(
            "rounding_bias",
            "error" if error else "warning",
            f"at the chains' last positions nβ·(L(w) − L(w*)) in {name} differs from the same "
            f"difference in float64 by {mean:+.3g} on average ({share:.1%} of λ̂ = {llc:.4g}) "
            f"and by {rms:.3g} in root mean square ({len(gaps)} positions, {idx.numel()} "
            "samples; 1 is the chains' temperature): the loss's rounding (inside it: large "
            "predictions or features, not only L(w*)) changes the landscape the chains sample "
            "and what the estimate averages. Run in float64 (dtype=torch.float64), or rescale "
            "the inputs and targets",
            {"bias": mean, "stderr": se, "ratio": share, "rms": rms},
        ),
    )
