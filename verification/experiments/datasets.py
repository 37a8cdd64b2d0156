"""Classification data: scikit-learn's bundled digits (small mode), MNIST/Fashion-MNIST from disk.

Nothing is downloaded. ``digits`` needs scikit-learn (the ``experiments`` extra; imported here, so
``import verification`` works without it). ``mnist`` reads the four IDX files (optionally
gzipped) from a directory, by default ``$SLT_MNIST_DIR``; ``mnist_available`` says whether they
are there.
"""

from __future__ import annotations

import gzip
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import torch
from torch import Tensor

MNIST_FILES = {
    "train_x": "train-images-idx3-ubyte",
    "train_y": "train-labels-idx1-ubyte",
    "test_x": "t10k-images-idx3-ubyte",
    "test_y": "t10k-labels-idx1-ubyte",
}


@dataclass(frozen=True)
class Dataset:
    """Inputs flattened to [n, features] in [0, 1] and integer labels, split into train and test."""

    name: str
    x_train: Tensor
    y_train: Tensor
    x_test: Tensor
    y_test: Tensor
    num_classes: int

    @property
    def train(self) -> tuple[Tensor, Tensor]:
        return self.x_train, self.y_train

    @property
    def test(self) -> tuple[Tensor, Tensor]:
        return self.x_test, self.y_test

    @property
    def num_features(self) -> int:
        return self.x_train.shape[1]


def digits(
    generator: torch.Generator, test_fraction: float = 0.25, dtype: torch.dtype = torch.float32
) -> Dataset:
    """scikit-learn's 1,797 8×8 digits (pixels/16), split at random by ``generator``."""
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must lie in (0, 1), not {test_fraction}")
    try:
        from sklearn.datasets import load_digits
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "digits() needs scikit-learn: pip install 'slt-check[experiments]'"
        ) from e
    bunch = load_digits()
    x = torch.as_tensor(bunch.data / 16.0, dtype=dtype)
    y = torch.as_tensor(bunch.target, dtype=torch.long)
    perm = torch.randperm(x.shape[0], generator=generator)
    k = round(x.shape[0] * test_fraction)
    test, train = perm[:k], perm[k:]
    return Dataset("digits", x[train], y[train], x[test], y[test], 10)


def _read_idx(path: Path) -> np.ndarray:
    """An IDX array (LeCun's format: magic 0x0000 0x08 ndim, big-endian sizes, uint8 data)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise ValueError(f"{path} is not an IDX file of unsigned bytes")
    ndim = raw[3]
    shape = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(shape)):
        raise ValueError(f"{path}: header says {shape}, found {data.size} bytes of data")
    return data.reshape(shape)


def _find(root: Path, stem: str) -> Path | None:
    for name in (stem, stem + ".gz"):
        if (root / name).is_file():
            return root / name
    return None


def mnist_dir(root: str | os.PathLike | None = None) -> Path | None:
    """The directory to read MNIST from: ``root``, else ``$SLT_MNIST_DIR``, else None."""
    root = root if root is not None else os.environ.get("SLT_MNIST_DIR")
    return Path(root) if root else None


def mnist_available(root: str | os.PathLike | None = None) -> bool:
    """Whether all four IDX files are in ``mnist_dir(root)``."""
    d = mnist_dir(root)
    return d is not None and all(_find(d, s) is not None for s in MNIST_FILES.values())


def mnist(
    root: str | os.PathLike | None = None,
    kind: Literal["mnist", "fashion"] = "mnist",
    dtype: torch.dtype = torch.float32,
) -> Dataset:
    """MNIST or Fashion-MNIST (same file names) from ``mnist_dir(root)``: pixels/255, flattened."""
    d = mnist_dir(root)
    if d is None:
        raise FileNotFoundError("no MNIST directory: pass root or set SLT_MNIST_DIR")
    arrays = {}
    for key, stem in MNIST_FILES.items():
        path = _find(d, stem)
        if path is None:
            raise FileNotFoundError(f"{d} has no {stem} (or {stem}.gz)")
        arrays[key] = _read_idx(path)
    for part in ("train", "test"):
        nx, ny = arrays[f"{part}_x"].shape[0], arrays[f"{part}_y"].shape[0]
        if nx != ny:
            raise ValueError(f"{d}: {nx} {part} images but {ny} labels")

    def images(a: np.ndarray) -> Tensor:
        return torch.as_tensor(a.reshape(a.shape[0], -1) / 255.0, dtype=dtype)

    def labels(a: np.ndarray) -> Tensor:
        return torch.as_tensor(a.astype(np.int64))

    return Dataset(
        kind,
        images(arrays["train_x"]),
        labels(arrays["train_y"]),
        images(arrays["test_x"]),
        labels(arrays["test_y"]),
        10,
    )
