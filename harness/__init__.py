"""webgpu-harness: measures, in real browsers, what WebGPU LLM decoding costs per token.

Data path, by folder: ``harness/server.py`` serves ``web/`` and ``workloads/`` →
``harness/browsers/`` drive a browser to the runner page → ``web/probes/`` count WebGPU calls
inside the worker → samples stream to the server (``harness/store.py``, ``samples.jsonl``) →
``harness/tables.py`` makes pandas tables → ``harness/report.py`` renders the HTML report.
"""

from pathlib import Path

__version__ = "0.1.0"

#: Repository root (the folder holding ``web/``, ``workloads/`` and ``reports/``).
REPO_ROOT = Path(__file__).resolve().parent.parent
