"""`rlct` stays importable without torch; every package exposes what its docs name."""

import subprocess
import sys

import sympy as sp


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


def test_quadratic_names_as_the_issue_spells_them():
    from rlct.quadratic import check_theorems, generic_rank, jacobian_rank, llc, theorem_4_2

    assert callable(check_theorems) and callable(theorem_4_2)
    assert generic_rank(3, 1, 2) == 5  # the issue's example: not K(d+p−1) = 6
    assert jacobian_rank([[1, 0], [0, 1], [1, 1]], [[1, 2]]) == 5
    assert llc([[1, 0], [0, 1], [1, 1]], [[1, 2]]).lam == sp.Rational(5, 2)
