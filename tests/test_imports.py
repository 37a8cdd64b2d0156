"""`rlct` stays importable without torch; every package exposes what its docs name."""

import subprocess
import sys


def test_rlct_does_not_import_torch():
    code = "import sys, rlct; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_public_names_exist():
    import numeric
    import rlct
    import verification

    for mod in (rlct, numeric, verification):
        missing = [name for name in mod.__all__ if not hasattr(mod, name)]
        assert not missing, (mod.__name__, missing)
