"""Running catalogue entries locally: serially or in a process pool, one torch thread each.

Every entry gets the seed ``settings.seed + index`` and builds its own ``torch.Generator``, so the
records do not depend on where or in which order the entries ran. Records are handed to
``on_record`` as each case finishes (the report saves them at once).

Threads. The catalogue's models are small, so a step is dispatch-bound: more torch threads do not
help, and on a shared machine they oversubscribe the cores (the quick report took 400–550 s
instead of 70 s on 2 cores shared with one other CPU-bound process). Each case therefore runs with
``threads`` torch threads (default 1); the serial path restores the caller's setting afterwards.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

import torch
from tqdm import tqdm

from ._validate import check_int, check_type
from .crosschecks import Entry, Settings
from .decision import CrossCheck

__all__ = ["MAX_THREADS", "MAX_WORKERS", "run_cases", "torch_threads"]

MAX_WORKERS = 256
MAX_THREADS = 256

Job = tuple[int, Entry, Settings, int]


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """torch's intra-op thread count set to ``n`` inside the block, restored after it."""
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def _run_one(job: Job) -> tuple[int, CrossCheck]:
    index, entry, settings, seed = job
    return index, entry.run(settings, seed)


def _init_worker(threads: int) -> None:
    """A worker process: ``threads`` torch threads; Ctrl-C is left to the parent, which stops
    the pool (otherwise every worker prints its own KeyboardInterrupt traceback)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(threads)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the running workers now: otherwise the interpreter
    waits at exit for each running case to finish."""
    terminate = getattr(pool, "terminate_workers", None)  # Python ≥ 3.14
    if terminate is not None:
        terminate()
        return
    # Before 3.14: the worker processes (read before shutdown, which forgets them), then shutdown.
    workers = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in workers:
        proc.terminate()
    for proc in workers:
        proc.join(timeout=5)
        if proc.is_alive():  # SIGTERM not acted on within 5 s
            proc.kill()
            proc.join(timeout=5)


def _run_pool(
    jobs: list[Job], workers: int, threads: int, done: Callable[[int, CrossCheck], None]
) -> None:
    pool = ProcessPoolExecutor(
        max_workers=min(workers, len(jobs)), initializer=_init_worker, initargs=(threads,)
    )
    try:
        pending = {pool.submit(_run_one, job) for job in jobs}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                done(*fut.result())
    except BaseException:
        _stop(pool)
        raise
    pool.shutdown()


def run_cases(
    entries: Sequence[Entry],
    settings: Settings,
    workers: int = 1,
    progress: bool = True,
    *,
    threads: int = 1,
    on_record: Callable[[CrossCheck], None] | None = None,
) -> tuple[CrossCheck, ...]:
    """Run entries locally (a process pool when ``workers`` > 1) with ``threads`` torch threads
    per case; return the records in the entries' order. Seeds are settings.seed + index."""
    check_type("settings", settings, Settings)
    workers = check_int("workers", workers, 1, MAX_WORKERS)
    threads = check_int("threads", threads, 1, MAX_THREADS)
    entries = list(entries)
    for i, e in enumerate(entries):
        check_type(f"entries[{i}]", e, Entry)
    jobs = [(i, e, settings, settings.seed + i) for i, e in enumerate(entries)]
    out: list[CrossCheck | None] = [None] * len(jobs)
    bar = tqdm(total=len(jobs), desc="cases", disable=not progress, unit="case")

    def done(index: int, record: CrossCheck) -> None:
        out[index] = record
        if on_record is not None:
            on_record(record)
        bar.update()

    try:
        if workers == 1 or len(jobs) <= 1:
            with torch_threads(threads):
                for job in jobs:
                    bar.set_postfix_str(job[1].name[:40])
                    done(*_run_one(job))
        else:
            _run_pool(jobs, workers, threads, done)
    finally:
        bar.close()
    return tuple(out)  # type: ignore[arg-type]  # every slot was filled
