"""The block kernel: pre-drawn randomness, masked padding, compiled-kernel cache, compile = eager."""

from __future__ import annotations

import math
import pickle

import pytest
import torch
from torch import nn

import numeric
from numeric.backend.inductor import _Decompositions, small_matmul_backend
from numeric.inputs.data import Gatherer, take, take_tiled
from numeric.sampler import gradients, kernel, sgld
from numeric.types import Constants, KernelSpec


def _setup(c: int = 3, cv: bool = True, integrator: sgld.Integrator = "lm"):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(200, 3, generator=g, dtype=torch.float64)
    y = torch.sin(x @ torch.tensor([1.0, -0.5, 0.25], dtype=torch.float64))
    w_star = torch.tensor([0.9, -0.4, 0.3], dtype=torch.float64)

    def f(w: torch.Tensor, batch) -> torch.Tensor:
        xb, yb = batch
        return 0.5 * (torch.sin(xb @ w) - yb).square().mean()

    spec = KernelSpec(control_variate=cv, integrator=integrator, stacked=True)
    consts = Constants(
        w_star,
        torch.full((3,), 0.01, dtype=torch.float64),
        None,
        torch.eye(3, dtype=torch.float64)[:, :2],
        200.0,
        1.0,
        0.1,
    )
    state = sgld.init(w_star.expand(c, 3), g)
    return f, spec, consts, (x, y), state, g


@pytest.mark.parametrize(("cv", "integrator"), [(True, "lm"), (False, "euler")])
def test_block_equals_repeated_sgld_steps(cv: bool, integrator: sgld.Integrator) -> None:
    """A block of m steps on pre-drawn (I_t, ξ_t) is m applications of sgld.update."""
    f, spec, k, data, state, g = _setup(cv=cv, integrator=integrator)
    noise = kernel.draw_block(g, 5, 3, 200, 7, k.w_star)
    block = kernel.make_block(f, spec, functional=False)
    got, trace = block(state, noise, None, 1e-3, k, data)

    gradient = gradients.make_gradient(f, spec)
    ref = state
    for t in range(5):
        ev = gradient(ref.position, noise.idx[t], k, data)
        # the estimate itself, by hand: ĝ, then the update
        xb, yb = data[0][noise.idx[t]], data[1][noise.idx[t]]
        w = ref.position.detach().requires_grad_(True)
        loss = 0.5 * (torch.sin((xb * w[:, None, :]).sum(-1)) - yb).square().mean(-1)
        (gw,) = torch.autograd.grad(loss.sum(), w)
        torch.testing.assert_close(ev.loss, loss.detach())
        if cv:
            w0 = k.w_star.expand(3, 3).detach().requires_grad_(True)
            l0 = 0.5 * (torch.sin((xb * w0[:, None, :]).sum(-1)) - yb).square().mean(-1)
            (g0,) = torch.autograd.grad(l0.sum(), w0)
            torch.testing.assert_close(ev.grad, gw - g0 + k.g_star)
            # the batch's linear term about w* (numeric.stats.observable)
            lin = ((g0 - k.g_star) * (ref.position - k.w_star)).sum(-1)
            torch.testing.assert_close(ev.linear, lin)
        else:
            torch.testing.assert_close(ev.grad, gw)
            assert ev.linear is None
        assert torch.equal(trace.loss[:, t], ev.loss)
        ref, info = sgld.update(
            ref,
            ev,
            noise.xi[t],
            step_size=1e-3,
            nbeta=k.nbeta,
            gamma=k.gamma,
            center=k.w_star,
            prior_precision=k.alpha,
            integrator=integrator,
        )
        torch.testing.assert_close(trace.obs[:, t], info.drift @ k.probe)
    torch.testing.assert_close(got.position, ref.position)
    assert trace.loss.shape == trace.ref.shape == trace.dist.shape == (3, 5)
    assert trace.obs.shape == (3, 5, 2)


def test_masked_padding_changes_nothing() -> None:
    """The compiled path pads a short block to UNROLL steps with zeros and masks them out: the
    state, traces and norms must equal those of the unpadded block (checked eagerly here)."""
    f, spec, k, data, state, g = _setup()
    m = kernel.UNROLL - 3
    noise = kernel.draw_block(g, m, 3, 200, 7, k.w_star)
    plain = kernel.make_block(f, spec, functional=False)
    functional = kernel.make_block(f, spec, functional=True)
    s1, t1 = plain(state, noise, None, 1e-3, k, data)
    padded, mask = kernel._pad(noise, m)
    assert padded.idx.shape[0] == kernel.UNROLL and int(mask.sum()) == m
    batches = take(data, padded.idx)  # gathered up front, as Kernel.run does for compiled blocks
    s2, t2 = functional(state, padded, mask, torch.tensor(1e-3, dtype=torch.float64), k, batches)
    torch.testing.assert_close(s2.position, s1.position)
    torch.testing.assert_close(s2.noise, s1.noise)
    torch.testing.assert_close(t2.loss[:, :m], t1.loss)
    torch.testing.assert_close(t2.obs[:, :m], t1.obs)
    torch.testing.assert_close(t2.drift_sq, t1.drift_sq)
    torch.testing.assert_close(t2.noise_sq, t1.noise_sq)


