"""``estimate_llc`` (``estimate_llc``) and its runs: one run of the chains in public stages
(``one_run.Run``, gathered with the set-up, the plan and ``summarise`` in ``stages``), whose
outcome is a value (``one_run.Outcome``); one loop in ``estimate_llc`` starts it again after a divergence
(``divergence_restart``) or hot draws (``heating_restart``), or on the full batch
(``full_batch_switch``).
"""

__all__: list[str] = []
