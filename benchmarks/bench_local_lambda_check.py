"""The linear networks' local λ closed forms against the exact ideal computation, beyond the
tests' nine parameters (issue 64, item 2).

For every network of ``--min-params``…``--max-params`` parameters with at least three widths
(shapes in random order), a grid of factorisations as in ``tests/test_rlct_local.py``: at most
``--structured`` partial-permutation points and ``--patterns`` random integer points of distinct
layer-rank patterns, each compared: ``rlct.dln_local_lambda`` (the theorem) against
``rlct.local_ideal_llc`` on the generators of W_L⋯W_1 − W* (the exact layer). Stops starting new
shapes after ``--budget`` seconds. Writes benchmarks/out/local_lambda_check.json: per shape the
points checked, exact agreements, bounded cases (the theorem's bounds, checked to hold), the
ideal computations that were not exact, and any disagreement (there must be none).

    python benchmarks/bench_local_lambda_check.py --min-params 10 --max-params 12 --budget 3000
    python benchmarks/bench_local_lambda_check.py --shard 0/2 --json out_0.json & …
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
import time
from pathlib import Path

import rlct
from rlct.errors import TooLargeError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_rlct_local import _network_ideal, _of_rank, _pairs, _partial_permutations, _shapes


def _points(widths, rng: random.Random, structured: int, patterns: int) -> list:
    families = [_partial_permutations(b, a) for a, b in _pairs(widths)]
    per_layer = [len(f) for f in families]
    total = 1
    for k in per_layer:
        total *= k
    picks = rng.sample(range(total), min(structured, total))
    points = []
    for idx in picks:  # the idx-th element of the product, without listing it
        layers = []
        for fam, k in zip(reversed(families), reversed(per_layer)):
            idx, r = divmod(idx, k)
            layers.append(fam[r])
        points.append(list(reversed(layers)))
    ranks = list(itertools.product(*(range(min(a, b) + 1) for a, b in _pairs(widths))))
    for pattern in rng.sample(ranks, min(patterns, len(ranks))):
        points.append([_of_rank(b, a, q, rng) for (a, b), q in zip(_pairs(widths), pattern)])
    return points


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-params", type=int, default=10)
    ap.add_argument("--max-params", type=int, default=12)
    ap.add_argument("--structured", type=int, default=3)
    ap.add_argument("--patterns", type=int, default=4)
    ap.add_argument("--budget", type=float, default=3000.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shard", default="0/1", help="i/k: this process takes shapes i, i + k, …")
    ap.add_argument("--reverse", action="store_true", help="the shapes last first (a 2nd process)")
    ap.add_argument("--skip", nargs="*", default=[], help="JSONs of earlier runs: their shapes")
    ap.add_argument("--json", default="benchmarks/out/local_lambda_check.json")
    args = ap.parse_args(argv)
    shard, shards = (int(x) for x in args.shard.split("/"))
    rng = random.Random(args.seed)
    shapes = [
        w for w in _shapes(args.max_params)
        if sum(a * b for a, b in _pairs(w)) >= args.min_params
    ]  # fmt: skip
    rng.shuffle(shapes)
    done = set()
    for path in args.skip:
        with open(path, encoding="utf-8") as fh:
            done |= {tuple(r["widths"]) for r in json.load(fh)["shapes"]}
    shapes = [w for w in shapes if tuple(w) not in done]
    shapes = shapes[shard::shards][:: -1 if args.reverse else 1]
    t0, rows, not_run = time.perf_counter(), [], []
    for widths in shapes:
        if time.perf_counter() - t0 > args.budget:
            not_run.append(list(widths))
            continue
        start = time.perf_counter()
        row = {"widths": list(widths), "checked": 0, "equal": 0, "bounded": 0,
               "ideal_not_exact": 0, "ideal_refused": 0, "disagreements": []}  # fmt: skip
        for layers in _points(widths, rng, args.structured, args.patterns):
            formula = rlct.dln_local_lambda(layers)
            try:
                exact = rlct.local_ideal_llc(*_network_ideal(layers))
            except TooLargeError:  # the exact layer refuses it (size limits): nothing to compare
                row["ideal_refused"] += 1
                continue
            row["checked"] += 1
            if not exact.exact:
                row["ideal_not_exact"] += 1
                if not (exact.lower <= formula.upper and formula.lower <= exact.upper):
                    row["disagreements"].append(str([list(map(list, w.tolist())) for w in layers]))
                continue
            if not formula.exact:
                row["bounded"] += 1
                ok = formula.lower <= exact.lam <= formula.upper
            else:
                ok = (formula.lam, formula.mult) == (exact.lam, exact.mult)
                row["equal"] += ok
            if not ok:
                row["disagreements"].append(str([list(map(list, w.tolist())) for w in layers]))
        row["seconds"] = time.perf_counter() - start
        rows.append(row)
        print(json.dumps(row), flush=True)
        keys = ("checked", "equal", "bounded", "ideal_not_exact", "ideal_refused")
        summary = {k: sum(r.get(k, 0) for r in rows) for k in keys}
        summary["disagreements"] = sum(len(r["disagreements"]) for r in rows)
        summary["shapes_run"], summary["shapes"] = len(rows), len(shapes)
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"summary": summary, "shapes": rows, "not_run": not_run,
                       "seconds": time.perf_counter() - t0}, fh, indent=1)  # fmt: skip


if __name__ == "__main__":
    main()
