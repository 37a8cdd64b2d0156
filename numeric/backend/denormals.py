"""Denormal floats flushed to zero while the estimator runs on the CPU.

A trained classifier is confident: where the chains take it, its logits span hundreds, so the
softmax gives the wrong classes probabilities below float32's smallest normal number
(1.18·10⁻³⁸), and the backward pass multiplies those denormals through every layer. x86
arithmetic on denormal operands takes a slow microcode path: on a ReLU MLP 64-1500-10 (112,510
parameters, digits) one gradient evaluation for 4 chains took 93 ms with denormals and 23 ms
with them flushed (one torch thread).

A denormal's contribution to L_B or ∇L_B is below 10⁻³⁸ in absolute terms, far under float32's
resolution of either, so flushing changes the chains by rounding only: on a 64-150-10 MLP λ̂ came
out bit for bit the same; on the 64-1500-10 one those rounding differences grew along the chains,
as any change of thread count or torch version does, and λ̂ moved within its error bar
(``benchmarks/bench_denormals.py``).

``flushing_denormals()`` sets the processor's flush-to-zero and denormals-are-zero flags
(``torch.set_flush_denormal``) inside the block and restores them afterwards. The flags belong
to each thread, so where torch runs its CPU kernels on an OpenMP team (libgomp, torch's own
copy: the Linux wheels) they are set on every thread of the team too; elsewhere on the calling
thread only, which is all of it with one torch thread.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import sys
from collections.abc import Callable, Iterator

import torch

__all__ = ["denormals_flushed", "flushing_denormals", "on_each_torch_thread"]

_PROBE = 1e-39  # a float32 denormal: with the flags on, probe·1 is 0


def denormals_flushed() -> bool:
    """Whether the calling thread flushes denormals to zero now (probed: torch has no getter)."""
    return torch.tensor([_PROBE], dtype=torch.float32).mul(1.0).item() == 0.0


@contextlib.contextmanager
def flushing_denormals() -> Iterator[None]:
    """Flush denormals to zero on the CPU inside the block (on every torch thread, where the
    processor supports it), then restore the previous setting."""
    if denormals_flushed() or not torch.set_flush_denormal(True):  # on already, or no SSE3
        yield
        return
    on_each_torch_thread(lambda: torch.set_flush_denormal(True))
    try:
        yield
    finally:
        on_each_torch_thread(lambda: torch.set_flush_denormal(False))
        torch.set_flush_denormal(False)


_TEAM_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def on_each_torch_thread(fn: Callable[[], object]) -> list[object]:
    """``fn()`` on each thread of torch's OpenMP team (the calling thread is one of them),
    through libgomp's ``GOMP_parallel``, the entry point ``#pragma omp parallel`` compiles to;
    the results, one per thread. ``[]`` where torch runs one thread or its OpenMP runtime is not
    its own libgomp."""
    threads = torch.get_num_threads()
    gomp = _torch_libgomp()
    if threads < 2 or gomp is None:
        return []
    out: list[object] = []
    team_fn = _TEAM_FN(lambda _: out.append(fn()))
    gomp.GOMP_parallel(team_fn, None, ctypes.c_uint(threads), ctypes.c_uint(0))
    return out


@functools.cache
def _torch_libgomp() -> ctypes.CDLL | None:
    """The libgomp that torch loaded from its own folder (Linux), found in /proc/self/maps."""
    if not sys.platform.startswith("linux") or not os.path.exists("/proc/self/maps"):
        return None
    torch_dir = os.path.dirname(os.path.realpath(torch.__file__))
    with open("/proc/self/maps") as fh:
        paths = {line.split(maxsplit=5)[-1].strip() for line in fh if "libgomp" in line}
    ours = sorted(p for p in paths if os.path.realpath(p).startswith(torch_dir + os.sep))
    if len(ours) != 1:
        return None
    try:
        lib = ctypes.CDLL(ours[0], mode=os.RTLD_NOLOAD | os.RTLD_GLOBAL)
        lib.GOMP_parallel.argtypes = [_TEAM_FN, ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint]
        lib.GOMP_parallel.restype = None
    except (OSError, AttributeError):
        return None
    return lib
