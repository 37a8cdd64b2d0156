"""Learning coefficients in closed form: K in normal-crossing form
(:mod:`~rlct.closed_forms.normal_crossing`) and the literature's values for regular models,
reduced rank regression and deep linear networks (:mod:`~rlct.closed_forms.literature`).
"""

__all__: list[str] = []
