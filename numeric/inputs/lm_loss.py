r"""The next-token loss of a causal language model, as a mean over sequences.

For a batch of B sequences with labels y_{i,t} (t = 0 … T−1) and logits z_{i,t} ∈ ℝ^V (the
model's output at position t, predicting token t + 1), the loss of sequence i is the mean
cross-entropy over its predicted tokens

    ℓ_i = Σ_{t ∈ S_i} −log softmax(z_{i,t−1})[y_{i,t}] / |S_i|,

S_i = {t ≥ 1 : y_{i,t} ≠ −100 and attention_mask_{i,t} = 1} (padding and ignored labels left
out), and the batch's loss is (1/B) Σ_i ℓ_i: a mean over samples, as the estimators need, so
that a minibatch's loss is an unbiased estimate of L_n(w) = (1/n) Σ_i ℓ_i. (A mean over all
tokens of the batch, what ``transformers``' own loss returns, weights sequences by their
length, and its minibatch mean is not a mean of per-sample losses.) A sequence with no
predicted token (|S_i| = 0) has ℓ_i = 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from numeric.errors import InvalidInputError

IGNORE_INDEX = -100  # labels left out of the loss (the convention of torch and transformers)


def causal_lm_loss(output: Any, batch: Any) -> Tensor:
    """Mean over sequences of the mean next-token cross-entropy (module docstring).

    ``output``: logits [B, T, V], or a model output holding them (``.logits``, ``["logits"]``,
    or the first element of a tuple). ``batch``: a dict with ``labels`` (or, without them,
    ``input_ids``) [B, T] and optionally ``attention_mask`` [B, T]; or the labels tensor itself
    (the target of a tuple batch (input_ids, labels)). Labels are not shifted by the caller:
    position t's logits are scored against token t + 1 here."""
    logits = per_sequence_logits(output)
    labels, mask = _labels_and_mask(batch)
    if logits.dim() != labels.dim() + 1 or logits.shape[:-1] != labels.shape:
        raise InvalidInputError(
            f"causal_lm_loss: logits of shape {list(logits.shape)} do not match labels of shape "
            f"{list(labels.shape)} (logits [B, T, V] for labels [B, T])"
        )
    if labels.shape[-1] < 2:
        raise InvalidInputError("causal_lm_loss needs sequences of at least 2 tokens")
    if logits.dtype in (torch.float16, torch.bfloat16):
        logits = logits.float()
    target = labels[..., 1:]
    valid = target != IGNORE_INDEX
    if mask is not None:
        valid = valid & (mask[..., 1:] != 0)
    token_loss = F.cross_entropy(
        logits[..., :-1, :].flatten(0, -2),
        target.flatten(),
        ignore_index=IGNORE_INDEX,
        reduction="none",
    ).view(target.shape)
    weight = valid.to(token_loss.dtype)
    per_sequence = (token_loss * weight).sum(-1) / weight.sum(-1).clamp_min(1)
    return per_sequence.mean()


def per_sequence_logits(output: Any) -> Tensor:
    """The logits of a model's output: the tensor, ``.logits``, ``["logits"]`` or ``[0]``."""
    if isinstance(output, Tensor):
        return output
    found = getattr(output, "logits", None)
    if found is None and isinstance(output, Mapping):
        found = output.get("logits")
    if found is None and isinstance(output, (tuple, list)) and output:
        found = output[0]
    if not isinstance(found, Tensor):
        raise InvalidInputError(
            f"causal_lm_loss: the model's output is a {type(output).__name__} without logits "
            "(a tensor, .logits, ['logits'] or a tuple whose first element they are)"
        )
    return found


def _labels_and_mask(batch: Any) -> tuple[Tensor, Tensor | None]:
    """The labels [B, T] and the attention mask (None without one) of a batch."""
    if isinstance(batch, Tensor):
        labels, mask = batch, None
    elif isinstance(batch, Mapping):
        key = "labels" if "labels" in batch else "input_ids"
        if key not in batch:
            raise InvalidInputError(
                f"causal_lm_loss needs 'labels' or 'input_ids' in the batch; it has the keys "
                f"{list(batch)[:16]}"
            )
        labels, mask = batch[key], batch.get("attention_mask")
    else:
        raise InvalidInputError(
            "causal_lm_loss takes a dict batch (labels or input_ids, attention_mask) or the "
            f"labels tensor, got {type(batch).__name__}"
        )
    if not isinstance(labels, Tensor) or labels.is_floating_point() or labels.is_complex():
        raise InvalidInputError("causal_lm_loss: the labels must be an integer tensor [B, T]")
    if mask is not None and (not isinstance(mask, Tensor) or mask.shape != labels.shape):
        raise InvalidInputError(
            "causal_lm_loss: attention_mask must be a tensor of the labels' shape [B, T]"
        )
    return labels, mask
