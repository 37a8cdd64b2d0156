"""More input forms: numpy arrays, torch data sets and loaders
(``numeric.inputs.data_forms.as_data``), numpy integer seeds, potentials not differentiable at w*,
and ``temperature_sweep``'s call checked."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from torch.utils.data import (
    DataLoader,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    WeightedRandomSampler,
    random_split,
)

import numeric
import numeric.backend.memory
from numeric import InvalidInputError, estimate_llc, estimate_llc_potential, hmc_llc_potential
from numeric.inputs.data import data_len
from numeric.inputs.data_forms import as_data
from numeric.options import LLCOptions, PotentialOptions
from numeric.potential.estimate_llc_potential import require_finite_gradient
from numeric.series.sweep import temperature_sweep

G = torch.Generator().manual_seed(0)
X = torch.randn(200, 2, generator=G)
Y = X @ torch.ones(2) + 0.1 * torch.randn(200, generator=G)
MODEL = numeric.GaussianLinear(X, Y)
LOSS, W = MODEL.loss_fn, {"w": MODEL.minimiser()}
FAST = {"num_chains": 2, "num_draws": 20, "num_burnin": 10, "step_size": 1e-4, "step_check": False}
IDX = [3, 1, 4, 15, 9, 26, 5, 35]


def _same(a: object, b: object) -> bool:
    """Equal tensors (values, dtype and shape), tuples or dicts of them."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(map(_same, a, b))
    return a.dtype == b.dtype and a.shape == b.shape and bool(torch.equal(a, b))


class PerItem(Dataset):
    """A map-style data set indexed by an int only, its items numpy rows and Python floats."""

    def __len__(self) -> int:
        return len(X)

    def __getitem__(self, i: int) -> tuple[np.ndarray, float]:
        i = int(i)
        return X[i].numpy(), float(Y[i])


class DictItems(Dataset):
    def __len__(self) -> int:
        return len(X)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        return {"x": X[int(i)], "y": Y[int(i)]}


class ByTensor(Dataset):
    """Indexed by a tensor of indices as well as by an int: used as it is."""

    def __len__(self) -> int:
        return len(X)

    def __getitem__(self, i: object) -> tuple[torch.Tensor, torch.Tensor]:
        return X[i], Y[i]


class Stream(IterableDataset):
    def __iter__(self):
        return iter(zip(X, Y, strict=True))


# --- numpy arrays and lists of numbers ---------------------------------------------------------


def test_numpy_arrays_become_the_same_tensors() -> None:
    x64 = X.numpy().astype(np.float64)
    out = as_data((x64, Y.numpy()))
    assert _same(out, (torch.from_numpy(x64), Y))
    assert out[0].dtype == torch.float64  # cast to w*'s dtype later, as for tensors
    assert _same(as_data({"x": X.numpy(), "y": Y.numpy()}), {"x": X, "y": Y})
    assert _same(as_data(X.numpy()), X)
    assert _same(as_data([X.numpy(), Y]), (X, Y))


def test_awkward_numpy_layouts_are_converted_exactly() -> None:
    flipped = X.numpy()[::-1]  # negative strides
    assert _same(as_data((flipped, Y)), (X.flip(0), Y))
    swapped = X.numpy().astype(">f4")  # non-native byte order
    assert _same(as_data((swapped, Y)), (X, Y))
    frozen = X.numpy().copy()
    frozen.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch's "not writable" warning is not raised
        assert _same(as_data((frozen, Y)), (X, Y))


