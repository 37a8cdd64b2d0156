"""What the user passes, turned into a ``Problem``: data in its accepted forms (``data``,
``data_forms``; ``host_data``: kept on the host, moved per minibatch), a module's loss
(``module_loss``, ``entries``; ``lm_loss``: a causal language model's), weight restrictions
(``restrict``; ``element_masks``: chosen elements of tensors), w* flattened (``flat_params``), the loss checked (``loss_checks``), and the problem
itself (``problem``: the data model, nβ, the batch size).
"""

__all__: list[str] = []
