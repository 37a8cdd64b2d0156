"""Where a result came from: the versions, the source commit and the run's device, dtype, seed.

``provenance_block(device=..., dtype=..., seed=...)`` is the block every serialised result carries
(``LLCEstimate.to_dict()["provenance"]``, the verification records and reports, the calibration
report). The versions and the commit are read once per process; the block never raises.

No torch import here: torch's version is read from its installed metadata, like the others, so
the module (and anything that only wants the versions) works where torch is absent.
"""

from __future__ import annotations

import functools
import platform
import re
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

__all__ = ["DISTRIBUTIONS", "git_commit", "package_versions", "provenance_block"]

# provenance key -> installed distribution name
DISTRIBUTIONS = {
    "slt_check": "slt-check",
    "torch": "torch",
    "python_flint": "python-flint",
    "sympy": "sympy",
    "numpy": "numpy",
}
SOURCE_DIR = Path(__file__).resolve().parent.parent  # the folder holding numeric/, rlct/, ...
GIT_TIMEOUT_S = 5.0
_COMMIT = re.compile(r"[0-9a-f]{40}")


def _installed(distribution: str) -> str | None:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


@functools.cache
def package_versions() -> dict[str, str | None]:
    """{key: installed version} for slt-check and its numeric stack (None where not installed),
    and ``python``: the interpreter's version."""
    versions = {key: _installed(dist) for key, dist in DISTRIBUTIONS.items()}
    return {**versions, "python": platform.python_version()}


@functools.cache
def git_commit(source_dir: Path = SOURCE_DIR) -> str | None:
    """HEAD's 40-hex commit when ``source_dir`` is the top of a git checkout (an editable or
    source install), else None: an installed copy inside some other repository is not that
    repository's commit. Never raises (no git, a timeout, a bare folder: None)."""
    try:
        run = functools.partial(
            subprocess.run,
            cwd=source_dir,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=True,
        )
        top = run(["git", "rev-parse", "--show-toplevel"]).stdout.strip()
        if Path(top).resolve() != Path(source_dir).resolve():
            return None
        head = run(["git", "rev-parse", "HEAD"]).stdout.strip()
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    return head if _COMMIT.fullmatch(head) else None


def provenance_block(
    *, device: str | None = None, dtype: str | None = None, seed: int | None = None
) -> dict[str, Any]:
    """A fresh plain-data block: the versions of ``package_versions()``, ``git_commit`` (None
    outside a git checkout) and the run's ``device``, ``dtype`` and ``seed`` (None where the
    result has none)."""
    return {
        **package_versions(),
        "git_commit": git_commit(),
        "device": None if device is None else str(device),
        "dtype": None if dtype is None else str(dtype),
        "seed": None if seed is None else int(seed),
    }