@pytest.mark.parametrize(
    ("part", "match"),
    [
        (np.array([object()] * 200), r"data\[0\] is a numpy array of dtype object"),
        (np.array(["a"] * 200), r"data\[0\] is a numpy array of dtype <U1"),
        (np.ma.masked_array(X.numpy(), mask=X.numpy() > 1), r"data\[0\] is a masked array"),
        (list(X), r"data\[0\] is a list of tensors: stack them"),
        ([[1.0], [2.0, 3.0]] * 100, r"data\[0\] is a list that is not an array"),
        (["a"] * 200, r"data\[0\] is a list of <U1 values"),
    ],
)
def test_parts_that_are_not_numbers_are_refused(part: object, match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        as_data((part, Y))


def test_a_list_of_numbers_becomes_a_float64_tensor() -> None:
    out = as_data((X, Y.tolist()))
    assert out[1].dtype == torch.float64
    assert torch.equal(out[1], torch.tensor(Y.tolist(), dtype=torch.float64))
    assert torch.equal(out[1].float(), Y)


def test_data_that_needs_nothing_is_returned_as_it_is() -> None:
    for data in [(X, Y), [X, Y], {"x": X, "y": Y}, X, ByTensor()]:
        assert as_data(data) is data


def test_a_tensor_dataset_becomes_its_tensors_which_are_then_cast_like_a_tuple() -> None:
    """Its items are rows of its tensors; as the tuple of them the run's dtype and device apply
    (a float64 TensorDataset used to reach a float32 model unchanged and fail in the loss)."""
    out = as_data(TensorDataset(X.double(), Y))
    assert isinstance(out, tuple) and out[0] is not None and _same(out, (X.double(), Y))
    model = torch.nn.Linear(X.shape[1], 1)
    lf, w = numeric.from_module(model, torch.nn.MSELoss())
    est = numeric.estimate_llc(
        lf, w, DataLoader(TensorDataset(X.double(), Y.double()[:, None]), batch_size=8),
        num_chains=2, num_burnin=20, num_draws=40, step_size=1e-4, progress=False,
    )  # fmt: skip
    assert math.isfinite(est.mean) and est.config.dtype == "float32"


# --- map-style data sets and lists of samples --------------------------------------------------


def test_a_subset_is_stacked_into_its_rows() -> None:
    sub = Subset(TensorDataset(X, Y), IDX)
    assert _same(as_data(sub), (X[IDX], Y[IDX]))
    part, _ = random_split(
        TensorDataset(X, Y), [150, 50], generator=torch.Generator().manual_seed(0)
    )
    rows = torch.tensor(part.indices)
    out = as_data(part)
    assert data_len(out) == 150
    assert _same(out, (X[rows], Y[rows]))


def test_items_of_arrays_numbers_and_dicts_are_collated() -> None:
    x, y = as_data(PerItem())
    assert torch.equal(x, X) and y.dtype == torch.float64
    assert torch.equal(y, Y.double())
    assert _same(as_data(DictItems()), {"x": X, "y": Y})
    pairs = list(zip(X, Y, strict=True))  # a list of samples is a data set to a DataLoader
    assert _same(as_data(DataLoader(pairs)), (X, Y))


def test_a_list_of_samples_or_batches_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="list of 200 tuples, which may be samples or"):
        as_data(list(zip(X, Y, strict=True)))
    with pytest.raises(InvalidInputError, match="list of 2 dicts"):
        as_data([{"x": X[:100], "y": Y[:100]}, {"x": X[100:], "y": Y[100:]}])


class _Items(Dataset):
    def __init__(self, item) -> None:
        self.item = item

    def __len__(self) -> int:
        return 5

    def __getitem__(self, i: int) -> object:
        return self.item(int(i))


def _fails(i: int) -> object:
    raise KeyError(i)


