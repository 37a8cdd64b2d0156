r"""Is w* a critical point? The shift of λ̂ that a non-zero gradient ∇L_n(w*) = g causes.

Around w* take L_n(w* + δ) ≈ L_n(w*) + gᵀδ + ½δᵀHδ and the localised tempered posterior
exp(−nβ·L_n − ½c‖δ‖²), c = γ + α. It is Gaussian with precision A = nβH + c and mean
−nβ·A⁻¹g, so

    λ̂ = nβ·E[L_n − L_n(w*)] = ½·tr(nβH·A⁻¹) − ½·nβ²·gᵀA⁻¹(nβH + 2c)A⁻¹g

the Laplace value less the *gradient shift* S = ½·nβ²·Σ_i (u_iᵀg)²·(nβh_i + 2c)/(nβh_i + c)²
over H's eigenpairs (h_i, u_i), h clipped at 0. S is what the chains gain by running down g: at a
trained minimum it is nil, at an untrained point it can outweigh the Laplace value, and λ̂ can
then be small or negative without the chains' loss going significantly below L_n(w*) (a random
MLP at γ = 10⁴ gave λ̂ = −0.05 ± 0.02 with no finding). Each term falls with h, so where the
spectrum is partly known (Lanczos above 2,048 parameters) the unresolved part of g counts as flat
(h = 0: 2·nβ²‖g_⊥‖²/(2c)), an upper bound.

The ``gradient_at_w_star`` finding reports S where it matters: a warning from ``WARN_SE``
standard errors and ``WARN_FRACTION`` of |λ̂|; an error where S is at least ``ERROR_FRACTION``
of |λ̂| (the estimate then measures the slope at w*, not its degeneracy).
"""

from __future__ import annotations

from torch import Tensor

from numeric.hessian.dense import HessianInfo
from numeric.hessian.spectrum import SpectrumInfo
from numeric.types import Finding

WARN_SE = 3.0
WARN_FRACTION = 0.02
ERROR_FRACTION = 0.5


def gradient_shift(info: HessianInfo | SpectrumInfo, g: Tensor) -> float:
    """S = ½·nβ²·gᵀA⁻¹(nβH⁺ + 2c)A⁻¹g (module docstring) from the plan's spectrum of H at w*."""
    nb, c = info.nbeta, info.floor
    g = g.double().reshape(-1)
    if isinstance(info, HessianInfo):
        vals, vecs = info.eigvals.double(), info.eigvecs.double()
    else:
        vals, vecs = info.locked_values.double(), info.locked_vectors.double()
    coef = vecs.T @ g if vecs.numel() else g.new_zeros(0)
    rest = max(float(g.square().sum() - coef.square().sum()), 0.0)  # unresolved: h = 0
    vals = vals.to(coef.device)  # Ritz values live on the CPU, g on the model's device
    h = nb * vals.clamp_min(0)
    known = float((coef.square() * (h + 2 * c) / (h + c).square()).sum())
    return 0.5 * nb**2 * (known + rest * 2 / c)


def check_gradient(
    shift: float, grad_norm: float, llc: float, stderr: float, nbeta: float
) -> tuple[Finding, ...]:
    """The ``gradient_at_w_star`` finding where the gradient shift matters (module docstring)."""
    scale = abs(llc)
    if not (shift >= WARN_SE * stderr and shift >= WARN_FRACTION * scale):
        return ()
    severe = shift >= ERROR_FRACTION * scale
    return (
        Finding(
            "gradient_at_w_star",
            "error" if severe else "warning",
            f"w* is not a critical point: ‖∇L_n(w*)‖ = {grad_norm:.3g}, and in the quadratic "
            f"model at w* the chains' drift down that gradient lowers λ̂ by about {shift:.3g} "
            f"(λ̂ = {llc:.4g} ± {stderr:.2g}; nβ = {nbeta:.4g}), so λ̂ mixes the slope at w* into "
            "the degeneracy it measures. Train further (to ∇L_n ≈ 0); a larger gamma shrinks "
            "the shift (as 1/γ) and λ̂ with it",
            {"shift": shift, "grad_norm": grad_norm, "llc": llc},
        ),
    )
