r"""Calibration of the LLC estimator on the battery: is λ̂ right, and do its findings say when not?

``calibrate`` runs an estimator on every :class:`~verification.calibration.BatteryCase` at every seed,
computes the case's exact target at the nβ and γ the estimate ran at, and returns a
:class:`~verification.calibration.CalibrationReport` (confusion of correct/wrong against
error findings, per-code rates, z coverage).

The estimator is ``estimator(case, built, seed)`` returning an object with ``.mean``,
``.stderr``, ``.diagnostics`` (findings with ``.code`` and ``.severity``), ``.nbeta`` and
``.config.gamma`` (an ``LLCEstimate``). The default, :func:`default_estimator`, is what users run:
``numeric.estimate_llc`` (data cases) or ``numeric.estimate_llc_potential`` (potentials) with 4
chains and the case's ``kwargs``, every other setting at its default. Fixed-length runs for tests:
``partial(default_estimator, num_burnin=100, num_draws=200)``. A run that raises (a
``numeric.DivergenceError``, or any other exception of the estimator's) is a failed run: estimate
NaN, an error finding named after the exception, so it counts as wrong and caught.

``jobs`` > 1 runs the (case, seed) pairs in a process pool with one torch thread per worker
(``runner._init_worker``); the estimator must then pickle (a module-level function or a partial
of one). Records come back in the order cases × seeds however they were run.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

import numeric

from .._validate import MAX_SEED, check_int, check_real, check_type
from ..errors import InvalidArgumentError, InvalidTypeError
from ..runner import MAX_WORKERS, _init_worker, _stop
from .cases import BatteryCase, Built, battery
from .report import CalibrationRecord, CalibrationReport

__all__ = ["calibrate", "default_estimator"]

Estimator = Callable[[BatteryCase, Built, int], Any]
Job = tuple[int, Estimator, BatteryCase, int, float]


def default_estimator(case: BatteryCase, built: Built, seed: int, **options: Any) -> Any:
    """``numeric.estimate_llc`` / ``estimate_llc_potential`` with 4 chains, no progress bar, the
    case's ``kwargs`` and then ``options`` (which override them)."""
    kwargs = {"num_chains": 4, "seed": seed, "progress": False, **case.kwargs, **options}
    if case.kind == "potential":
        return numeric.estimate_llc_potential(*built.args, **kwargs)
    return numeric.estimate_llc(*built.args, **kwargs)


def run_case(estimator: Estimator, case: BatteryCase, seed: int, band: float) -> CalibrationRecord:
    """Build the case at ``seed``, estimate, and compare with the target at the estimate's
    settings (an exception becomes a failed record)."""
    t0 = time.perf_counter()
    built = case.build(seed)
    common = {"case": case.name, "family": case.family, "dim": case.dim, "kind": case.kind}
    try:
        est = estimator(case, built, seed)
    except Exception as exc:  # a failed run (a DivergenceError, or an estimator's crash)
        nan = math.nan
        return CalibrationRecord.make(
            **common, seed=seed, estimate=nan, stderr=nan, target=nan, target_sigma=nan,
            findings=[(type(exc).__name__, "error")], seconds=time.perf_counter() - t0,
            band=band, failure=str(exc).splitlines()[0] if str(exc) else type(exc).__name__,
        )  # fmt: skip
    try:
        target = case.target(built, float(est.nbeta), float(est.config.gamma))
    except Exception as exc:  # no target at the estimate's settings (γ = 0 on a flat valley)
        return CalibrationRecord.make(
            **common, seed=seed, estimate=est.mean, stderr=est.stderr, target=math.nan,
            target_sigma=math.nan, findings=[(f.code, f.severity) for f in est.diagnostics],
            seconds=time.perf_counter() - t0, band=band,
            failure=f"no target at nβ = {float(est.nbeta):.4g}, γ = {float(est.config.gamma):g}: "
            + (str(exc).splitlines()[0] if str(exc) else type(exc).__name__),
        )  # fmt: skip
    return CalibrationRecord.make(
        **common,
        seed=seed,
        estimate=est.mean,
        stderr=est.stderr,
        target=target.value,
        target_sigma=target.sigma,
        findings=[(f.code, f.severity) for f in est.diagnostics],
        seconds=time.perf_counter() - t0,
        band=band,
    )