@pytest.mark.parametrize(
    ("item", "match"),
    [
        (lambda i: (torch.ones(i + 1), 1.0), "could not be stacked into tensors"),
        (lambda i: (torch.ones(2), "label"), r"item\[1\] is a tuple of str"),
        (lambda i: (torch.ones(2), (torch.ones(1), 1.0)), r"item\[1\] is a list of Tensor"),
        (_fails, "reading item 0 of the _Items failed: KeyError"),
    ],
)
def test_items_that_do_not_stack_are_refused(item, match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        as_data(_Items(item))


def test_an_empty_data_set_is_refused() -> None:
    with pytest.raises(InvalidInputError, match=r"empty \(n = 0\)"):
        as_data(Subset(TensorDataset(X, Y), []))


def test_stacking_is_refused_beyond_the_memory_the_host_has(monkeypatch) -> None:
    monkeypatch.setattr(numeric.backend.memory, "available_memory", lambda device: 1000)
    with pytest.raises(InvalidInputError, match=r"the 8 items of the Subset.*pass the data as"):
        as_data(Subset(TensorDataset(X, Y), IDX))


def test_the_memory_message_keeps_its_advice_for_the_chains(monkeypatch) -> None:
    monkeypatch.setattr(numeric.backend.memory, "available_memory", lambda device: 1000)
    with pytest.raises(InvalidInputError, match="use fewer chains or draws, or a smaller batch"):
        numeric.backend.memory.require_memory({"a": 2000}, torch.device("cpu"), "these")


# --- DataLoaders -------------------------------------------------------------------------------


def test_a_loader_stands_for_its_data_set() -> None:
    tds = TensorDataset(X, Y)
    assert _same(as_data(DataLoader(tds, batch_size=32)), (X, Y))
    assert _same(as_data(DataLoader(tds, batch_size=None, shuffle=True)), (X, Y))
    assert as_data(DataLoader(ByTensor(), batch_size=32)).__class__ is ByTensor
    loader = DataLoader(Subset(tds, IDX), batch_size=4, shuffle=True, drop_last=True)
    assert _same(as_data(loader), (X[IDX], Y[IDX]))  # every sample, not len(loader) = 2 batches


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (DataLoader(TensorDataset(X, Y), collate_fn=lambda b: b), r"own collate_fn \(<lambda>\)"),
        (
            DataLoader(TensorDataset(X, Y), sampler=WeightedRandomSampler([1.0] * 200, 200)),
            "WeightedRandomSampler, which may select or weight samples",
        ),
        (DataLoader(Stream(), batch_size=4), r"DataLoader over an IterableDataset \(Stream\)"),
        (Stream(), r"data is an IterableDataset \(Stream\), which has no length"),
    ],
)
def test_loaders_that_would_change_the_data_are_refused(data: object, match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        as_data(data)


def test_data_len_does_not_count_a_loaders_batches() -> None:
    with pytest.raises(InvalidInputError, match="DataLoader: pass it through"):
        data_len(DataLoader(TensorDataset(X, Y), batch_size=32))


def _llc(data: object, **kw: object) -> numeric.LLCEstimate:
    return estimate_llc(LOSS, W, data, **{**FAST, "seed": 1, **kw})


def test_the_estimate_on_converted_data_is_the_estimate_on_the_tensors() -> None:
    ref = _llc((X[IDX * 5], Y[IDX * 5]))
    sub = Subset(TensorDataset(X, Y), IDX * 5)
    for data in (
        sub,
        DataLoader(sub, batch_size=8, shuffle=True),
        (X[IDX * 5].numpy(), Y[IDX * 5]),
    ):
        est = _llc(as_data(data))
        assert est.mean == ref.mean
        assert np.array_equal(est.loss_trace, ref.loss_trace)


def test_estimate_llc_takes_a_subset_a_loader_and_numpy_arrays() -> None:
    ref = _llc((X[IDX * 5], Y[IDX * 5]))
    sub = Subset(TensorDataset(X, Y), IDX * 5)
    for data in (sub, DataLoader(sub, batch_size=8), (X[IDX * 5].numpy(), Y[IDX * 5].numpy())):
        assert np.array_equal(_llc(data).loss_trace, ref.loss_trace)


# --- numpy integer seeds -----------------------------------------------------------------------


@pytest.mark.parametrize("seed", [np.int64(3), np.int32(3), np.uint8(3)])
def test_numpy_integer_seeds_are_ints(seed: object) -> None:
    for opts in (LLCOptions(seed=seed), PotentialOptions(seed=seed)):
        assert type(opts.seed) is int and opts.seed == 3


@pytest.mark.parametrize("seed", [np.int64(-1), np.float64(3.0), np.bool_(True)])
def test_bad_numpy_seeds_are_still_refused(seed: object) -> None:
    with pytest.raises(InvalidInputError, match="seed must be an int"):
        LLCOptions(seed=seed)


def test_numpy_seeds_give_the_int_seeds_estimate() -> None:
    ref = _llc((X, Y), seed=3)
    for seed in (np.int64(3), np.int32(3)):
        est = _llc((X, Y), seed=seed)
        assert np.array_equal(est.loss_trace, ref.loss_trace)
        assert type(est.config.seed) is int and est.config.seed == 3


def test_numpy_seeds_in_the_potential_estimators() -> None:
    def K(w: torch.Tensor) -> torch.Tensor:
        return w.square().sum(-1)

    kw = {"num_chains": 2, "num_draws": 20, "num_burnin": 10, "progress": False}
    a = estimate_llc_potential(K, [0.0, 0.0], 100, seed=5, **kw)
    b = estimate_llc_potential(K, [0.0, 0.0], 100, seed=np.int64(5), **kw)
    assert np.array_equal(a.loss_trace, b.loss_trace)
    h = hmc_llc_potential(K, [0.0, 0.0], 100, num_draws=8, num_burnin=2, seed=5)
    hn = hmc_llc_potential(K, [0.0, 0.0], 100, num_draws=8, num_burnin=2, seed=np.int32(5))
    assert np.array_equal(h.trace, hn.trace)
    with pytest.raises(InvalidInputError, match="seed"):
        hmc_llc_potential(K, [0.0, 0.0], 100, seed=-1)


# --- potentials whose gradient at w* is not finite ---------------------------------------------


def _cone(w: torch.Tensor) -> torch.Tensor:
    return w.square().sum(-1).sqrt()  # autograd's gradient at 0 is NaN


def _half_cone(w: torch.Tensor) -> torch.Tensor:
    return w[..., 0] ** 2 + w[..., 1].abs() ** 0.5  # ∂/∂w1 at 0: NaN


@pytest.mark.parametrize(
    "call",
    [
        lambda K: estimate_llc_potential(K, [0.0, 0.0], 1000, num_chains=2, seed=0),
        lambda K: estimate_llc_potential(K, [0.0, 0.0], 1000, metropolis=False, step_size=1e-3),
        lambda K: hmc_llc_potential(K, [0.0, 0.0], 1000),
    ],
)
def test_a_non_finite_gradient_at_w_star_is_refused(call) -> None:
    with pytest.raises(InvalidInputError, match=r"∇K\(w\*\) is not finite \(first in entry 0 "):
        call(_cone)
    with pytest.raises(InvalidInputError, match=r"first in entry 1 of w_star: nan"):
        call(_half_cone)


def test_with_a_prior_the_chains_start_beside_w_star() -> None:
    est = estimate_llc_potential(
        _cone, [0.0, 0.0], 1000, prior_exponents=[1.0, 1.0], num_chains=2, seed=0,
        num_draws=50, num_burnin=50, progress=False,
    )  # fmt: skip
    assert np.isfinite(est.mean) and est.mean > 0


def test_require_finite_gradient_passes_smooth_flat_and_kinked_potentials() -> None:
    w = torch.zeros(2, dtype=torch.float64)
    assert require_finite_gradient(lambda v: v.square().sum(-1), w) is None
    assert require_finite_gradient(lambda v: 0 * v.sum(-1), w) is None  # flat, through w
    assert require_finite_gradient(lambda v: v.abs().sum(-1), w) is None  # autograd: |w|' = 0 at 0


@pytest.mark.parametrize(
    ("K", "match"),
    [
        (lambda v: torch.zeros(v.shape[:-1], dtype=v.dtype), "does not depend on w"),
        (lambda v: v.detach().square().sum(-1), "does not depend on w"),
        (lambda v: v.square().sum(-1).long(), "floating-point values, got dtype torch.int64"),
    ],
)
def test_a_potential_without_a_gradient_is_named(K, match) -> None:
    """A K that is constant in w or integer-valued: a named error from both estimators (MALA's
    first step raised torch's 'element 0 of tensors does not require grad')."""
    with pytest.raises(InvalidInputError, match=match):
        estimate_llc_potential(K, [0.0, 0.0], 1000, num_chains=2, seed=0, progress=False)
    with pytest.raises(InvalidInputError, match=match):
        hmc_llc_potential(K, [0.0, 0.0], 1000, num_chains=2, seed=0)


# --- temperature_sweep's call ------------------------------------------------------------------


def _recording(calls: list):
    def estimator(a: object, b: object, *, nbeta: float, seed: int, gamma: float = 1.0):
        calls.append(nbeta)
        raise AssertionError("not reached")

    return estimator


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        ((1, 2), {"nbeta": 5.0}, "nbeta is what the sweep varies"),
        ((1, 2), {"gama": 1.0}, "unexpected keyword argument 'gama'"),
        ((1,), {}, "missing a required argument: 'b'"),
        ((1, 2), {"nbetas": 20.0}, "nbetas must be a sequence"),
        ((1, 2), {"nbetas": ["20", "80"]}, r"nbetas\[0\] must be a number"),
    ],
)
def test_a_sweep_call_the_estimator_cannot_take_is_refused(args, kwargs, match) -> None:
    calls: list = []
    kwargs = {"nbetas": [20.0, 80.0], **kwargs}
    with pytest.raises(InvalidInputError, match=match):
        temperature_sweep(_recording(calls), *args, **kwargs)
    assert calls == []  # refused before any estimate