def test_from_module_losses_are_equal_for_the_same_module() -> None:
    """Equal (and equally hashed) loss functions are what lets a compiled kernel be reused."""
    model = nn.Linear(3, 1)
    a, _ = numeric.from_module(model, nn.functional.mse_loss)
    b, _ = numeric.from_module(model, nn.functional.mse_loss)
    c, _ = numeric.from_module(nn.Linear(3, 1), nn.functional.mse_loss)
    assert a == b and hash(a) == hash(b)
    assert a != c


def test_compiled_kernels_are_cached_per_key() -> None:
    f, spec, *_ = _setup()
    key = ("test-key", spec)
    first = kernel._compiled_block(f, spec, key, batch_inner=True)
    assert kernel._compiled_block(f, spec, key, batch_inner=True) is first
    assert kernel._compiled_block(f, spec, ("other", spec), batch_inner=True) is not first
    assert kernel._compiled_block(f, spec, key, batch_inner=False) is not first  # other layout
    assert kernel._compiled_block(f, spec, None, batch_inner=True) is not first  # never cached


def test_compile_needs_tensor_data() -> None:
    with pytest.raises(numeric.InvalidInputError, match="compile=True needs data"):
        numeric.estimate_llc(
            lambda p, b: (p["w"] ** 2).sum() * 0 + b[0].mean(),
            {"w": torch.zeros(2)},
            _Indexable(torch.zeros(10, 1)),  # indexable by a tensor of indices, not tensors
            compile=True,
        )


@pytest.mark.parametrize(
    ("anchor_every", "integrator", "device"),
    [
        (0, "lm", "cpu"),  # 18 s, in the default suite: its failure once went unseen as slow
        pytest.param(8, "lm", "cpu", marks=pytest.mark.slow),
        pytest.param(8, "baoab", "cpu", marks=pytest.mark.slow),
        pytest.param(8, "lm", "cuda", marks=pytest.mark.gpu),
        pytest.param(8, "baoab", "cuda", marks=pytest.mark.gpu),
    ],
)
def test_compiled_estimate_equals_eager(anchor_every: int, integrator: str, device: str) -> None:
    """compile=True consumes the same random numbers: the same estimate up to rounding, with the
    control variate centred at w* and with anchors refreshed every 8 steps, and with BAOAB; on
    the CPU and on the GPU."""
    torch.manual_seed(0)  # nn.Linear's initialisation only
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)).double()
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2000, 4, generator=g, dtype=torch.float64)
    with torch.no_grad():
        y = model(x)
    loss_fn, w = numeric.from_module(model, nn.functional.mse_loss)
    kw = dict(
        num_chains=4,
        num_burnin=30,
        num_draws=70,
        step_size=1e-4,
        seed=3,
        anchor_every=anchor_every,
        integrator=integrator,
        device=device,
    )
    eager = numeric.estimate_llc(loss_fn, w, (x, y), **kw)
    compiled = numeric.estimate_llc(loss_fn, w, (x, y), compile=True, **kw)
    assert eager.config.device.startswith(device)
    assert math.isclose(compiled.mean, eager.mean, rel_tol=1e-6, abs_tol=1e-9)
    torch.testing.assert_close(
        torch.as_tensor(compiled.loss_trace), torch.as_tensor(eager.loss_trace)
    )
    before = len(kernel._COMPILED)
    again = numeric.estimate_llc(
        *numeric.from_module(model, nn.functional.mse_loss), (x, y), compile=True, **kw
    )
    assert len(kernel._COMPILED) == before  # the same module reuses its compiled kernel
    assert again.mean == compiled.mean


def test_gatherer_matches_take_and_reuses_its_buffers() -> None:
    g = torch.Generator().manual_seed(3)
    # rows of one element ([n, 1], a strided column) are gathered from a flat view
    data = (torch.randn(50, 4, generator=g), torch.randn(50, 1, generator=g))
    column = data[0][:, 2:3]
    idx0 = torch.randint(50, (4, 5), generator=g)
    assert torch.equal(take(column, idx0), column[idx0])
    gather = Gatherer(data)
    idx = torch.randint(50, (2, 3, 7), generator=g)
    first = gather(idx)
    for got, want in zip(first, take(data, idx), strict=True):
        assert torch.equal(got, want)
    ptr = first[0].data_ptr()
    idx2 = torch.randint(50, (2, 3, 7), generator=g)
    second = gather(idx2)
    assert second[0].data_ptr() == ptr  # same buffer, new contents
    assert torch.equal(second[0], data[0][idx2])
    single = Gatherer(data[0])(idx2)
    assert torch.equal(single, data[0][idx2])


