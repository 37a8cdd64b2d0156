"""Stopping a run from inside, through the chains' own checks: the clock run out or Ctrl-C."""

from __future__ import annotations

from typing import Any


def stop_chains(chains: Any, cause: str) -> None:
    """Make ``chains`` stop at their next check: ``cause`` "clock" sets the deadline to the past,
    anything else makes the next block raise KeyboardInterrupt (once; the block is restored)."""
    if cause == "clock":
        chains.deadline = 0.0
        return
    block = chains.block

    def interrupted(*a: Any, **k: Any) -> Any:
        chains.block = block
        raise KeyboardInterrupt

    chains.block = interrupted
