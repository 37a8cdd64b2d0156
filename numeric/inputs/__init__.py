"""What the user passes, turned into a ``Problem``: data in its accepted forms (``data``,
``data_forms``), a module's loss (``module_loss``, ``entries``), weight restrictions
(``restrict``), w* flattened (``flat_params``), the loss checked (``loss_checks``), and the problem
itself (``problem``: the data model, nβ, the batch size).
"""

__all__: list[str] = []
