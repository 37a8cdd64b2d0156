"""What the first ``compile=True`` estimate of a process costs, on a cold and on a warm cache.

Each model of ``bench_vs_devinterp`` (the four small ones) is estimated with ``compile=True`` in
a fresh process, twice, with ``TORCHINDUCTOR_CACHE_DIR`` pointing at a new empty folder: the
first process compiles everything (cold: no earlier process has compiled this kernel); the
second finds the generated code in inductor's FX-graph cache and pays only dynamo's and
AOTAutograd's tracing (warm: any later process on the same machine, torch and model). A third
call in the second process reuses the in-process kernel cache (``numeric.sampler.kernel``). Same
settings as ``bench_vs_devinterp`` (8 chains, 200 + 1000 steps, plain SGLD).

    python benchmarks/bench_compile_time.py       # ~3 minutes on 2 cores
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
import bench_vs_devinterp as vs

SMALL_MODELS = range(4)  # indices into bench_vs_devinterp.CASES (not the MLP)
COMPARISON_JSON = os.path.join(os.path.dirname(__file__), "out", "bench_vs_devinterp.json")


def comparison_step_size(model: str) -> float:
    """The ε the devinterp comparison ran this model at (its JSON: the automatic rule's ε)."""
    with open(COMPARISON_JSON) as fh:
        rows = json.load(fh)["rows"]
    return next(r["eps"] for r in rows if r["model"] == model)


def one_process(case: int) -> dict[str, float]:
    """Times, in this process: the first compiled estimate, then a second (cached kernel)."""
    torch.set_num_threads(1)
    n, batch = 10_000, 100
    g = torch.Generator().manual_seed(0)
    model, d_in = vs.CASES[case].build(g)
    data = vs.make_data(model, d_in, n, g)
    kw = dict(chains=8, burnin=200, draws=1000, nbeta=n / math.log(n), gamma=1.0, batch=batch)
    kw["eps"] = comparison_step_size(vs.CASES[case].name)
    first, llc, _ = vs.run_numeric(model, data, **kw, seed=1, compile=True)
    second, again, _ = vs.run_numeric(model, data, **kw, seed=1, compile=True)
    assert llc == again
    return dict(first_s=first, cached_s=second)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", type=int, help=argparse.SUPPRESS)  # child process: one model
    ap.add_argument("--json", default="benchmarks/out/bench_compile_time.json")
    args = ap.parse_args()
    if args.case is not None:
        print(json.dumps(one_process(args.case)))
        return
    rows = []
    for case in SMALL_MODELS:
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache)
            runs = []
            for _ in range(2):  # cold, then warm
                t = time.perf_counter()
                out = subprocess.run(
                    [sys.executable, __file__, "--case", str(case)],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if out.returncode != 0:
                    sys.stderr.write(out.stderr)
                    raise SystemExit(f"case {case} failed")
                runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
                runs[-1]["process_s"] = time.perf_counter() - t
        row = dict(
            model=vs.CASES[case].name,
            cold_first_s=runs[0]["first_s"],
            warm_first_s=runs[1]["first_s"],
            cached_s=runs[1]["cached_s"],
            cold_process_s=runs[0]["process_s"],
            warm_process_s=runs[1]["process_s"],
        )
        rows.append(row)
        print(json.dumps(row), flush=True)
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(dict(torch=torch.__version__, threads=1, rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
