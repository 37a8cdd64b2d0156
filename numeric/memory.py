"""Memory checks made before any work: a run that cannot fit is refused with the size it needs."""

from __future__ import annotations

import os

import torch

from numeric.errors import InvalidInputError


def available_memory(device: torch.device) -> int:
    """Bytes free on ``device`` (the host's available physical memory for the CPU)."""
    if device.type == "cuda":
        return int(torch.cuda.mem_get_info(device)[0])
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # not on this platform: do not refuse
        return 2**62


def require_memory(
    parts: dict[str, int],
    device: torch.device,
    what: str,
    *,
    advice: str = "use fewer chains or draws, or a smaller batch",
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
