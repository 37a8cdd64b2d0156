"""Estimates over checkpoints (``estimate_llc_series``, ``checkpoints``, on ray: ``ray``; the
result ``llc_series``) and over temperatures (``sweep``).
"""

__all__: list[str] = []
