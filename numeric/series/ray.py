"""The checkpoints of ``estimate_llc_series`` spread over Ray workers (the ``ray`` extra).

One actor per worker holds a copy of the ``SeriesTask`` (the data moved to its device once, the
compiled kernel cached in its process); checkpoint k goes to worker k mod W, and each worker
estimates its checkpoints in order with the seeds a local run uses, so the records are the same.
CPU workers run torch with one thread each (a worker per core), so they equal a local run with
one torch thread bit for bit (``torch.set_num_threads(1)``; with more threads torch's kernels
sum in another order, and the records differ from the seventh digit on); with ``device`` on
CUDA each worker holds one GPU. ``workers`` beyond the cluster's CPUs (GPUs) are refused: an
actor that holds one for the series' whole length would never start. Ray is imported only when
this engine runs.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, Protocol

from numeric.errors import InvalidInputError
from numeric.sampler.chains import default_progress
from numeric.series.checkpoints import Checkpoint

Outcome = tuple[Any, str | None]  # (LLCEstimate or None, error message or None)


class SeriesTask(Protocol):
    """What a worker runs (``numeric.series.estimate_llc_series.SeriesTask``; named here so that
    this module does not import the one that imports it)."""

    def run(self, k: int, cp: Checkpoint) -> Outcome: ...


__all__ = ["run_on_ray"]


class SeriesWorker:
    """A Ray actor's state: the task, estimating the checkpoints it is sent."""

    def __init__(self, task: SeriesTask, threads: int | None) -> None:
        import torch

        if threads is not None:
            torch.set_num_threads(threads)
        self.task = task

    def run(self, k: int, cp: Checkpoint) -> Outcome:
        return self.task.run(k, cp)


def run_on_ray(
    task: SeriesTask,
    cps: tuple[Checkpoint, ...],
    *,
    workers: int | None,
    ray_init: Mapping[str, Any] | None,
    progress: bool | None,
) -> list[Outcome]:
    """Each checkpoint's outcome, in order, computed by ``workers`` Ray actors (module docstring).

    Connects with ``ray.init(**ray_init)`` when Ray is not initialised (a local instance unless
    ``ray_init`` names an ``address``), and shuts down what it started.
    """
    try:
        import ray
    except ImportError as err:
        raise ImportError(
            "engine='ray' needs the `ray` extra: pip install 'slt-check[ray]'"
        ) from err
    if workers is not None and not (isinstance(workers, int) and workers >= 1):
        raise InvalidInputError(f"workers must be an int ≥ 1 (or None), got {workers!r}")
    started = not ray.is_initialized()
    if started:
        ray.init(**{"include_dashboard": False, "log_to_driver": False, **(ray_init or {})})
    try:
        return _run(ray, task, cps, workers, progress)
    finally:
        if started:
            ray.shutdown()


def _run(
    ray: Any, task: SeriesTask, cps: tuple[Checkpoint, ...], workers: int | None, progress: Any
) -> list[Outcome]:
    from tqdm.auto import tqdm

    gpu = str(task.options.get("device") or "").startswith("cuda")
    resource = "GPU" if gpu else "CPU"
    available = int(ray.cluster_resources().get(resource, 0))
    if available < 1:
        raise InvalidInputError(f"the Ray cluster has no {resource} for the series' workers")
    if workers is not None and workers > available:
        # each actor holds one CPU (GPU) for its life: the ones beyond the cluster's never start
        raise InvalidInputError(
            f"workers = {workers}, but the Ray cluster has {available} {resource}(s): each "
            f"worker holds one {resource} for the whole series, so the others would wait "
            f"forever; pass workers ≤ {available} (or None for one per {resource})"
        )
    count = min(len(cps), workers or available)
    options = {"num_gpus": 1} if gpu else {"num_cpus": 1}
    actor = ray.remote(**options)(SeriesWorker)
    shared = ray.put(task)
    pool = [actor.remote(shared, None if gpu else 1) for _ in range(count)]
    futures = [pool[k % count].run.remote(k, cp) for k, cp in enumerate(cps)]
    pending = list(futures)
    with tqdm(
        total=len(cps), desc=f"LLC ({count} Ray workers)", unit="checkpoint", file=sys.stderr,
        disable=not default_progress(progress),
    ) as bar:  # fmt: skip
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            bar.update(len(done))
    try:
        return list(ray.get(futures))
    except ray.exceptions.RayTaskError as err:
        raise err.as_instanceof_cause() from None
    finally:
        for a in pool:
            ray.kill(a)
