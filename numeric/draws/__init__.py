"""After warm-up: how many draws and their recording (``sample``), the sequential stopping rule
(``stopping_rule``), draws made burn-in while the chains still spread (``burn_in_extension``),
and the step-size check at ε/2 (``step_check``).
"""

__all__: list[str] = []
