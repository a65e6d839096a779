"""Harness-side probes (Python, beside the browser): base.py has the lifecycle, registry.py the
list. Worker-side probes are the JavaScript modules in ``web/probes/``."""
