"""What the data estimator decides before its first step (``llc_plan.make_plan``): the
preconditioner (``preconditioner``, with the soft directions whitened where the potential is
quadratic: ``soft_whitening``), the integrator, the friction ξ₀ and the anchors; and the switch
from LM to BAOAB once ε is known (``integrator_switch``).
"""

__all__: list[str] = []
