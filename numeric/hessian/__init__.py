"""H(w*) and its spectrum: on which samples (``at_w_star``), dense with its preconditioner
(``dense``), the extreme spectrum by Lanczos (``lanczos``, ``spectrum``) with the low-rank
preconditioner's root (``lowrank``), and the public trace and eigenvalue measures
(``measures``).
"""

__all__: list[str] = []
