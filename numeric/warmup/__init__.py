"""The warm-up (``warm_up``): the step size (``step_size``, from the ``curvature`` where the
chains are; MALA's ``dual_averaging``), BAOAB's friction set by the minibatch heating
(``friction``) and the burn-in (``burn_in``); ``probes`` binds the measurements to a run.
"""

__all__: list[str] = []