class _Indexable:
    """Data that is neither a tensor nor a tuple: indexed by a tensor of indices."""

    def __init__(self, x: torch.Tensor) -> None:
        self.x = x

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, idx: torch.Tensor) -> torch.Tensor:
        return self.x[idx] * 1.0


def _tensors(batch: object) -> list[torch.Tensor]:
    if isinstance(batch, dict):
        return list(batch.values())
    return [batch] if isinstance(batch, torch.Tensor) else list(batch)


@pytest.mark.parametrize("copies", [1, 2, 3])
def test_take_tiled_repeats_each_chains_minibatch(copies: int) -> None:
    g = torch.Generator().manual_seed(8)
    x, y = torch.randn(30, 3, generator=g), torch.randint(5, (30,), generator=g)
    idx = torch.randint(30, (4, 6), generator=g)
    for data in [(x, y), {"x": x, "y": y}, x, _Indexable(x)]:
        got, want = take_tiled(data, idx, copies), take(data, idx.repeat(copies, 1))
        for a, b in zip(_tensors(got), _tensors(want), strict=True):
            assert a.shape == (copies * 4, 6, *b.shape[2:])
            assert torch.equal(a, b)


@pytest.mark.parametrize(
    ("shapes", "dtypes", "packed"),
    [
        ([(40, 4), (40, 1), (40,), (40, 2, 3)], [torch.float32] * 4, True),  # narrow: one matrix
        ([(40, 3), (40,)], [torch.float32, torch.int64], False),  # features and class labels
        ([(40, 60), (40, 5)], [torch.float32] * 2, False),  # 65 > PACK_WIDTH elements a row
    ],
)
@pytest.mark.parametrize("batch_inner", [False, True])
def test_gatherer_packs_narrow_rows_of_one_dtype(shapes, dtypes, packed, batch_inner) -> None:
    g = torch.Generator().manual_seed(4)
    data = tuple(
        torch.randn(s, generator=g).to(dt)
        if dt.is_floating_point
        else torch.randint(9, s, generator=g)
        for s, dt in zip(shapes, dtypes, strict=True)
    )
    gather = Gatherer(data, batch_inner=batch_inner)
    assert gather.batch_inner == (batch_inner and packed)
    idx = torch.randint(40, (3, 8, 5), generator=g)
    for _ in range(2):  # the second call reuses the buffers
        got = gather(idx)
        for x, y in zip(got, data, strict=True):
            assert x.shape == (3, 8, 5, *y.shape[1:]) and x.dtype == y.dtype
            assert torch.equal(x, y[idx])
            if gather.batch_inner:
                assert x.stride(2) == 1  # the batch axis is innermost in memory
        pointers = {x.untyped_storage().data_ptr() for x in got}
        assert len(pointers) == (1 if packed else len(data))
        idx = torch.randint(40, (3, 8, 5), generator=g)


@pytest.mark.slow
@pytest.mark.parametrize("long_axis_inner", [False, True])
def test_small_matmul_backend_matches_eager(long_axis_inner: bool) -> None:
    """Products decomposed (two small dims; unrolled, also as a transpose, or reduced over k)
    and left to BLAS (large dims) give eager's values, through inductor's FX-graph cache (not
    bypassed: the decomposition table is part of its key)."""
    from torch._dynamo.utils import counters

    counters.clear()
    g = torch.Generator().manual_seed(0)

    def f(a, b, p, q):
        return torch.bmm(a, b).square().sum() + (p @ q).sum()

    backend = small_matmul_backend(long_axis_inner=long_axis_inner)
    compiled = torch.compile(f, backend=backend, dynamic=False)
    cases = [
        ((5, 100, 4), (5, 4, 3), (300, 4), (4, 3)),  # unrolled over k
        ((3, 5, 20), (3, 20, 2), (5, 20), (20, 2)),  # reduced over k
        ((2, 40, 64), (2, 64, 48), (64, 40), (40, 48)),  # BLAS
    ]
    for shapes in cases:
        a, b, p, q = (torch.randn(s, generator=g, dtype=torch.float64) for s in shapes)
        torch.testing.assert_close(compiled(a, b, p, q), f(a, b, p, q))
    cache = counters["inductor"]
    assert cache["fxgraph_cache_bypass"] == 0
    assert cache["fxgraph_cache_hit"] + cache["fxgraph_cache_miss"] == len(cases)


