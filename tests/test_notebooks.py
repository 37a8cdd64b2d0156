"""Every notebook in notebooks/ (jupytext py:percent text) executes without error."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

jupytext = pytest.importorskip("jupytext", reason="notebook tests need the `test` extra")
nbclient = pytest.importorskip("nbclient", reason="notebook tests need the `test` extra")

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.py"))


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ holds no jupytext notebooks"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes(path: Path, tmp_path: Path) -> None:
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import KernelSpecManager

    # A kernel spec that runs this interpreter, so the notebook sees the same environment.
    spec_dir = tmp_path / "kernels" / "slt"
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "slt",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    ksm = KernelSpecManager(kernel_dirs=[str(tmp_path / "kernels")])
    nb = jupytext.read(path)
    km = KernelManager(kernel_name="slt", kernel_spec_manager=ksm)
    client = nbclient.NotebookClient(
        nb, km=km, timeout=600, resources={"metadata": {"path": str(path.parent)}}
    )
    try:
        # One torch (OpenMP) thread, as every other test runs (conftest): beside another busy
        # process, a kernel's spinning OpenMP workers made llc_estimation 10× slower.
        client.execute(env={"MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"})
    finally:  # nbclient shuts down only kernels it started itself; this one is ours
        if km.has_kernel:
            km.shutdown_kernel(now=True)
    errors = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]
    assert not errors
