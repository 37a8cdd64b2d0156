"""Data in the forms users hold, brought once and exactly into the forms of ``numeric.inputs.data``
before anything else looks at them: numpy arrays, a torch ``DataLoader`` (its data set) and
map-style data sets that can only be indexed one item at a time (``Subset``, ``random_split``'s
parts, a custom ``Dataset``)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch.utils.data import (
    BatchSampler,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    TensorDataset,
    default_collate,
    default_convert,
)

from numeric.backend.memory import require_memory
from numeric.errors import InvalidInputError
from numeric.inputs.data import _parts

ITEM_OVERHEAD = 256  # bytes of Python objects per tensor of an item held while collating


def as_data(data: Any) -> Any:
    """``data`` in a form ``data_len``, ``take`` and ``to_device`` handle, converted exactly.

    * numpy arrays (the data, or parts of a tuple or dict) and lists of numbers that are parts
      of a tuple or dict become tensors of the same dtype and values (``torch.as_tensor``);
    * a ``DataLoader`` stands for its ``dataset`` (the estimators draw their own minibatches, so
      its batch size and shuffling are not used); refused where the loader changes the data: an
      ``IterableDataset``, a ``collate_fn`` other than torch's default, a sampler that selects or
      weights samples;
    * a map-style ``Dataset`` (a DataLoader's too, a list of samples included) that cannot be
      indexed by a tensor of indices is read once, item by item, and stacked by
      ``default_collate``: items (x, y) give a tuple of tensors, dict items a dict of tensors.
      An item drawn at random (augmentation) is drawn once.
    * a ``TensorDataset`` (a DataLoader's too) becomes the tuple of its tensors, which are then
      cast to the run's dtype and moved to its device as any tuple is;
    * a list or tuple of tuples or dicts is refused: samples and minibatches look alike there.

    Anything else is returned as it is: tensors, tuples and dicts of tensors and data sets that
    take a tensor of indices reach the estimators unchanged (not cast: their batches are theirs).
    """
    if isinstance(data, DataLoader):
        return _from_dataset(_loader_dataset(data), "the DataLoader's dataset")
    if isinstance(data, IterableDataset):
        raise InvalidInputError(_ITERABLE.format(what=f"data is {_iterable_name(data)}"))
    if isinstance(data, np.ndarray):
        return _array_tensor("data", data)
    if isinstance(data, Dataset):
        return _from_dataset(data, f"the {type(data).__name__}")
    if _is_record_list(data):
        kind = type(data[0]).__name__
        raise InvalidInputError(
            f"data is a {type(data).__name__} of {len(data)} {kind}s, which may be samples or "
            "minibatches: stack samples (x_i, y_i) with torch.utils.data.default_collate(data), "
            "or concatenate minibatches with torch.cat, into tensors with samples on the first "
            "axis (the estimators draw their own minibatches)"
        )
    return _converted_parts(data)


_ITERABLE = (
    "{what}, which has no length or random access: the estimators draw their own minibatches "
    "from a fixed data set of n samples. Pass the samples as tensors (samples on the first axis)"
)


def _iterable_name(ds: IterableDataset) -> str:
    """'an IterableDataset (its class)', for the messages."""
    return f"an IterableDataset ({type(ds).__name__})"


def _loader_dataset(loader: DataLoader) -> Any:
    """The data set a ``DataLoader`` reads, or a clear error where the loader's batches would
    hold other samples than the data set's items (the estimator would silently see other data)."""
    ds = loader.dataset
    if isinstance(ds, IterableDataset):
        raise InvalidInputError(
            _ITERABLE.format(what=f"data is a DataLoader over {_iterable_name(ds)}")
        )
    if loader.collate_fn not in (default_collate, default_convert):
        name = getattr(loader.collate_fn, "__name__", type(loader.collate_fn).__name__)
        raise InvalidInputError(
            f"data is a DataLoader with its own collate_fn ({name}), which may change the samples "
            "(padding, tokenising, augmenting): the estimators draw their own minibatches from "
            "loader.dataset and cannot apply it. Pass the tensors it would give for the whole "
            "data set instead (samples on the first axis)"
        )
    batches = loader.batch_sampler
    if type(loader.sampler) not in (SequentialSampler, RandomSampler) or (
        batches is not None and type(batches) is not BatchSampler
    ):
        used = loader.sampler if batches is None or type(batches) is BatchSampler else batches
        raise InvalidInputError(
            f"data is a DataLoader with a {type(used).__name__}, which may select or weight "
            "samples: the estimators draw minibatches uniformly from all of loader.dataset. Pass "
            "the samples it should use (e.g. a torch.utils.data.Subset, or tensors)"
        )
    return ds


def _from_dataset(ds: Any, what: str) -> Any:
    """A map-style data set as it is when it takes a tensor of indices, else its items stacked."""
    if isinstance(ds, IterableDataset):
        raise InvalidInputError(_ITERABLE.format(what=f"data is {_iterable_name(ds)}"))
    if type(ds) is TensorDataset:  # its items are rows of its tensors: the tensors themselves,
        _dataset_len(ds, what)  # which are then cast and moved as any tuple is
        return _converted_parts(tuple(ds.tensors))
    n = _dataset_len(ds, what)
    if _takes_index_tensors(ds, n):
        return ds
    return _collated(ds, what)


def _dataset_len(ds: Any, what: str) -> int:
    """``len(ds)``, or a clear error when it has none or is empty."""
    try:
        n = len(ds)
    except TypeError:
        raise InvalidInputError(
            f"{what} has no length (no __len__): pass a map-style data set or tensors"
        ) from None
    if n < 1:
        raise InvalidInputError(f"{what} is empty (n = 0)")
    return n


def _takes_index_tensors(ds: Any, n: int) -> bool:
    """Whether ``ds[idx]`` for a [1, 2] tensor of indices gives tensors of shape [1, 2, ...]
    (a tensor, or a tuple or dict of them), as ``take`` needs."""
    idx = torch.tensor([[0, n - 1]])
    try:
        out = ds[idx]
    except Exception:  # any failure of the user's __getitem__ means: read it item by item
        return False
    parts = _parts(out) or [("data", out)]
    return bool(parts) and all(
        isinstance(x, Tensor) and tuple(x.shape[:2]) == (1, 2) for _, x in parts
    )


def _is_record_list(data: Any) -> bool:
    """A list or tuple whose elements are all tuples or dicts (samples (x_i, y_i) or
    minibatches), not parts (a tensor or array per variable)."""
    return (
        isinstance(data, (list, tuple))
        and len(data) > 0
        and all(isinstance(s, (tuple, Mapping)) for s in data)
    )


def _collated(ds: Any, what: str) -> Any:
    """The items ``ds[0] … ds[n−1]`` stacked by ``default_collate`` (once, within the memory
    the host has): a tensor, a tuple of tensors or a dict of tensors."""
    n = _dataset_len(ds, what)
    first = _item(ds, 0, what)
    _require_collate_memory(first, n, what)
    items = [first, *(_item(ds, i, what) for i in range(1, n))]
    try:
        out = default_collate(items)
    except (TypeError, RuntimeError, ValueError, IndexError) as exc:
        raise InvalidInputError(
            f"the items of {what} could not be stacked into tensors ({exc}): each item must be "
            "a tensor, array or number, or a tuple or dict of them, with the same shapes in "
            "every item. Pass the data as tensors (samples on the first axis)"
        ) from None
    return _stacked(out, what)


def _item(ds: Any, i: int, what: str) -> Any:
    """``ds[i]``, a failure of the user's ``__getitem__`` named."""
    try:
        return ds[i]
    except Exception as exc:  # the user's code: any error is reported with where it came from
        raise InvalidInputError(
            f"reading item {i} of {what} failed: {type(exc).__name__}: {exc}"
        ) from exc


def _require_collate_memory(first: Any, n: int, what: str) -> None:
    """Refuse to stack n items like ``first`` when the items and the stacked tensors would not
    fit in the memory of the device the items are on."""
    size, leaves, device = _item_bytes(first)
    require_memory(
        {"the items": n * (size + ITEM_OVERHEAD * leaves), "the stacked tensors": n * size},
        device,
        f"the {n} items of {what}, read and stacked into tensors,",
        advice="pass the data as tensors (samples on the first axis), or fewer samples",
    )


def _item_bytes(item: Any) -> tuple[int, int, torch.device]:
    """Bytes of the numbers in one item, its number of tensors (arrays, numbers) and the device
    of its first tensor (the CPU when it has none)."""
    if isinstance(item, Tensor):
        return item.numel() * item.element_size(), 1, item.device
    if isinstance(item, np.ndarray):
        return int(item.nbytes), 1, torch.device("cpu")
    if isinstance(item, (tuple, list, Mapping)):
        size, leaves, device = 0, 0, None
        for x in item.values() if isinstance(item, Mapping) else item:
            b, k, dev = _item_bytes(x)
            size, leaves = size + b, leaves + k
            device = dev if device is None and k else device
        return size, leaves, device or torch.device("cpu")
    return 8, 1, torch.device("cpu")


def _stacked(out: Any, what: str) -> Any:
    """``default_collate``'s result as data: a tensor, a tuple of tensors or a dict of them."""
    if isinstance(out, list):  # default_collate gives a list for tuple items
        out = tuple(out)
    parts = _parts(out) or [("data", out)]
    for name, x in parts:
        if not isinstance(x, Tensor):
            shown = name.replace("data", "item", 1)
            kind = type(x).__name__
            if isinstance(x, (tuple, list)) and x:
                kind += f" of {type(x[0]).__name__}"
            raise InvalidInputError(
                f"the items of {what} do not stack into tensors: {shown} is a {kind} (items must "
                "be tensors, arrays or numbers, or a tuple or dict of them, not nested). Pass the "
                "data as tensors (samples on the first axis)"
            )
    return out


def _converted_parts(data: Any) -> Any:
    """A tuple or dict with its numpy arrays and lists of numbers as tensors (the same object
    when it holds none); other data as they are."""
    parts = _parts(data)
    if not parts or not any(isinstance(x, (np.ndarray, list)) for _, x in parts):
        return data
    return _each_named(data, _part_tensor)


def _each_named(data: Any, fn: Callable[[str, Any], Any]) -> Any:
    """``fn(name, part)`` for each part of a dict or tuple (a dict or tuple again)."""
    if isinstance(data, Mapping):
        return {k: fn(f"data[{k!r}]", x) for k, x in data.items()}
    return tuple(fn(f"data[{i}]", x) for i, x in enumerate(data))


def _part_tensor(name: str, x: Any) -> Any:
    """A numpy array or a list of numbers as a tensor; any other part as it is."""
    if isinstance(x, np.ndarray):
        return _array_tensor(name, x)
    if not isinstance(x, list):
        return x
    if x and isinstance(x[0], Tensor):
        raise InvalidInputError(
            f"{name} is a list of tensors: stack them into one tensor (torch.stack) with "
            "samples on the first axis"
        )
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError) as exc:
        raise InvalidInputError(
            f"{name} is a list that is not an array of numbers ({exc}): pass a tensor with "
            "samples on the first axis"
        ) from None
    if arr.dtype.kind not in "biufc":
        raise InvalidInputError(
            f"{name} is a list of {arr.dtype} values, not numbers: pass a tensor with samples "
            "on the first axis"
        )
    return torch.as_tensor(arr)


def _array_tensor(name: str, a: np.ndarray) -> Tensor:
    """A numpy array as a tensor with the same dtype and values (sharing its memory where torch
    can; a copy for negative strides or a non-native byte order)."""
    if isinstance(a, np.ma.MaskedArray):
        raise InvalidInputError(
            f"{name} is a masked array: its masked entries would be used as they are. Fill them "
            "(a.filled(...)) or drop those samples first"
        )
    if a.dtype.kind not in "biufc":
        raise InvalidInputError(
            f"{name} is a numpy array of dtype {a.dtype}, not numbers: convert it to a numeric "
            "dtype (e.g. a.astype(np.float32)) or pass a tensor"
        )
    if not a.dtype.isnative or any(s < 0 for s in a.strides):
        a = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("="))
    with warnings.catch_warnings():  # read-only arrays: the estimators never write to the data
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        try:
            return torch.as_tensor(a)
        except TypeError as exc:  # a numeric dtype torch has no tensors of
            raise InvalidInputError(
                f"{name} is a numpy array of dtype {a.dtype}, which torch cannot hold ({exc}): "
                "convert it (e.g. a.astype(np.float32))"
            ) from None
