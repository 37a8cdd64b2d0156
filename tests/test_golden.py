"""Golden estimates: every field of ``LLCEstimate`` bit for bit, for configurations that together
take every path of the two estimators (automatic and fixed lengths, LM with the Hessian
preconditioner, BAOAB at a saddle with the friction raised and anchors on, a given friction,
Euler with minibatch gradients, dict data, a given ``anchor_every``, ``compile=True``, and the
potential estimator with and without its position-dependent steps and with ``metropolis=False``).

The goldens in ``tests/golden/`` were first recorded at 7e11275, before the estimators were split
into stages, with one torch thread (as the suite runs):

    python tests/test_golden.py --record

A change that is meant to alter the numbers (a new rule, another draw order) re-records them
and says so in its commit; a refactor must leave them untouched.

Bit for bit holds only on the kind of machine that recorded them: torch's and MKL's kernels round
differently on other processors (a machine with AVX-512 read the potential goldens 10⁻⁵ apart in
relative terms, the data goldens 10⁻⁷ apart, and a MALA run took another length).
``golden/MACHINE.json`` holds the recording machine's fingerprint (``_fingerprint``); on another
machine the test checks only what must hold anywhere (``_agrees``: the fields, the configuration's
choices, λ̂ within 4 standard errors) and records which comparison it made; re-record there to
guard a refactor bit for bit.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import platform
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import numeric

GOLDEN = Path(__file__).parent / "golden"
# the cases about minibatch paths (friction raised by the heating, anchors, the compiled gather)
# pin the batch: the default is the full data where a step on it is cheap, as on these models
MINIBATCH = 256


def _fingerprint() -> dict[str, str]:
    """What the goldens' rounding depends on: torch and numpy, the CPU kernels torch dispatches
    to, and the processor's instruction-set flags (a hash of /proc/cpuinfo's, where it exists)."""
    try:
        flags = next(
            line.split(":", 1)[1]
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("flags")
        )
        cpu = hashlib.sha256(" ".join(sorted(flags.split())).encode()).hexdigest()[:16]
    except (OSError, StopIteration):
        cpu = platform.processor() or platform.machine()
    return {
        "torch": torch.__version__,
        "numpy": np.__version__,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "cpu_flags": cpu,
    }


def _linear(n: int, d: int, seed: int) -> tuple[numeric.GaussianLinear, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g)
    y = X @ torch.randn(d, generator=g) + torch.randn(n, generator=g)
    m = numeric.GaussianLinear(X, y)
    return m, m.minimiser()


def _saddle(n: int = 2000, seed: int = 0):
    """y = x·w1·w2 + noise at w* = 0: a saddle of L_n (BAOAB, anchors, raised friction)."""
    from verification.models import product_regression

    prob = product_regression(n, torch.Generator().manual_seed(seed))
    return prob.loss_fn, prob.params, prob.data


def _dict_loss(p: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> torch.Tensor:
    return 0.5 * (b["y"] - b["x"] @ p["w"]).square().mean()


def lm_hessian() -> numeric.LLCEstimate:
    m, w = _linear(2000, 4, 0)
    return numeric.estimate_llc(m.loss_fn, {"w": w}, m.data, num_chains=4, seed=0)


def baoab_saddle() -> numeric.LLCEstimate:
    loss_fn, w, data = _saddle()
    return numeric.estimate_llc(
        loss_fn, w, data, num_chains=4, seed=1, num_draws=300, batch_size=MINIBATCH
    )


def baoab_given_friction() -> numeric.LLCEstimate:
    loss_fn, w, data = _saddle()
    return numeric.estimate_llc(
        loss_fn, w, data, num_chains=4, seed=2, num_draws=300, friction=2.0, anchor_every=0,
        batch_size=MINIBATCH,
    )  # fmt: skip


def euler_minibatch() -> numeric.LLCEstimate:
    m, w = _linear(1000, 3, 1)
    return numeric.estimate_llc(
        m.loss_fn,
        {"w": w},
        m.data,
        num_chains=3,
        seed=3,
        integrator="euler",
        gradient="minibatch",
        batch_size=64,
        nbeta=50.0,
    )


def dict_data() -> numeric.LLCEstimate:
    m, w = _linear(1500, 3, 2)
    x, y = m.data
    return numeric.estimate_llc(
        _dict_loss, {"w": w}, {"x": x, "y": y}, num_chains=3, seed=4, preconditioner="none"
    )


def given_anchor_every() -> numeric.LLCEstimate:
    loss_fn, w, data = _saddle(1000, 1)
    return numeric.estimate_llc(
        loss_fn, w, data, num_chains=3, seed=5, anchor_every=16, num_draws=200, prior_precision=0.3
    )


def fixed_lengths() -> numeric.LLCEstimate:
    m, w = _linear(2000, 4, 3)
    return numeric.estimate_llc(
        m.loss_fn,
        {"w": w},
        m.data,
        num_chains=4,
        seed=6,
        step_size=1e-4,
        num_burnin=100,
        num_draws=150,
        batch_size=MINIBATCH,
    )


def fixed_lengths_saddle() -> numeric.LLCEstimate:
    loss_fn, w, data = _saddle(1000, 2)
    return numeric.estimate_llc(
        loss_fn, w, data, num_chains=2, seed=7, num_burnin=300, num_draws=100, batch_size=MINIBATCH
    )


def hessian_subset() -> numeric.LLCEstimate:
    """n > 16,384: H(w*) from a fixed random subset drawn by a generator of its own."""
    m, w = _linear(20_000, 2, 5)
    return numeric.estimate_llc(m.loss_fn, {"w": w}, m.data, num_chains=2, seed=13)


def no_hessian() -> numeric.LLCEstimate:
    """D > 2,048: the Hessian's spectrum by Lanczos (no dense Hessian), no low-rank preconditioner
    (no outlier to whiten), the slow-direction rule, and the switch to BAOAB."""
    d = 2100
    s = torch.logspace(-2, 0, d)
    centre = torch.randn(d, generator=torch.Generator().manual_seed(0))
    x = torch.ones(500, 1)

    def loss_fn(p, b):
        return 0.5 * (s * (p["w"] - centre).square()).sum() * b[0].square().mean()

    return numeric.estimate_llc(
        loss_fn, {"w": centre.clone()}, (x,), num_chains=2, seed=14, batch_size=8
    )


def full_batch_saddle() -> numeric.LLCEstimate:
    """batch_size = n: exact gradients on the data every chain shares, critical damping."""
    loss_fn, w, data = _saddle(600, 3)
    return numeric.estimate_llc(loss_fn, w, data, num_chains=3, seed=15, batch_size=600)


def compiled() -> numeric.LLCEstimate:
    m, w = _linear(1000, 3, 4)
    return numeric.estimate_llc(
        m.loss_fn, {"w": w}, m.data, num_chains=4, seed=8, num_burnin=200, num_draws=100,
        compile=True, batch_size=MINIBATCH,
    )  # fmt: skip


def potential_metric() -> numeric.LLCEstimate:
    return numeric.estimate_llc_potential(
        lambda w: w[..., 0] ** 2 * w[..., 1] ** 2, [0.0, 0.0], 1000, num_chains=4, seed=9
    )


def potential_plain() -> numeric.LLCEstimate:
    return numeric.estimate_llc_potential(
        lambda w: w[..., 0] ** 4, [0.0], 1000, num_chains=4, seed=10
    )


def potential_unadjusted() -> numeric.LLCEstimate:
    return numeric.estimate_llc_potential(
        lambda w: w[..., 0] ** 2 + w[..., 1] ** 4,
        [0.0, 0.0],
        1000,
        num_chains=3,
        seed=11,
        metropolis=False,
    )


def potential_fixed() -> numeric.LLCEstimate:
    return numeric.estimate_llc_potential(
        lambda w: w[..., 0] ** 2 * w[..., 1] ** 4,
        [0.0, 0.0],
        1000,
        num_chains=3,
        seed=12,
        num_burnin=400,
        num_draws=300,
        metric=False,
    )


CASES: dict[str, Callable[[], numeric.LLCEstimate]] = {
    f.__name__: f
    for f in (
        lm_hessian,
        baoab_saddle,
        baoab_given_friction,
        euler_minibatch,
        dict_data,
        given_anchor_every,
        fixed_lengths,
        fixed_lengths_saddle,
        hessian_subset,
        no_hessian,
        full_batch_saddle,
        compiled,
        potential_metric,
        potential_plain,
        potential_unadjusted,
        potential_fixed,
    )
}


def _split(obj: Any, path: str, arrays: dict[str, np.ndarray]) -> Any:
    """``obj`` as JSON-able data, its arrays moved into ``arrays`` under their paths."""
    if isinstance(obj, np.ndarray):
        arrays[path] = obj
        return {"__array__": path}
    if dataclasses.is_dataclass(obj):
        return {
            "__type__": type(obj).__name__,
            **{
                f.name: _split(getattr(obj, f.name), f"{path}.{f.name}", arrays)
                for f in dataclasses.fields(obj)
            },
        }
    if isinstance(obj, (list, tuple)):
        return [_split(v, f"{path}[{i}]", arrays) for i, v in enumerate(obj)]
    if isinstance(obj, dict):
        return {str(k): _split(v, f"{path}.{k}", arrays) for k, v in obj.items()}
    if isinstance(obj, (np.floating, float)):
        return {"__float__": float(obj).hex()}  # exact, NaN and ±inf included
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


def _agrees(got: Any, want: Any) -> list[str]:
    """What a run on another machine must share with the golden (``_split`` trees): the fields,
    the configuration's names and choices, and λ̂ within 4 combined standard errors (the
    chains themselves part: MALA's accept/reject decisions flip at the last bit, and an
    automatic length can come out one extension longer)."""
    if set(got) != set(want):
        return ["fields"]
    problems = []
    number = r"[-+]?\d[\d.,]*(?:e[-+]?\d+)?"
    for key, value in want["config"].items():  # the rules' texts name their numbers: masked
        if isinstance(value, str) and re.sub(number, "#", got["config"][key]) != re.sub(
            number, "#", value
        ):
            problems.append(f"config.{key}")
    mean, se = (float.fromhex(want[k]["__float__"]) for k in ("mean", "stderr"))
    mean2, se2 = (float.fromhex(got[k]["__float__"]) for k in ("mean", "stderr"))
    if not abs(mean2 - mean) <= 4 * float(np.hypot(se, se2)):
        problems.append(f"mean {mean2} against {mean} ± {se}")
    return problems


def _record(name: str) -> None:
    arrays: dict[str, np.ndarray] = {}
    tree = _split(CASES[name](), name, arrays)
    GOLDEN.mkdir(exist_ok=True)
    (GOLDEN / f"{name}.json").write_text(json.dumps(tree, indent=1, ensure_ascii=False) + "\n")
    np.savez(GOLDEN / f"{name}.npz", **arrays)


@pytest.mark.parametrize("name", list(CASES))
def test_estimate_is_bitwise_the_golden(name: str, record_property) -> None:
    arrays: dict[str, np.ndarray] = {}
    got = _split(CASES[name](), name, arrays)
    want = json.loads((GOLDEN / f"{name}.json").read_text())
    bitwise = json.loads((GOLDEN / "MACHINE.json").read_text()) == _fingerprint()
    record_property("comparison", "bitwise" if bitwise else "another machine: statistical")
    if not bitwise:
        assert not _agrees(got, want), _agrees(got, want)
        return
    assert got == want
    with np.load(GOLDEN / f"{name}.npz") as saved:
        assert sorted(saved.files) == sorted(arrays)
        for key, value in arrays.items():
            assert value.dtype == saved[key].dtype, key
            assert np.array_equal(value, saved[key], equal_nan=True), key


def test_fingerprint_names_the_machine() -> None:
    """The fingerprint is the same twice on one machine and names torch, numpy and the CPU."""
    first, second = _fingerprint(), _fingerprint()
    assert first == second
    assert first["torch"] == torch.__version__ and first["numpy"] == np.__version__
    assert first["cpu_capability"] and first["cpu_flags"]


if __name__ == "__main__":
    if sys.argv[1:2] != ["--record"]:
        sys.exit("usage: python tests/test_golden.py --record [name ...]")
    torch.set_num_threads(1)  # as tests/conftest.py
    if sys.argv[2:]:  # a few cases: only on the machine that recorded the rest
        machine = json.loads((GOLDEN / "MACHINE.json").read_text())
        if machine != _fingerprint():
            sys.exit("the other goldens were recorded on another machine: record them all")
    for case in sys.argv[2:] or list(CASES):
        _record(case)
        print("recorded", case, file=sys.stderr)
    text = json.dumps(_fingerprint(), indent=1) + "\n"
    (GOLDEN / "MACHINE.json").write_text(text)
