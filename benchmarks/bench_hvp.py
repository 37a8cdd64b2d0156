"""Where the warm-up's time goes on a large model: gradients, Hessian-vector products, quadrature.

The heating probe (``numeric.warmup.friction.counted_excess``) takes Gauss quadratures of batched
Hessian-vector products over 4 chains; on the third H200 loan each product seemed to cost 0.78 s
at 10⁸ parameters against 0.012 s for one chain's gradient (``benchmarks/RESULTS.md``), but the
profile only saw the synchronising calls. This times each part alone, synchronised, on the
``bench_gpu_llc`` deep linear network (three square layers of width h, D = 3h², batch B):

- ``grad_vmap``: ∇L_B for the 2C rows of a control-variate step, one vmapped forward and one
  reverse pass (``DataModel._grad``), against ``grad_loop``, the same 2C gradients one at a time
  without vmap: 18·B·h² flops a gradient (3 products forward, 6 backward).
- ``hvp_double``: one batched product v ↦ ∇²L_B·v for C chains (``DataModel.hvp_at``, double
  backward through vmap), ``hvp_setup`` its graph, ``hvp_forward``: forward-over-reverse
  (``torch.func.jvp`` of ``grad``, vmapped) on the same minibatch, ``hvp_loop``: double backward
  one chain at a time without vmap.
- ``quadrature_identity``: ``gauss_quadrature``'s own cost (10 Lanczos steps with full
  reorthogonalisation over [C, D]) with a free operator; ``eigh_device`` / ``eigh_cpu`` the
  [C, 10, 10] float64 eigendecomposition it ends with.
- ``probe_matmul`` / ``probe_vecdot``: the draws' projection of the drift [C, D] on 3 slow
  directions (every step), as a matrix product and as one reduction per output;
  ``lanczos_matvec`` / ``lanczos_vecdot``: Lanczos's inner products with 20 basis vectors.
- ``draw_*``: one eager draw of the estimator's kernel (``kernel.make_block``, control variate at
  w*, LM, γ = 1, 3 probe directions) per step, with no per-step records (``draw_bare``, as in a
  burn-in), each record alone (``draw_dist``, ``draw_obs``, ``draw_norms``) and all three
  (``draw_all``, as in the draws). On the fifth H200 loan a draw took 0.18 s against 0.083 s
  for its gradients alone; these say where the rest goes. ``--profile`` adds a table of the
  device's kernels over 4 such draws.

    python benchmarks/bench_hvp.py [--device cuda] [--size 1e8] [--batch 2048] [--tf32]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable

import torch
from bench_gpu_llc import _dln_problem, _sync  # the same network (a sibling script)
from torch.func import grad, jvp, vmap

from numeric.inputs.data import take
from numeric.inputs.flat_params import flatten_params
from numeric.inputs.problem import DataModel
from numeric.sampler import kernel, sgld
from numeric.types import Constants, KernelSpec, Record
from numeric.warmup.friction import gauss_quadrature


def seconds(fn: Callable[[], object], device: str, reps: int = 3) -> float:
    """Mean seconds of ``fn`` after one untimed call, synchronised."""
    fn()
    _sync(device)
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    _sync(device)
    return (time.perf_counter() - t) / reps


DRAW_STEPS = 4  # steps per timed block of draws


def kernel_draws(
    model: DataModel, w0: torch.Tensor, c: int, dev: str
) -> Callable[[Record], object]:
    """``run(record)``: ``DRAW_STEPS`` eager steps of the estimator's kernel from near w*, their
    minibatch indices and normals drawn beforehand (not timed)."""
    spec = KernelSpec(control_variate=True, integrator="lm", stacked=False)
    gen = torch.Generator(device=dev).manual_seed(7)
    probe = torch.randn(w0.numel(), 3, device=dev, generator=gen)
    consts = Constants(w0, torch.zeros_like(w0), None, probe, nbeta=1e4, gamma=1.0, alpha=0.0)
    w = w0.expand(c, -1) + 1e-4 * torch.randn(c, w0.numel(), device=dev, generator=gen)
    state = sgld.init(w, gen)
    noise = kernel.draw_block(gen, DRAW_STEPS, c, model.n, model.batch, w)
    block = kernel.make_block(model.f, spec, functional=False)
    return lambda record: block(state, noise, None, 1e-9, consts, model.data, record)


def time_draws(model: DataModel, w0: torch.Tensor, c: int, dev: str) -> dict[str, float]:
    """Seconds per eager draw with each choice of per-step records (module docstring)."""
    run = kernel_draws(model, w0, c, dev)
    records = {
        "bare": Record(dist=False, obs=False, norms=False),
        "dist": Record(dist=True, obs=False, norms=False),
        "obs": Record(dist=False, obs=True, norms=False),
        "norms": Record(dist=False, obs=False, norms=True),
        "all": Record(dist=True, obs=True, norms=True),
    }
    return {
        f"draw_{name}": seconds(lambda r=record: run(r), dev) / DRAW_STEPS
        for name, record in records.items()
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--size", type=float, default=1e8)
    ap.add_argument("--batch", type=int, default=2048)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--tf32", action="store_true")
    ap.add_argument("--profile", action="store_true", help="torch.profiler table of one product")
    ap.add_argument("--json", default="benchmarks/out/bench_hvp.json")
    args = ap.parse_args()
    dev, c, b = args.device, args.chains, args.batch
    if args.tf32:
        torch.set_float32_matmul_precision("high")
    t0 = time.perf_counter()
    h, n, loss_fn, ws, data = _dln_problem(int(args.size), dev)
    w0, spec = flatten_params(ws, dtype=None, device=dev)
    model = DataModel(loss_fn, spec, data, n, b)
    gen = torch.Generator(device=dev).manual_seed(0)
    w = w0.expand(c, -1) + 1e-3 * torch.randn(c, w0.numel(), device=dev, generator=gen)
    v = torch.randn(c, w0.numel(), device=dev, generator=gen)
    rows = torch.cat([w, w0.expand(c, -1)])
    batch2 = take(model.data, model.indices(2 * c, gen, w.device))
    batch = take(model.data, model.indices(c, torch.Generator(device=dev).manual_seed(5), w.device))
    setup_s = time.perf_counter() - t0
    out: dict[str, float] = {}
    out["grad_vmap"] = seconds(lambda: model._grad(rows, batch2), dev)

    def grad_loop() -> None:
        for i in range(2 * c):
            p = {k: t.detach().requires_grad_(True) for k, t in spec.unflatten(rows[i]).items()}
            xb = tuple(t[i] for t in batch2)
            torch.autograd.grad(loss_fn(p, xb), list(p.values()))

    out["grad_loop"] = seconds(grad_loop, dev)
    out["hvp_setup"] = seconds(
        lambda: model.hvp_at(w, torch.Generator(device=dev).manual_seed(5)), dev
    )
    hv = model.hvp_at(w, torch.Generator(device=dev).manual_seed(5))  # on ``batch``
    out["hvp_double"] = seconds(lambda: hv(v), dev)

    def forward_over_reverse(x: torch.Tensor, t: torch.Tensor, bb: object) -> torch.Tensor:
        return jvp(lambda y: grad(model.f)(y, bb), (x,), (t,))[1]

    fwd = vmap(forward_over_reverse)
    out["hvp_forward"] = seconds(lambda: fwd(w, v, batch), dev)
    ref, alt = hv(v), fwd(w, v, batch)
    out["hvp_forward_rel_diff"] = float((ref - alt).norm() / ref.norm())
    del ref, alt

    def hvp_loop() -> None:
        for i in range(c):
            x = w[i].detach().requires_grad_(True)
            (g,) = torch.autograd.grad(model.f(x, tuple(t[i] for t in batch)), x, create_graph=True)
            torch.autograd.grad(g, x, grad_outputs=v[i])

    out["hvp_loop"] = seconds(hvp_loop, dev)
    out["quadrature_identity"] = seconds(
        lambda: gauss_quadrature(lambda x: 2.0 * x, v, 10, lambda t: t / (t + 1)), dev, reps=1
    )
    # products with few outputs and D terms each, the quadrature's slow pattern, elsewhere: the
    # draws' projection of the drift on the slow directions (every step), Lanczos's
    # reorthogonalisation (the plan's spectrum); each against one reduction per output
    probe = torch.randn(w0.numel(), 3, device=dev, generator=gen)
    out["probe_matmul"] = seconds(lambda: v @ probe, dev)
    out["probe_vecdot"] = seconds(
        lambda: torch.stack([torch.linalg.vecdot(v, p) for p in probe.T], -1), dev
    )
    basis, r = v[:1].repeat(20, 1), v[-1]
    out["lanczos_matvec"] = seconds(lambda: basis @ r, dev)
    out["lanczos_vecdot"] = seconds(
        lambda: torch.stack([torch.linalg.vecdot(b, r) for b in basis]), dev
    )
    out.update(time_draws(model, w0, c, dev))
    tri = torch.randn(c, 10, 10, dtype=torch.float64, device=dev)
    tri = tri + tri.transpose(1, 2)
    out["eigh_device"] = seconds(lambda: torch.linalg.eigh(tri), dev)
    out["eigh_cpu"] = seconds(lambda: torch.linalg.eigh(tri.cpu()), dev)
    flops_grad = 18 * b * h * h
    out["grad_vmap_tflops"] = 2 * c * flops_grad / out["grad_vmap"] / 1e12
    out["hvp_double_tflops"] = c * 28 * b * h * h / out["hvp_double"] / 1e12
    info = dict(
        params=3 * h * h,
        batch=b,
        chains=c,
        device=torch.cuda.get_device_name() if dev.startswith("cuda") else "cpu",
        torch=torch.__version__,
        float32_matmul_precision=torch.get_float32_matmul_precision(),
        setup_s=setup_s,
        peak_gib=torch.cuda.max_memory_allocated() / 2**30 if dev.startswith("cuda") else None,
    )
    print(json.dumps(dict(info, **out), indent=1), flush=True)
    if args.profile:
        from torch.profiler import ProfilerActivity, profile

        acts = [ProfilerActivity.CPU]
        if dev.startswith("cuda"):
            acts.append(ProfilerActivity.CUDA)
        key = "cuda_time_total" if dev.startswith("cuda") else "cpu_time_total"
        run = kernel_draws(model, w0, c, dev)
        everything = Record(dist=True, obs=True, norms=True)
        for label, fn in (("one HVP", lambda: hv(v)), ("4 draws", lambda: run(everything))):
            with profile(activities=acts) as prof:
                fn()
                _sync(dev)
            print(label)
            print(prof.key_averages().table(sort_by=key, row_limit=16, max_name_column_width=48))
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as fh:
        json.dump(dict(info, **out), fh, indent=1)


if __name__ == "__main__":
    main()
