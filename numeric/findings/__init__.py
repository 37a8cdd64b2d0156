"""One module per question a finding answers, and the registry of their codes (``codes``):
the checks on numbers every run gets (``checks``, ``standard``), the slow directions
(``slow_mixing``), the chains' spread (``spreading``) and centre (``off_centre``), the gradient at
w* (``gradient_at_w_star``), the quadratic region (``beyond_quadratic``), unreached regions
(``unreached_region``), the loss's rounding (``rounding``), soft directions
(``soft_directions``), and a curvature that outgrew the step (``stiffer_in_draws``).
"""

__all__: list[str] = []
