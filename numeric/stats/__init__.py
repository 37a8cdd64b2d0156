"""Numbers on [chain, draw] arrays: ESS, R-hat and autocorrelation times (``diagnostics``), λ̂'s
observable with the minibatch's linear term regressed out (``observable``), and λ̂'s statistics
(``chain_stats``).
"""

__all__: list[str] = []
