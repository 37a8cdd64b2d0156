"""The CUDA device as a test parameter: carries the ``gpu`` marker (skipped unless ``--rungpu``
on a machine with CUDA), so a CPU test and its GPU copy are one parametrised test."""

from __future__ import annotations

import pytest

ON_CUDA = pytest.param("cuda", marks=pytest.mark.gpu)
DEVICES = ["cpu", ON_CUDA]
