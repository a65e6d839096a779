"""Harness-side probes (they run in Python, beside the browser). Worker-side probes are the
JavaScript modules in ``web/probes/``."""
