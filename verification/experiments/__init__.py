"""Reproductions of published experiments: shared records, tasks, training loops and LLC calls.

* :mod:`.records` — ``Claim``, ``Measurement``, ``Verdict`` and the ``Record`` mixin (``to_dict``);
* :mod:`.mode` — small mode (CPU, what the tests run) or full mode (``FULL=1``);
* :mod:`.optimizers`, :mod:`.training` — optimizer specs (SGD, momentum, Adam/AdamW,
  entropy-SGD) and one seeded training loop with checkpoints;
* :mod:`.networks`, :mod:`.teachers`, :mod:`.datasets` — ReLU MLPs, deep linear networks, teachers
  with known λ, digits/MNIST;
* :mod:`.llc` — ``llc_along``: LLC estimates at checkpoints, as records;
* :mod:`.ngd` — natural-gradient descent with a damped empirical Fisher (seed 003, its Eqs 6–7);
  :mod:`.online_ngd` — the authors' NGD (Kaldi's online natural gradient with momentum);
* issue 19's claims: :mod:`.cullen`, :mod:`.cullen_dynamics` (seed 002, on :mod:`.modular`),
  :mod:`.saghir`, :mod:`.saghir_swap` (seed 003), :mod:`.sticky`, :mod:`.sticky_2d` (seed 004, on
  :mod:`.sticky_models`);
* issue 62's paper arms (the authors' own procedures, beside the package's estimator):
  :mod:`.paper_sgld` (plain SGLD as the papers ran it), :mod:`.paper_stats`,
  :mod:`.sgld_mala_paper`, :mod:`.rescaling_paper`, and the deep-linear-network headline as
  :mod:`.dln_paper` (*reproduced?*) and :mod:`.dln_truth` (*true?*); Saghir et al.'s claims by
  their procedure and at matched loss, :mod:`.saghir_paper`; Lau et al.'s entropy-SGD claim by
  the authors' code and the package's estimator at the same minima, :mod:`.entropy_paper`;
  saddle-to-saddle by the authors' code on realisable targets, :mod:`.saddles_paper`; Cullen
  et al.'s Figs 1–2 by the authors' recorded runs, against the exact bound, :mod:`.cullen_paper`,
  and their Fig. 3, :mod:`.cullen_paper_tracking`;
* issue 60: :mod:`.transformer` — a 9,384-parameter causal transformer trained on running sums
  mod 8, and its λ̂ (final checkpoint or along training).

scikit-learn (digits) and pandas (``records_table``) are imported only where used: the
``experiments`` extra.
"""

from .llc import LLCPoint, llc_along, llc_at, llc_of, mse_loss
from .mode import Mode, mode
from .optimizers import EntropySGD, OptimizerSpec, adam, adamw, entropy_sgd, sgd
from .records import Claim, Measurement, Outcome, Record, Verdict, records_table
from .training import Checkpoint, TrainingRun, train

__all__ = [
    "Checkpoint",
    "Claim",
    "EntropySGD",
    "LLCPoint",
    "Measurement",
    "Mode",
    "OptimizerSpec",
    "Outcome",
    "Record",
    "TrainingRun",
    "Verdict",
    "adam",
    "adamw",
    "entropy_sgd",
    "llc_along",
    "llc_at",
    "llc_of",
    "mode",
    "mse_loss",
    "records_table",
    "sgd",
    "train",
]
