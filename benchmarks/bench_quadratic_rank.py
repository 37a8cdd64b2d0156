"""Time rlct.quadratic.generic_rank for a few shapes and print a Markdown table.

Usage: ``python benchmarks/bench_quadratic_rank.py [--repeat N]``. Each shape is timed N times
(default 5) after one warm-up call; the table reports the median and the minimum wall time, the
Jacobian size, the generic rank and whether it was certified (reached the proven upper bound) or
only probabilistic (failure probability ≤ 10^−30). A second table times the exact rank at a given
integer point (entries in [−2^16, 2^16]): full-rank points stop at the modular rank, rank-deficient
ones need FLINT's exact integer rank.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import flint
import numpy as np

from rlct.quadratic import generic_rank_certificate, jacobian_rank, modular_addition_data


def shapes() -> list[tuple[str, int, int, int, np.ndarray | None, bool]]:
    x5, _ = modular_addition_data(5)
    x7, _ = modular_addition_data(7)
    return [
        ("no data", 8, 5, 40, None, False),
        ("no data", 10, 8, 60, None, False),
        ("no data", 12, 6, 80, None, False),
        ("no data, rank-deficient (p = 1)", 12, 1, 10, None, False),
        ("no data, rank-deficient (defective)", 6, 3, 8, None, False),
        ("modular addition p=5, centred", 10, 5, 20, x5, True),
        ("modular addition p=7, centred", 14, 7, 30, x7, True),
        ("modular addition p=7, centred", 14, 7, 100, x7, True),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(
        f"python {platform.python_version()}, python-flint {flint.__version__}, numpy "
        f"{np.__version__}, {platform.machine()}\n"
    )
    print("| setting | d | p | K | Jacobian | generic rank | certificate | median s | min s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, d, p, K, X, centered in shapes():
        generic_rank_certificate(d, p, K, X, centered)  # warm-up
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            cert = generic_rank_certificate(d, p, K, X, centered)
            times.append(time.perf_counter() - t0)
        rows = p * (d * (d + 1) // 2) if X is None else p * X.shape[0]
        cols = (d + p) * K
        how = "certified" if cert.certified else f"δ ≤ {float(cert.failure_probability):.1e}"
        print(
            f"| {name} | {d} | {p} | {K} | {rows} × {cols} | {cert.rank} | {how} | "
            f"{statistics.median(times):.3f} | {min(times):.3f} |"
        )
    point_table(args.repeat)


def point_table(repeat: int) -> None:
    rng = np.random.default_rng(0)
    x5, _ = modular_addition_data(5)
    cases = [
        ("no data, full rank", 8, 5, 40, None, False),
        ("no data, rank-deficient (p = 1)", 12, 1, 10, None, False),
        ("modular addition p=5, rank-deficient", 10, 5, 9, x5, False),
    ]
    print("\n| exact rank at a point | d | p | K | rank | median s |")
    print("|---|---|---|---|---|---|")
    for name, d, p, K, X, centered in cases:
        times, r = [], None
        for _ in range(repeat):
            W = rng.integers(-(2**16), 2**16, size=(d, K), endpoint=True)
            V = rng.integers(-(2**16), 2**16, size=(p, K), endpoint=True)
            t0 = time.perf_counter()
            r = jacobian_rank(W, V, X, centered)
            times.append(time.perf_counter() - t0)
        print(f"| {name} | {d} | {p} | {K} | {r} | {statistics.median(times):.3f} |")


if __name__ == "__main__":
    main()
