"""The run's sample store: appends every sample to ``samples.jsonl`` as it arrives.

Thread-safe: the uvicorn server thread appends page samples, the process-memory sampler thread
appends harness samples, the runner reads cell state. Nothing but a small per-cell state is kept
in memory, so a long run's harness RSS stays flat; tables are built from the file afterwards.

Delivery (web/probes/sink.js → :meth:`SampleStore.append_batch`) is at least once and in order
per sender: every posted sample carries its sender (``src``) and the sender's sequence number
``n``. The store writes each ``(src, n)`` once (a retried batch whose first answer was lost is
suppressed as a duplicate), records a ``gap`` when ``n`` jumps (samples a sender made that never
arrived), and refuses, with one ``refused`` record each, samples that fail the schema, a step
that repeats or goes back, and anything that arrives after the cell ended. A cell that finished
with a gap or a missing step is *incomplete* (:meth:`CellState.delivery_problem`), never ok.

Liveness: a cell makes *progress* when the worker reports where it is (``env``), a new step, a
workload ``heartbeat``, or its end; logs, errors, page memory samples and harness samples do not
count (a hung worker's page keeps posting ``uasm`` samples). The runner times a cell out on
``last_progress_monotonic``.
"""

from __future__ import annotations

import bisect
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.serve.samples import SampleRefused, check_sample

#: Sample kinds that are progress of the workload (module docstring).
PROGRESS_KINDS = ("env", "step", "heartbeat", "done", "error", "skip")
#: Kinds that end a cell.
END_KINDS = ("done", "error", "skip")
#: Most step times kept per cell for stamping memory samples (:meth:`SampleStore.step_at`; a
#: round is stamped about a second after it was taken, so recent steps are enough).
STEP_TIMES_KEPT = 512


def ranges(values: list[int]) -> str:
    """``[3, 4, 5, 9]`` → ``"3-5, 9"``."""
    out: list[str] = []
    vals = sorted(set(values))
    i = 0
    while i < len(vals):
        j = i
        while j + 1 < len(vals) and vals[j + 1] == vals[j] + 1:
            j += 1
        out.append(str(vals[i]) if i == j else f"{vals[i]}-{vals[j]}")
        i = j + 1
    return ", ".join(out)


@dataclass
class CellState:
    """What the runner needs to know about a cell while it runs."""

    config: dict[str, Any]
    steps: int = 0
    last_step: int | None = None
    #: time.monotonic() of the last progress (module docstring); the step timeout counts from it
    last_progress_monotonic: float = field(default_factory=time.monotonic)
    env: dict[str, Any] | None = None
    outcome: str | None = None  # "done", "error", "skip"
    reason: str = ""
    #: the first ``device_lost`` sample that arrived before the outcome (the cell ends device-lost)
    device_lost: dict[str, Any] | None = None
    finished: threading.Event = field(default_factory=threading.Event)
    #: set when the cell ended (its outcome arrived, or the runner ended it): later samples are refused
    ended: str | None = None
    #: sender id → next sequence number expected
    senders: dict[str, int] = field(default_factory=dict)
    #: (src, first n, last n) of every gap: samples a sender made that never arrived
    gaps: list[tuple[str, int, int]] = field(default_factory=list)
    #: step numbers skipped (a later step arrived first): lost or refused
    missing_steps: list[int] = field(default_factory=list)
    duplicates: int = 0
    #: samples refused while the cell ran (schema, a repeated step…): the cell is incomplete
    refused: int = 0
    #: samples refused because they came after the cell ended (a page's last memory sample)
    late: int = 0
    #: per sender, the smallest (arrival − t_ms) seen (ms): maps the sender's clock onto ours
    clock_offset_ms: dict[str, float] = field(default_factory=dict)
    #: (harness time s, step) of recent steps, in step order, estimated at the sender's clock
    step_times: deque = field(default_factory=lambda: deque(maxlen=STEP_TIMES_KEPT))

    @property
    def lost_samples(self) -> int:
        """Samples senders made that never arrived (sum of the gaps)."""
        return sum(b - a + 1 for _, a, b in self.gaps)

    def delivery_problem(self) -> str | None:
        """One line when samples were lost or steps are missing (the cell is then incomplete,
        not ok), else None."""
        parts = []
        if self.missing_steps:
            parts.append(f"{len(self.missing_steps)} step(s) missing ({ranges(self.missing_steps)})")
        if self.gaps:
            where = "; ".join(f"{src} n {a}" + (f"-{b}" if b > a else "") for src, a, b in self.gaps[:5])
            parts.append(f"{self.lost_samples} sample(s) lost in delivery ({where})")
        if self.refused:
            parts.append(f"{self.refused} sample(s) refused (see the refused records)")
        return "; ".join(parts) or None