def _run_job(job: Job) -> tuple[int, CalibrationRecord]:
    index, estimator, case, seed, band = job
    return index, run_case(estimator, case, seed, band)


def _run_pool(jobs: list[Job], workers: int, done: Callable[[int, CalibrationRecord], None]):
    pool = ProcessPoolExecutor(
        max_workers=min(workers, len(jobs)), initializer=_init_worker, initargs=(1,)
    )
    try:
        pending = {pool.submit(_run_job, job) for job in jobs}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                done(*fut.result())
    except BaseException:
        _stop(pool)
        raise
    pool.shutdown()


def _check_cases(cases: object) -> list[BatteryCase]:
    if isinstance(cases, BatteryCase) or not isinstance(cases, Sequence) or isinstance(cases, str):
        raise InvalidTypeError(f"cases must be a sequence of BatteryCase, got {cases!r:.80}")
    cases = list(cases)
    if not cases:
        raise InvalidArgumentError("cases is empty: nothing to calibrate")
    for i, c in enumerate(cases):
        check_type(f"cases[{i}]", c, BatteryCase)
    names = [c.name for c in cases]
    if dup := sorted({n for n in names if names.count(n) > 1}):
        raise InvalidArgumentError(f"cases has duplicate names: {dup}")
    return cases


def _check_seeds(seeds: object) -> tuple[int, ...]:
    if isinstance(seeds, str | bytes) or not isinstance(seeds, Sequence):
        raise InvalidTypeError(f"seeds must be a sequence of integers, got {seeds!r:.80}")
    out = tuple(check_int(f"seeds[{i}]", s, 0, MAX_SEED) for i, s in enumerate(seeds))
    if not out:
        raise InvalidArgumentError("seeds is empty: give at least one seed")
    if len(set(out)) != len(out):
        raise InvalidArgumentError(f"seeds has duplicates: {list(out)}")
    return out


def _check_progress(progress: object) -> Callable[[CalibrationRecord], None] | None:
    if progress is None or progress is False:
        return None
    if progress is True:
        return lambda r: print(
            f"{r.case} (seed {r.seed}): {r.estimate:.3f} ± {r.stderr:.3f}, target "
            f"{r.target:.3f}, z = {r.z:.2f}, {len(r.error_findings)} errors, {r.seconds:.1f} s",
            flush=True,
        )
    if callable(progress):
        return progress
    raise InvalidTypeError(f"progress must be None, a bool or a callable, got {progress!r:.80}")


def calibrate(
    estimator: Estimator | None = None,
    cases: Sequence[BatteryCase] | None = None,
    *,
    seeds: Sequence[int] = (0,),
    band: float = 3.0,
    jobs: int = 1,
    progress: bool | Callable[[CalibrationRecord], None] | None = None,
) -> CalibrationReport:
    """Run ``estimator`` (default :func:`default_estimator`) on ``cases`` (default the full
    battery) at each of ``seeds``; a run is correct when |z| ≤ ``band``. ``jobs`` processes;
    ``progress``: True prints a line per record, a callable receives each record as it ends."""
    estimator = default_estimator if estimator is None else estimator
    if not callable(estimator):
        raise InvalidTypeError(f"estimator must be callable, got {estimator!r:.80}")
    cases = battery("full") if cases is None else _check_cases(cases)
    seeds = _check_seeds(seeds)
    band = check_real("band", band, 0.0, open_lo=True)
    jobs = check_int("jobs", jobs, 1, MAX_WORKERS)
    report = _check_progress(progress)
    work = [(case, seed) for case in cases for seed in seeds]
    todo: list[Job] = [(i, estimator, c, s, band) for i, (c, s) in enumerate(work)]
    out: list[CalibrationRecord | None] = [None] * len(todo)

    def done(index: int, record: CalibrationRecord) -> None:
        out[index] = record
        if report is not None:
            report(record)

    if jobs == 1 or len(todo) == 1:
        for job in todo:
            done(*_run_job(job))
    else:
        _run_pool(todo, jobs, done)
    return CalibrationReport(tuple(out), band)  # type: ignore[arg-type]  # every slot filled
