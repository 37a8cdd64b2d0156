"""Cross-checks of exact and estimated learning coefficients."""