class SampleStore:
    """Appends samples to ``<run_dir>/samples.jsonl`` and tracks cell state.

    ``append``/``append_batch`` flush after each batch, so a browser crash loses nothing
    received. Raises ``KeyError`` for an unknown cell id.
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

    def _write(self, cell: str, sample: dict[str, Any], now: float) -> int:
        self._seq += 1
        line = {**sample, "seq": self._seq, "cell": cell, "received_s": round(now, 4)}
        self._fh.write(json.dumps(line, separators=(",", ":"), allow_nan=False) + "\n")
        return self._seq

    def append(self, cell: str, samples: list[dict[str, Any]]) -> int:
        """Write harness-side samples (trusted: ``process_memory``, ``cell_status``…) for
        ``cell`` and update its state. Returns the last seq written."""
        state = self.cells[cell]
        with self._lock:
            now = self.elapsed_s()
            for sample in samples:
                self._write(cell, sample, now)
                self._update(state, sample)
            self._fh.flush()
            return self._seq

    def append_batch(self, cell: str, src: str, samples: list[Any], queue: int = 0) -> dict[str, Any]:
        """Write a posted batch of sender ``src`` (module docstring: duplicates suppressed, gaps
        recorded, bad samples refused one by one). Returns ``{"seq", "accepted", "duplicates",
        "refused": [{"n", "reason"}]}``."""
        state = self.cells[cell]
        refused: list[dict[str, Any]] = []
        accepted = duplicates = 0
        with self._lock:
            now = self.elapsed_s()
            for raw in samples:
                n = raw.get("n") if isinstance(raw, dict) else None
                n = n if isinstance(n, int) and not isinstance(n, bool) and n >= 1 else None
                expected = state.senders.get(src, 1)
                if n is not None and n < expected:
                    duplicates += 1
                    state.duplicates += 1
                    continue
                if n is not None and n > expected:
                    state.gaps.append((src, expected, n - 1))
                    self._write(cell, {"kind": "gap", "src": src, "first_n": expected, "last_n": n - 1}, now)
                if n is not None:
                    state.senders[src] = n + 1
                try:
                    if n is None:
                        raise SampleRefused("n: the sender's sequence number (an integer from 1) is missing")
                    sample = check_sample(raw)
                    self._check_state(state, sample)
                except SampleRefused as exc:
                    if state.ended is None:
                        state.refused += 1
                    else:
                        state.late += 1
                    kind = raw.get("kind") if isinstance(raw, dict) and isinstance(raw.get("kind"), str) else None
                    reason = str(exc)
                    refused.append({"n": n, "reason": reason})
                    self._write(cell, {"kind": "refused", "src": src, "n": n, "sample_kind": kind and kind[:40],
                                       "reason": reason[:500]}, now)
                    if kind in END_KINDS and state.ended is None:  # the worker ended: say how, never wait
                        self._update(state, {"kind": "error", "message": f"its {kind} sample was refused: {reason}"})
                    continue
                accepted += 1
                self._write(cell, {**sample, "src": src, "queue": queue}, now)
                self._clock(state, src, sample, now)
                self._update(state, sample)
            self._fh.flush()
            return {"seq": self._seq, "accepted": accepted, "duplicates": duplicates, "refused": refused}

    def _check_state(self, state: CellState, sample: dict[str, Any]) -> None:
        """Refuse what the cell's state rules out: anything after the cell ended, a step that
        repeats or goes back. A step after a skipped one is kept; the skipped ones are missing."""
        if state.ended is not None:
            raise SampleRefused(f"the cell already ended ({state.ended}); nothing is accepted after that")
        if sample.get("kind") == "step":
            step = sample["step"]
            if state.last_step is not None and step <= state.last_step:
                raise SampleRefused(f"step {step} repeats or goes back (the last step received is {state.last_step})")
            first = 0 if state.last_step is None else state.last_step + 1
            # a step far beyond what could have been lost is not a step of this cell's plan
            slack = state.lost_samples + state.refused
            if step > first + slack:
                raise SampleRefused(f"step {step} is not the next step ({first}): steps count 0, 1, 2… per cell")
            if step > first:
                state.missing_steps.extend(range(first, step))

    def _clock(self, state: CellState, src: str, sample: dict[str, Any], now: float) -> None:
        t_ms = sample.get("t_ms")
        if t_ms is None:
            return
        lag = now * 1000 - t_ms
        if lag < state.clock_offset_ms.get(src, float("inf")):
            state.clock_offset_ms[src] = lag
        if sample.get("kind") == "step":
            state.step_times.append(((t_ms + state.clock_offset_ms[src]) / 1000, sample["step"]))

    def step_at(self, cell: str, time_s: float) -> int | None:
        """The last step the cell's worker had ended at ``time_s`` (the run's clock, seconds),
        from the steps received so far, each placed at the time the worker ended it (its
        ``t_ms`` on the sender's clock, mapped by that sender's smallest delivery lag). None
        before the first step."""
        state = self.cells[cell]
        with self._lock:
            times = list(state.step_times)
            last = state.last_step
        if not times:  # steps without a sender clock (t_ms): the last one received
            return last
        i = bisect.bisect_right([t for t, _ in times], time_s)
        if i == 0:  # before the oldest step kept: before the first step, or older than we keep
            return None if times[0][1] == 0 or len(times) < STEP_TIMES_KEPT else times[0][1] - 1
        return times[i - 1][1]

    def end(self, cell: str, why: str) -> None:
        """Mark ``cell`` ended (``why``: e.g. ``failed``): later samples for it are refused."""
        state = self.cells.get(cell)
        if state is not None:
            with self._lock:
                state.ended = state.ended or why

    def _update(self, state: CellState, sample: dict[str, Any]) -> None:
        kind = sample.get("kind")
        if kind in PROGRESS_KINDS:
            state.last_progress_monotonic = time.monotonic()
        if kind == "step":
            state.steps += 1
            state.last_step = sample.get("step")
        elif kind == "env":
            state.env = sample
        elif kind == "device_lost" and state.outcome is None and state.device_lost is None:
            state.device_lost = sample
        elif kind in END_KINDS and state.outcome is None:
            state.outcome = kind
            state.ended = kind
            state.reason = sample.get("reason") or sample.get("message") or ""
            state.finished.set()

    def close(self) -> None:
        with self._lock:
            self._fh.close()