def test_decomposition_table_pickles_by_reference() -> None:
    """Inductor pickles the table into its cache key: by reference, with its flag and a hash of
    the rule's source (its operators and closures do not pickle)."""
    for flag in (False, True):
        table = _Decompositions(flag)
        again = pickle.loads(pickle.dumps(table))
        assert isinstance(again, _Decompositions) and again.long_axis_inner is flag
        assert again.keys() == table.keys()
        assert again[torch.ops.aten.bmm.default].__qualname__ == "_small_product.<locals>.product"
    assert pickle.dumps(_Decompositions(False)) != pickle.dumps(_Decompositions(True))


def _anchored(c: int = 4):
    """The ``_setup`` problem with an anchored control variate: chains 0 and 2 start nearer
    their anchor, chains 1 and 3 nearer w*."""
    f, spec, k, data, state, g = _setup(c=c)
    spec = KernelSpec(control_variate=True, integrator="lm", stacked=True, anchored=True)
    x, y = data
    shift = torch.tensor([[0.3, 0.0, 0.0], [2.0, 0.0, 0.0]], dtype=torch.float64).repeat(c // 2, 1)
    anchor = k.w_star + shift
    near = k.w_star + torch.tensor([0.25, 0.0, 0.0], dtype=torch.float64)
    state = state._replace(position=near.expand(c, 3).clone())

    def full_grad(w: torch.Tensor) -> torch.Tensor:
        w = w.detach().requires_grad_(True)
        (gw,) = torch.autograd.grad(f(w, (x, y)), w)
        return gw

    g_anchor = torch.stack([full_grad(a) for a in anchor])
    k = k._replace(g_star=full_grad(k.w_star), anchor=anchor, g_anchor=g_anchor)
    return f, spec, k, data, state, g


def test_anchored_gradient_centres_at_the_nearer_point() -> None:
    """ĝ = ∇L_B(w) − ∇L_B(a) + ∇L_n(a) with a the nearer of the chain's anchor and w*, and
    L_B(w*) still the reference loss."""
    f, spec, k, data, state, g = _anchored()
    idx = torch.randint(200, (4, 7), generator=g)
    ev = gradients.make_gradient(f, spec)(state.position, idx, k, data)
    x, y = data
    for c in range(4):
        batch = (x[idx[c]], y[idx[c]])
        a, g_a = (k.anchor[c], k.g_anchor[c]) if c % 2 == 0 else (k.w_star, k.g_star)

        def grad(w: torch.Tensor, batch=batch) -> torch.Tensor:
            w = w.detach().requires_grad_(True)
            (gw,) = torch.autograd.grad(f(w, batch), w)
            return gw

        torch.testing.assert_close(ev.grad[c], grad(state.position[c]) - grad(a) + g_a)
        torch.testing.assert_close(ev.loss[c], f(state.position[c], batch))
        torch.testing.assert_close(ev.ref_loss[c], f(k.w_star, batch))


def test_anchored_gradient_is_unbiased() -> None:
    """Averaged over minibatches, the anchored ĝ is ∇L_n(w) (to 5 standard errors)."""
    f, spec, k, data, state, g = _anchored()
    reps = 4000
    w = state.position.repeat(reps, 1)
    k_rep = k._replace(anchor=k.anchor.repeat(reps, 1), g_anchor=k.g_anchor.repeat(reps, 1))
    idx = torch.randint(200, (w.shape[0], 7), generator=g)
    ev = gradients.make_gradient(f, spec)(w, idx, k_rep, data)
    grads = ev.grad.reshape(reps, 4, 3)
    wr = state.position[0].detach().requires_grad_(True)
    (exact,) = torch.autograd.grad(f(wr, data), wr)
    mean, se = grads.mean(0), grads.std(0) / math.sqrt(reps)
    assert ((mean - exact).abs() < 5 * se + 1e-12).all()
    assert (se > 0).all()


def test_anchored_functional_block_equals_eager() -> None:
    """The compiled path's functional gradient (triple evaluation under vmap) gives the eager
    block's states and traces when anchored, padding included."""
    f, spec, k, data, state, g = _anchored()
    m = kernel.UNROLL - 3
    noise = kernel.draw_block(g, m, 4, 200, 7, k.w_star)
    s1, t1 = kernel.make_block(f, spec, functional=False)(state, noise, None, 1e-3, k, data)
    padded, mask = kernel._pad(noise, m)
    functional = kernel.make_block(f, spec, functional=True)
    eps = torch.tensor(1e-3, dtype=torch.float64)
    s2, t2 = functional(state, padded, mask, eps, k, take(data, padded.idx))
    torch.testing.assert_close(s2.position, s1.position)
    torch.testing.assert_close(t2.loss[:, :m], t1.loss)
    torch.testing.assert_close(t2.ref[:, :m], t1.ref)
