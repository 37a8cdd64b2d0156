"""The user's arguments to the estimators, validated once, where they are built.

``LLCOptions`` (``estimate_llc``) and ``PotentialOptions`` (``estimate_llc_potential``) share the
sampler settings of ``SamplerOptions``. Every check that needs only the arguments is made in
``__post_init__`` (as ``rlct.RLCT`` keeps its invariants), so an options object that exists is
valid; checks that need the data or the model (n, the batch size against n, a finite L_n(w*),
memory for the chains) are made where the problem is set up (``numeric.inputs.problem``,
``numeric.potential``). Every message names the argument.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import torch

from numeric.errors import InvalidInputError

Integrator = Literal["euler", "lm", "baoab"]
OnDivergence = Literal["raise", "continue"]
Gradient = Literal["control_variate", "minibatch"]
Preconditioning = Literal["auto", "none", "hessian", "lowrank"]
FEWEST_DRAWS = 4  # per chain: split R-hat halves each chain, and a chain's stderr needs a variance
MAX_STEPS = 10**8  # per chain, for num_draws and num_burnin: days of work even at 1 µs a step


def _is_int(x: Any) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _is_real(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def check_int(name: str, value: Any, minimum: int, *, optional: bool = False) -> None:
    """``value`` is an int ≥ ``minimum`` (or None when ``optional``)."""
    if optional and value is None:
        return
    if not (_is_int(value) and value >= minimum):
        raise InvalidInputError(
            f"{name} must be an int ≥ {minimum}{' (or None)' if optional else ''}, got {value!r}"
        )


def check_real(
    name: str,
    value: Any,
    *,
    low: float,
    strict: bool,
    optional: bool = False,
    high: float = math.inf,
) -> None:
    """``value`` is a finite real number > ``low`` (≥ when not ``strict``) and < ``high``."""
    if optional and value is None:
        return
    ok = _is_real(value) and math.isfinite(value)
    ok = ok and (value > low if strict else value >= low) and value < high
    if not ok:
        bound = f"{'>' if strict else '≥'} {low:g}" + (
            f" and < {high:g}" if math.isfinite(high) else ""
        )
        extra = " (or None)" if optional else ""
        raise InvalidInputError(f"{name} must be a finite number {bound}{extra}, got {value!r}")


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    if not (isinstance(value, str) and value in choices):
        listed = ", ".join(repr(c) for c in choices[:-1]) + f" or {choices[-1]!r}"
        raise InvalidInputError(f"{name} must be {listed}, not {value!r}")


def check_bool(name: str, value: Any, *, optional: bool = False) -> None:
    if optional and value is None:
        return
    if not isinstance(value, bool):
        raise InvalidInputError(
            f"{name} must be True or False{' (or None)' if optional else ''}, got {value!r}"
        )


def check_device(value: Any) -> None:
    """A device torch knows and this machine has (None: where the parameters are)."""
    if value is None:
        return
    try:
        dev = torch.device(value)
    except (RuntimeError, TypeError) as exc:
        raise InvalidInputError(f"device {value!r} is not a torch device: {exc}") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise InvalidInputError(f"device {value!r}: CUDA is not available on this machine")
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        raise InvalidInputError(
            f"device {value!r}: this machine has {torch.cuda.device_count()} CUDA device(s)"
        )
    if dev.type == "mps" and not torch.backends.mps.is_available():
        raise InvalidInputError(f"device {value!r}: MPS is not available on this machine")
    if dev.type == "meta":
        raise InvalidInputError(
            f"device {value!r} holds shapes, not values: the chains need a device that computes "
            "(cpu, cuda)"
        )


def check_dtype(value: Any, *, optional: bool) -> None:
    if optional and value is None:
        return
    if not (isinstance(value, torch.dtype) and value.is_floating_point):
        raise InvalidInputError(f"dtype must be a floating-point torch.dtype, got {value!r}")


# the sequential stopping rule's relative precision: λ̂ ± 10% (1 standard error). At a singular
# point λ̂'s own trace mixes slowly (the noisy saddle y = x·w1·w2, n = 10⁴, 4 chains: τ ≈ 80
# steps, so 5% took 20,000 draws a chain, 36 s; 10% takes a quarter of that)
DEFAULT_RTOL = 0.1
DEFAULT_STEP_SCALE = 0.25  # the automatic step ε = step_scale/κ (ε·κ < 4 keeps Langevin stable)
SEED_LIMIT = 2**64  # a torch generator's seeds are below this
SIDE_SEED_OFFSET = 7_919  # side streams (reach probes, Lanczos start vectors): seed + this


def side_seed(seed: int) -> int:
    """The seed of a side stream that must not share the run's: seed + ``SIDE_SEED_OFFSET``,
    wrapped below ``SEED_LIMIT`` (the largest allowed seed overflowed torch's generator)."""
    return (seed + SIDE_SEED_OFFSET) % SEED_LIMIT


def as_seed(value: Any) -> int:
    """A seed as a Python int in [0, 2^64): any integral number (``np.int64`` from numpy's
    ranges, say) is accepted, and converted because ``torch.Generator.manual_seed`` takes an
    int only."""
    check_int("seed", value, 0)
    if value >= SEED_LIMIT:
        raise InvalidInputError(f"seed must be below 2^64 (a torch generator's), got {value}")
    return int(value)


def as_seeds(value: Any, count: int) -> int:
    """The first of the seeds ``value`` + 0 … ``value`` + count − 1 (a series' or a sweep's), a
    Python int, each checked by ``as_seed`` before any estimate runs."""
    first = as_seed(value)
    as_seed(first + max(count - 1, 0))
    return first


@dataclass(frozen=True)
class SamplerOptions:
    """Settings both estimators share (``estimate_llc`` documents them)."""

    nbeta: float | None = None
    gamma: float = 1.0
    prior_precision: float = 0.0
    step_size: float | None = None
    num_chains: int = 4
    num_draws: int | None = None
    num_burnin: int | None = None
    seed: int = 0
    step_scale: float = DEFAULT_STEP_SCALE
    on_divergence: OnDivergence = "raise"
    progress: bool | None = None
    # the largest ε the automatic rule may choose: a restart sets it below the diverged run's ε
    # (``run.divergence_restart.restart_options``), not a user setting
    max_step_size: float = math.inf
    # automatic draws stop once λ̂'s standard error is at most rtol·|λ̂| (or ``target_stderr``)
    rtol: float = DEFAULT_RTOL
    target_stderr: float | None = None
    time_budget: float | None = None  # seconds for the whole estimate (``numeric.budget``)

    def __post_init__(self) -> None:
        check_real("nbeta", self.nbeta, low=0, strict=True, optional=True)
        check_real("gamma", self.gamma, low=0, strict=False)
        check_real("prior_precision", self.prior_precision, low=0, strict=False)
        check_real("step_size", self.step_size, low=0, strict=True, optional=True)
        check_int("num_chains", self.num_chains, 1)
        if self.num_draws is not None and not (
            _is_int(self.num_draws) and self.num_draws >= FEWEST_DRAWS
        ):
            raise InvalidInputError(
                f"num_draws must be an int ≥ {FEWEST_DRAWS} (a chain's standard error and split "
                f"R-hat need at least {FEWEST_DRAWS} draws), got {self.num_draws!r}"
            )
        check_int("num_burnin", self.num_burnin, 0, optional=True)
        for name in ("num_draws", "num_burnin"):
            if (value := getattr(self, name)) is not None and value > MAX_STEPS:
                raise InvalidInputError(
                    f"{name} = {value} is more than {MAX_STEPS:.0e} steps per chain (days of "
                    "work, and the draws' traces alone would need "
                    f"{value * self.num_chains * 32 / 2**30:.3g} GiB); pass fewer"
                )
        object.__setattr__(self, "seed", as_seed(self.seed))
        if not (_is_real(self.step_scale) and math.isfinite(self.step_scale)):
            raise InvalidInputError(f"step_scale must be in (0, 4), got {self.step_scale!r}")
        if not 0 < self.step_scale < 4:
            raise InvalidInputError(f"step_scale must be in (0, 4), got {self.step_scale!r}")
        if self.step_size is not None and self.step_scale != DEFAULT_STEP_SCALE:
            raise InvalidInputError(
                f"step_scale = {self.step_scale:g} sets the automatic step ε = step_scale/κ, and "
                f"step_size = {self.step_size:g} is given, so it would have no effect: pass one "
                "of them"
            )
        check_choice("on_divergence", self.on_divergence, ("raise", "continue"))
        check_bool("progress", self.progress, optional=True)
        check_real("rtol", self.rtol, low=0, strict=True, high=1.0 + 1e-12)
        check_real("target_stderr", self.target_stderr, low=0, strict=True, optional=True)
        check_real("time_budget", self.time_budget, low=0, strict=True, optional=True)
        if not (_is_real(self.max_step_size) and self.max_step_size > 0):
            raise InvalidInputError(
                f"max_step_size must be > 0 (or inf), got {self.max_step_size!r}"
            )


@dataclass(frozen=True)
class LLCOptions(SamplerOptions):
    """``estimate_llc``'s settings (the data model's: minibatches, integrator, preconditioner)."""

    batch_size: int | None = None
    device: Any = None
    dtype: torch.dtype | None = None
    gradient: Gradient = "control_variate"
    integrator: str = "auto"
    friction: float | None = None
    preconditioner: Preconditioning = "auto"
    full_loss_every: int | None = None
    anchor_every: int | None = None
    compile: bool = False
    step_check: bool | None = None  # None: a given ε, Euler steps or plain minibatch gradients
    # name → function of the positions [C, D] recorded at the full-loss evaluations
    # (``numeric.draws.observables``); a sequence of objects with a ``name`` is keyed by it
    observables: Any = None
    callback: Any = None  # called once per block of draws with a ``DrawsEvent``
    # the sampler's gradients (every step) for at most this many chains at a time, one reverse
    # pass per block: memory for a block's activations, not all chains' (None: all at once)
    chain_block: int | None = None
    # the least friction the automatic rule may choose: the heating restart sets it where the
    # chains were heated more than the warm-up measured (``numeric.run.heating_restart``), not a
    # user setting
    min_friction: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if not (_is_real(self.min_friction) and self.min_friction >= 0):
            raise InvalidInputError(f"min_friction must be ≥ 0 (or inf), got {self.min_friction!r}")
        check_choice("gradient", self.gradient, ("control_variate", "minibatch"))
        check_choice("integrator", self.integrator, ("auto", "lm", "euler", "baoab"))
        if self.friction is not None and not (_is_real(self.friction) and self.friction > 0):
            raise InvalidInputError(
                f"friction must be a number > 0 (or None), got {self.friction!r}"
            )
        if self.friction is not None and self.integrator in ("lm", "euler"):
            raise InvalidInputError(
                f"friction applies to integrator='baoab' (or 'auto'), not {self.integrator!r}"
            )
        check_choice("preconditioner", self.preconditioner, ("auto", "none", "hessian", "lowrank"))
        check_int("batch_size", self.batch_size, 1, optional=True)
        check_int("anchor_every", self.anchor_every, 0, optional=True)
        if self.anchor_every and self.gradient != "control_variate":
            raise InvalidInputError(
                "anchor_every applies to gradient='control_variate' only (pass 0 or None)"
            )
        check_int("full_loss_every", self.full_loss_every, 0, optional=True)
        check_device(self.device)
        check_dtype(self.dtype, optional=True)
        check_bool("compile", self.compile)
        check_int("chain_block", self.chain_block, 1, optional=True)
        if self.chain_block is not None and self.compile:
            raise InvalidInputError(
                "chain_block runs the eager gradient block by block; compile=True traces one "
                "step for all chains: pass one of them"
            )
        check_bool("step_check", self.step_check, optional=True)
        object.__setattr__(self, "observables", as_observables(self.observables))
        if self.observables and self.full_loss_every == 0:
            raise InvalidInputError(
                "observables are evaluated where the full loss is (every full_loss_every "
                "steps), and full_loss_every=0 turns those evaluations off: pass None or ≥ 1"
            )
        if self.callback is not None and not callable(self.callback):
            raise InvalidInputError(
                f"callback must be callable (it gets a DrawsEvent), got {self.callback!r}"
            )


def as_observables(value: Any) -> dict[str, Any] | None:
    """``observables`` as a dict name → observable: a mapping as given, a sequence keyed by each
    item's ``name``; each a callable of the positions or an object with ``bind(problem)``
    (``numeric.draws.observables``); None or empty: none."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        items = list(value.items())
    elif isinstance(value, (list, tuple)):
        items = [(getattr(o, "name", None), o) for o in value]
    else:
        raise InvalidInputError(
            "observables must be a mapping name → observable or a sequence of named observables "
            f"(numeric.positions(), numeric.per_sample_losses()), got {type(value).__name__}"
        )
    out: dict[str, Any] = {}
    for name, obs in items:
        if not (isinstance(name, str) and name):
            raise InvalidInputError(
                f"observable {obs!r} has no name: pass a mapping name → observable, or objects "
                "with a non-empty str name"
            )
        if name in out:
            raise InvalidInputError(f"observable name {name!r} is given twice")
        if not (callable(obs) or callable(getattr(obs, "bind", None))):
            raise InvalidInputError(
                f"observable {name!r} must be a function of the positions [C, D] or have "
                f"bind(problem), got {type(obs).__name__}"
            )
        out[name] = obs
    return out or None


def wants_step_check(opts: LLCOptions, full_batch: bool) -> bool:
    """``step_check`` as given, or by default (None): on where the step's bias is not bounded by
    the automatic ε — a given ``step_size``, Euler steps, or plain minibatch gradients
    (``gradient="minibatch"``, whose noise the control variate does not reduce); off at the
    automatic ε with LM or BAOAB on the full batch or with the control variate. On the calibration
    battery the check ran on 34 such runs at 37% more wall time and never applied: |b| < 3 se on
    every one, no verdict changed (``benchmarks/bench_step_check.py``, benchmarks/RESULTS.md)."""
    if opts.step_check is not None:
        return opts.step_check
    plain_minibatch = not full_batch and opts.gradient == "minibatch"
    return opts.step_size is not None or opts.integrator == "euler" or plain_minibatch


@dataclass(frozen=True)
class PotentialOptions(SamplerOptions):
    """``estimate_llc_potential``'s settings (exact gradients: MALA or unadjusted Langevin)."""

    n: int = 2
    metropolis: bool = True
    metric: bool | None = None
    integrator: str = "lm"
    device: Any = None
    dtype: torch.dtype = torch.float64
    prior_exponents: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if not (_is_int(self.n) and self.n >= 2):
            raise InvalidInputError(f"n must be an int ≥ 2, got {self.n!r}")
        super().__post_init__()
        if self.prior_exponents is not None:
            object.__setattr__(self, "prior_exponents", _exponents(self.prior_exponents))
            if not self.metropolis and any(self.prior_exponents):
                raise InvalidInputError(
                    "prior_exponents need metropolis=True (the log-prior's gradient is singular "
                    "at w*)"
                )
        check_bool("metropolis", self.metropolis)
        check_bool("metric", self.metric, optional=True)
        check_choice("integrator", self.integrator, ("lm", "euler"))
        check_device(self.device)
        check_dtype(self.dtype, optional=False)
        floor = self.gamma + self.prior_precision
        if self.metric and not (self.metropolis and floor > 0):
            raise InvalidInputError(
                "metric=True needs metropolis=True and γ + α > 0 (the metric |∇²U| is floored "
                "at γ + α)"
            )


def _exponents(h: Any) -> tuple[float, ...]:
    """Prior exponents: a sequence of finite numbers ≥ 0."""
    if isinstance(h, (str, bytes)) or not hasattr(h, "__len__"):
        raise InvalidInputError(
            f"prior_exponents must be a sequence of numbers ≥ 0 (one per parameter), got {h!r}"
        )
    if len(h) > 10**6:
        raise InvalidInputError(f"prior_exponents has {len(h)} entries")
    out = []
    for j, x in enumerate(h):
        check_real(f"prior_exponents[{j}]", x, low=0, strict=False)
        out.append(float(x))
    return tuple(out)


def default_nbeta(n: int, nbeta: float | None) -> tuple[float, str]:
    """nβ and the rule that gave it: n/log n (β = 1/log n, the WBIC temperature) unless given."""
    if nbeta is not None:
        return float(nbeta), "given"
    if n < 2:
        raise InvalidInputError("nβ = n/log n needs n ≥ 2; pass nbeta")
    return n / math.log(n), "n/log n"
