"""webgpu-harness: measures, in real browsers, what WebGPU LLM decoding costs per token.

Data path, by folder: ``plan.py`` validates what to run → ``serve/`` serves ``web/`` and
``workloads/`` → ``drive/`` drives a browser to the runner page → ``web/probes/`` count WebGPU
calls inside the worker while ``probe/`` samples process memory → samples stream into the run
folder (``store/``, RESULTS.md) → ``pipeline.py``: ``tables.py`` → ``stats/`` → ``verdicts/`` →
``report/``. ``cli/`` is the command line over both halves.
"""

from pathlib import Path

__version__ = "0.1.0"

#: Repository root (the folder holding ``web/``, ``workloads/`` and ``reports/``).
REPO_ROOT = Path(__file__).resolve().parent.parent
