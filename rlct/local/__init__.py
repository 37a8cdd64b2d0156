"""λ and m at any point of the zero set: K translated there and solved by the cascade
(:mod:`~rlct.local.point`)."""

from .point import local_ideal_llc, local_llc

__all__ = ["local_ideal_llc", "local_llc"]
