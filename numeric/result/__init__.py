"""The estimate: ``LLCEstimate`` with its ``LLCConfig`` and ``StepCheck`` (``llc_estimate``), the
config of a data run (``config``), and plots.
"""

__all__: list[str] = []
