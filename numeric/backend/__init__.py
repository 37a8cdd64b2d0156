"""Torch and platform workarounds, nothing about the LLC: inductor's small-matmul backend,
flushed denormals, the freed heap handed back, memory checks, torch's missing derivatives named,
thread-stable linear algebra.
"""

__all__: list[str] = []