def test_a_sweep_without_the_estimator_says_so() -> None:
    lf, w = numeric.from_module(torch.nn.Linear(2, 1), torch.nn.functional.mse_loss)
    with pytest.raises(InvalidInputError, match=r"\(ModuleLoss\).*The first argument is the"):
        temperature_sweep(lf, w, (X, Y[:, None]), nbetas=[20.0, 80.0])
    with pytest.raises(InvalidInputError, match="estimator must be the estimate function"):
        temperature_sweep(None, lf, w, (X, Y[:, None]), nbetas=[20.0, 80.0])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n": "10"}, "n must be an int ≥ 2"),
        ({"n": 10.5}, "n must be an int ≥ 2"),
        ({"nbeta": -1.0}, "nbeta"),
        ({"dtype": torch.int32}, "dtype must be a floating-point"),
        ({"num_draws": 10**13}, "memory|GiB|TiB"),
    ],
)
def test_hmc_reference_refuses_what_the_estimator_refuses(kwargs, match) -> None:
    """hmc_llc_potential took n = 10.5 and nbeta = −1 (λ = −5.9·10⁶) silently, and raised torch's
    or numpy's own errors for a string n, an integer dtype and 10¹³ draws."""
    args = {"n": 1000, **kwargs}
    with pytest.raises(InvalidInputError, match=match):
        hmc_llc_potential(lambda v: v.square().sum(-1), [0.0], num_chains=2, seed=0, **args)
