"""Memory checks made before any work: a run that cannot fit is refused with the size it needs."""

from __future__ import annotations

import os
from collections.abc import Callable

import torch
from torch import Tensor

from numeric.errors import InvalidInputError


def available_memory(device: torch.device) -> int:
    """Bytes free on ``device`` (for the CPU the host's available physical memory: MemAvailable
    on Linux, else the free pages)."""
    if device.type == "cuda":
        return int(torch.cuda.mem_get_info(device)[0])
    try:  # Linux: free memory and what the page cache would give back (MemFree alone is less)
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # not on this platform: do not refuse
        return 2**62


def require_memory(
    parts: dict[str, int],
    device: torch.device,
    what: str,
    *,
    advice: str = (
        "use fewer chains or draws, or a smaller batch (or chain_block=k: the gradients for "
        "k chains at a time)"
    ),
) -> None:
    """Raise ``InvalidInputError`` when the bytes of ``parts`` exceed what ``device`` has free;
    the message says what needs how much, and ``advice`` what to do."""
    need = sum(parts.values())
    have = available_memory(device)
    if need <= have:
        return
    detail = ", ".join(f"{k} {v / 2**30:.3g} GiB" for k, v in parts.items())
    raise InvalidInputError(
        f"{what} need about {need / 2**30:.3g} GiB ({detail}); {device} has "
        f"{have / 2**30:.3g} GiB available: {advice}"
    )


def saved_bytes(forward: Callable[[], Tensor], params: Tensor) -> int:
    """Bytes of the tensors autograd keeps for the backward pass of ``forward()`` (the
    activations a gradient holds at its peak), each storage counted once, views of ``params``
    (the weights, counted with the chains' state) not at all."""
    seen: dict[tuple[int, str], int] = {}
    own = params.untyped_storage().data_ptr()

    def pack(t: Tensor) -> Tensor:
        try:
            ptr = t.untyped_storage().data_ptr()
            if ptr != own:
                key = (ptr, str(t.device))
                seen[key] = max(seen.get(key, 0), t.untyped_storage().nbytes())
        except (RuntimeError, NotImplementedError):  # no storage (a functorch wrapper)
            seen[(id(t), str(t.device))] = t.numel() * t.element_size()
        return t

    with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        forward()
    return sum(seen.values())


def activation_bytes(
    forward: Callable[[int], Tensor], params: Tensor, batch: int, rows: int, n: int
) -> int:
    """Bytes of the activations ``rows`` gradients of minibatches of ``batch`` samples keep, and
    of their gradients in the backward pass (as much again: a 3-128-1 MLP's run at 400 chains
    peaked 2.1 times above the saved activations), from ``forward(b)`` (the loss at w* =
    ``params`` on the first b samples, with w* requiring grad; its own views not counted) at
    b = 8 and 16: a part per sample (the slope) and a part per row (the rest); 0 where n < 2."""
    small, large = min(8, n), min(16, n)
    if large <= small:
        return 0
    at_small = saved_bytes(lambda: forward(small), params)
    at_large = saved_bytes(lambda: forward(large), params)
    per_sample = max(at_large - at_small, 0) / (large - small)
    fixed = max(at_small - per_sample * small, 0)
    return int(2 * rows * (per_sample * batch + fixed))
