"""The run's sample store: appends every sample to ``samples.jsonl`` as it arrives.

Thread-safe: the uvicorn server thread appends page samples, the process-memory sampler thread
appends harness samples, the runner reads cell state. Nothing but a small per-cell state is kept
in memory, so a long run's harness RSS stays flat; tables are built from the file afterwards.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class CellState:
    """What the runner needs to know about a cell while it runs."""

    config: dict[str, Any]
    steps: int = 0
    last_step: int | None = None
    last_sample_monotonic: float = field(default_factory=time.monotonic)
    env: dict[str, Any] | None = None
    outcome: str | None = None  # "done", "error", "skip"
    reason: str = ""
    #: the first ``device_lost`` sample that arrived before the outcome (the cell ends device-lost)
    device_lost: dict[str, Any] | None = None
    finished: threading.Event = field(default_factory=threading.Event)


class SampleStore:
    """Appends samples to ``<run_dir>/samples.jsonl`` and tracks cell state.

    ``append`` flushes after each batch, so a browser crash loses nothing received.
    Raises ``KeyError`` for an unknown cell id.
    """

    def __init__(self, run_dir: Path):
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.run_dir / "samples.jsonl"
        self._fh = self.path.open("a", encoding="utf-8")
        self._lock = threading.Lock()
        self._seq = 0
        self._t0 = time.monotonic()
        self.cells: dict[str, CellState] = {}

    def elapsed_s(self) -> float:
        """Seconds since the store was opened (the run's clock)."""
        return time.monotonic() - self._t0

    def register(self, cell: str, config: dict[str, Any]) -> CellState:
        with self._lock:
            state = CellState(config=config)
            self.cells[cell] = state
            return state

    def has_cell(self, cell: str) -> bool:
        return cell in self.cells

    def config(self, cell: str) -> dict[str, Any]:
        return self.cells[cell].config

    def append(self, cell: str, samples: list[dict[str, Any]]) -> int:
        """Write samples for ``cell`` and update its state. Returns the last seq written."""
        state = self.cells[cell]
        with self._lock:
            now = self.elapsed_s()
            for sample in samples:
                self._seq += 1
                line = {**sample, "seq": self._seq, "cell": cell, "received_s": round(now, 4)}
                self._fh.write(json.dumps(line, separators=(",", ":")) + "\n")
                self._update(state, sample)
            self._fh.flush()
            return self._seq

    def _update(self, state: CellState, sample: dict[str, Any]) -> None:
        kind = sample.get("kind")
        # only the worker's own samples say it is alive: the page's uasm samples keep coming
        # from a page whose worker hangs (or the step timeout would never fire)
        if kind in ("process_memory", "worker_heap", "uasm"):
            return
        state.last_sample_monotonic = time.monotonic()
        if kind == "step":
            state.steps += 1
            state.last_step = sample.get("step")
        elif kind == "env":
            state.env = sample
        elif kind == "device_lost" and state.outcome is None and state.device_lost is None:
            state.device_lost = sample
        elif kind in ("done", "error", "skip") and state.outcome is None:
            state.outcome = kind
            state.reason = sample.get("reason") or sample.get("message") or ""
            state.finished.set()

    def close(self) -> None:
        with self._lock:
            self._fh.close()
