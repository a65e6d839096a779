"""Benchmarks (not tests): ratios measured within one run. ``python -m benchmarks``."""
