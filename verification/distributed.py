"""Running catalogue entries elsewhere: a local process pool (default) or a Ray cluster.

Ray is an optional extra (``pip install 'slt-check[ray]'``). Records are identical whichever
engine runs them: every entry gets the seed ``settings.seed + index``, and each run builds its own
``torch.Generator`` from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._validate import check_int, check_type
from .crosschecks import Entry, Settings
from .decision import CrossCheck
from .runner import MAX_THREADS, torch_threads

__all__ = ["run_on_ray"]


def _run(entry: Entry, settings: Settings, seed: int, threads: int) -> CrossCheck:
    with torch_threads(threads):
        return entry.run(settings, seed)


def run_on_ray(
    entries: Sequence[Entry],
    settings: Settings,
    *,
    address: str | None = None,
    num_cpus: int | None = None,
    init_kwargs: dict[str, Any] | None = None,
    threads: int = 1,
) -> tuple[CrossCheck, ...]:
    """Run the entries as Ray tasks (one CPU each, ``threads`` torch threads) and return their
    records in order.

    Connects to ``address`` (e.g. ``"auto"`` or ``"ray://head:10001"``) or starts a local
    instance with ``num_cpus`` CPUs when no cluster is running.
    """
    check_type("settings", settings, Settings)
    if num_cpus is not None:
        check_int("num_cpus", num_cpus, 1)
    threads = check_int("threads", threads, 1, MAX_THREADS)
    if address is not None:
        check_type("address", address, str)
    entries = list(entries)
    for i, e in enumerate(entries):  # checked here: a Ray task would fail only on its worker
        check_type(f"entries[{i}]", e, Entry)
    if init_kwargs is not None:
        check_type("init_kwargs", init_kwargs, dict)
    try:
        import ray
    except ImportError as err:
        raise ImportError(
            "the Ray engine needs the `ray` extra: pip install 'slt-check[ray]'"
        ) from err
    started = False
    if not ray.is_initialized():
        kwargs = {"include_dashboard": False, "log_to_driver": False, **(init_kwargs or {})}
        ray.init(address=address, num_cpus=num_cpus, **kwargs)
        started = True
    try:
        task = ray.remote(num_cpus=1)(_run)
        futures = [
            task.remote(e, settings, settings.seed + i, threads) for i, e in enumerate(entries)
        ]
        return tuple(ray.get(futures))
    finally:
        if started:
            ray.shutdown()
