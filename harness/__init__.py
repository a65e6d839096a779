"""webgpu-harness: measures, in real browsers, what WebGPU LLM decoding costs per token.

Data path, by folder: ``plan.py`` validates what to run → ``serve/`` serves ``web/`` and
``workloads/`` → ``drive/`` drives a browser to the runner page → ``web/probes/`` count WebGPU
calls inside the worker while ``probe/`` samples process memory → samples stream into the run
folder (``store/``, RESULTS.md) → ``pipeline.py``: ``tables.py`` → ``stats/`` → ``verdicts/`` →
``report/``. ``cli/`` is the command line over both halves.
"""

from pathlib import Path

__version__ = "0.1.0"

#: The folder above the package: a clone's root, or site-packages in an installed wheel. Kept for
#: code written before harness/locations.py; harness modules find their files through
#: :mod:`harness.locations` (tests/test_locations.py fails on a new use here).
REPO_ROOT = Path(__file__).resolve().parent.parent
