"""The potential estimator (``estimate_llc_potential``: its target ``target`` and warm-up
``warmup``), Metropolis-adjusted HMC (``hmc``) and the exact references by closed form and
quadrature (``reference``: ``expected_llc``).
"""

__all__: list[str] = []
