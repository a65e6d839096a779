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

Limits (harness/store/limits.py): samples posted beyond a realm's or a cell's caps are refused
without being checked; the first refusal per realm and cap is one ``refused`` record, the rest
are counted, and the cell ends incomplete saying so (:meth:`CellState.delivery_problem`).

Disk: ``samples.jsonl`` is appended whole batches at a time, never through a link
(harness/store/files.py); a write that finds the disk full is cut back (no half line), the
store keeps the error (:attr:`SampleStore.full`), answers every later page batch with
:class:`harness.store.files.DiskFull` (the server's 503, which the sink retries) and frees a
small reserve (:data:`RESERVE_BYTES`) so that the cells' final status records and manifest can
still be written.

The module is over 400 lines on purpose: everything that decides what of a page's posts becomes
a line of samples.jsonl (order, duplicates, gaps, the schema, limits, a full disk) is in one
place, where one lock guards it.

Liveness: a cell makes *progress* when the worker reports where it is (``env``), a new step, a
workload ``heartbeat``, or its end; logs, errors, page memory samples and harness samples do not
count (a hung worker's page keeps posting ``uasm`` samples). The runner times a cell out on
``last_progress_monotonic``.
"""

from __future__ import annotations

import bisect
import json
import os
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from harness.serve.samples import MAX_SEQUENCE, SampleRefused, check_sample
from harness.store import files
from harness.store import limits as L

#: Sample kinds that are progress of the workload (module docstring).
PROGRESS_KINDS = ("env", "step", "heartbeat", "done", "error", "skip")
#: Kinds that end a cell.
END_KINDS = ("done", "error", "skip")
#: Most step times kept per cell for stamping memory samples (:meth:`SampleStore.step_at`; a
#: round is stamped about a second after it was taken, so recent steps are enough).
STEP_TIMES_KEPT = 512
#: Bytes set aside in the run folder while a run goes on (``.webgpu-harness-reserve``), freed
#: when the disk fills so the cells' ends and the manifest still fit.
RESERVE_BYTES = 1 << 20
RESERVE_NAME = ".webgpu-harness-reserve"
#: Kinds of harness samples still written after the disk filled (from the reserve).
AFTER_FULL_KINDS = ("cell_status", "process_exit")


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
    #: sample limits (harness/store/limits.py): the cell's meter and one per realm (sender)
    cell_meter: L.Meter | None = None
    meters: dict[str, L.Meter] = field(default_factory=dict)
    #: (realm, cap) → samples refused over that cap; the first of each got a refused record
    limited: dict[tuple[str, str], int] = field(default_factory=dict)
    #: the words of each cap that refused samples (for the reason), in the order they happened
    limited_words: dict[tuple[str, str], str] = field(default_factory=dict)

    @property
    def over_limits(self) -> int:
        """Samples refused over the sample limits."""
        return sum(self.limited.values())

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
        if self.limited:
            what = "; ".join(f"{src}: {n:,} {self.limited_words[(src, cap)]}"
                             for (src, cap), n in list(self.limited.items())[:3])
            parts.append(f"{self.over_limits:,} sample(s) over the sample limits refused ({what})")
        return "; ".join(parts) or None


def step_at(times: list[tuple[float, int]], last: int | None, time_s: float) -> int | None:
    """The step ended by ``time_s`` given ``times`` ((harness time s, step) of recent steps, in
    step order) and ``last``, the last step received (:meth:`SampleStore.step_at`)."""
    if not times:  # steps without a sender clock (t_ms): the last one received
        return last
    i = bisect.bisect_right([t for t, _ in times], time_s)
    if i == 0:  # before the oldest step kept: before the first step, or older than we keep
        return None if times[0][1] == 0 or len(times) < STEP_TIMES_KEPT else times[0][1] - 1
    return times[i - 1][1]


class SampleStore:
    """Appends samples to ``<run_dir>/samples.jsonl`` and tracks cell state.

    ``append``/``append_batch`` write each call's lines at once, so a browser crash loses
    nothing received. Raises ``KeyError`` for an unknown cell id; :class:`RunFolderError` when
    ``samples.jsonl`` is a link or not a regular file. ``limits``: the sample limits
    (harness/store/limits.py; default: its defaults).
    """

    def __init__(self, run_dir: Path, limits: L.SampleLimits | None = None):
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.run_dir / "samples.jsonl"
        self._fd = files.open_append(self.path)
        self._size = os.fstat(self._fd).st_size  # where a failed write is cut back to
        self._lock = threading.Lock()
        self._seq = 0
        self._t0 = time.monotonic()
        self.cells: dict[str, CellState] = {}
        self.limits = limits or L.SampleLimits()
        #: the full disk, once a write found it (:class:`harness.store.files.DiskFull`), else None
        self.full: files.DiskFull | None = None
        #: harness samples dropped since the disk filled
        self.dropped_after_full = 0
        self._reserve = self.run_dir / RESERVE_NAME
        self._make_reserve()

    def _make_reserve(self) -> None:
        try:
            fd = os.open(self._reserve, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except OSError:
            self._reserve = None  # no reserve (a full disk already, or the name taken): nothing freed later
            return
        try:
            os.posix_fallocate(fd, 0, RESERVE_BYTES)
        except (OSError, AttributeError):
            try:
                os.write(fd, bytes(RESERVE_BYTES))
            except OSError:
                pass
        finally:
            os.close(fd)

    def _free_reserve(self) -> None:
        if self._reserve is not None:
            try:
                os.unlink(self._reserve)
            except OSError:
                pass
            self._reserve = None

    def elapsed_s(self) -> float:
        """Seconds since the store was opened (the run's clock)."""
        return time.monotonic() - self._t0

    def register(self, cell: str, config: dict[str, Any]) -> CellState:
        with self._lock:
            state = CellState(config=config, cell_meter=L.meter(self.limits, "cell"))
            self.cells[cell] = state
            return state

    def has_cell(self, cell: str) -> bool:
        return cell in self.cells

    def config(self, cell: str) -> dict[str, Any]:
        return self.cells[cell].config

    def expected_n(self, cell: str, src: str) -> int:
        """The next sequence number the store expects from sender ``src`` of ``cell`` (1 before
        its first sample)."""
        state = self.cells.get(cell)
        return state.senders.get(src, 1) if state is not None else 1

    def _line(self, out: list[bytes], cell: str, sample: dict[str, Any], now: float) -> int:
        self._seq += 1
        line = {**sample, "seq": self._seq, "cell": cell, "received_s": round(now, 4)}
        out.append(json.dumps(line, separators=(",", ":"), allow_nan=False).encode("utf-8") + b"\n")
        return self._seq

    def _flush(self, out: list[bytes], seq_before: int) -> None:
        """Write ``out`` whole. On a full disk: nothing of it is kept, the seq numbers go back,
        :attr:`full` is set, the reserve freed, and :class:`DiskFull` raised."""
        if not out:
            return
        data = b"".join(out)
        try:
            files.write_all(self._fd, data, self.path, self._size)
            self._size += len(data)
        except files.DiskFull as exc:
            self._seq = seq_before
            if self.full is None:
                self.full = exc
                self._free_reserve()
            raise

    def append(self, cell: str, samples: list[dict[str, Any]]) -> int:
        """Write harness-side samples (trusted: ``process_memory``, ``cell_status``…) for
        ``cell`` and update its state. Returns the last seq written. Never raises for a full
        disk: once it is full only :data:`AFTER_FULL_KINDS` are still tried (from the reserve),
        the rest is counted in :attr:`dropped_after_full`."""
        state = self.cells[cell]
        with self._lock:
            now = self.elapsed_s()
            if self.full is not None:
                kept = [s for s in samples if s.get("kind") in AFTER_FULL_KINDS]
                self.dropped_after_full += len(samples) - len(kept)
                samples = kept
            out: list[bytes] = []
            before = self._seq
            for sample in samples:
                self._line(out, cell, sample, now)
            try:
                self._flush(out, before)
            except files.DiskFull:
                self.dropped_after_full += len(samples)
                samples = []
            for sample in samples:
                self._update(state, sample)
            return self._seq

    def limit(self, cell: str, samples: list[dict[str, Any]], nbytes: Callable[[dict], int] | int | None = None,
              src_of: Callable[[dict], str] | None = None) -> list[dict[str, Any]]:
        """The samples of a batch that fit the sample limits (harness/store/limits.py); for the
        first refused per realm and cap a ``refused`` record is written, the rest are counted.
        ``nbytes``: each sample's size (a callable, only called for samples within the count
        caps, or one size for all; default: its JSON's length); ``src_of``: its realm (default:
        its ``realm`` field). Used directly for app cells (their samples come through the
        injection path) and by :meth:`append_batch`. Raises
        :class:`harness.store.files.DiskFull` once the disk is full."""
        with self._lock:
            if self.full is not None:
                raise self.full
            out: list[bytes] = []
            before = self._seq
            kept = self._limit(self.cells[cell], cell, samples, nbytes, src_of, out)
            self._flush(out, before)
            return kept

    def _limit(self, state: CellState, cell: str, samples: list[Any], nbytes, src_of, out: list[bytes]) -> list[Any]:
        size = nbytes if callable(nbytes) else (
            (lambda s: nbytes) if isinstance(nbytes, int) else (lambda s: len(json.dumps(s, default=str))))
        src_of = src_of or (lambda s: str(s.get("realm") or "?")[:40] if isinstance(s, dict) else "?")
        now_m = time.monotonic()
        now = self.elapsed_s()
        kept = []
        state.cell_meter.refill(now_m)
        for raw in samples:
            src = src_of(raw)
            m = state.meters.get(src)
            if m is None:
                m = state.meters[src] = L.meter(self.limits, "realm")
            m.refill(now_m)
            cap, scope = self._over(state, m, raw, size)
            if cap is None:
                kept.append(raw)
                continue
            key = (src, cap if scope == "realm" else f"cell.{cap}")
            if not any(k[0] == src for k in state.limited):  # the realm's first refusal: one record
                state.limited_words[key] = (L.describe(self.limits, scope, cap)
                                            + f" from {'this realm' if scope == 'realm' else 'the cell'}; "
                                            f"raise with --sample-limit {self.limits.option(scope, cap)}=N")
                kind = raw.get("kind") if isinstance(raw, dict) and isinstance(raw.get("kind"), str) else None
                n = raw.get("n") if isinstance(raw, dict) and isinstance(raw.get("n"), int) else None
                self._line(out, cell, {"kind": "refused", "src": src, "n": n, "sample_kind": kind and kind[:40],
                                       "reason": f"over the sample limits: {state.limited_words[key]}; this and "
                                                 "every later sample over a limit are refused (counted, not recorded)"},
                           now)
            if key not in state.limited_words:
                state.limited_words[key] = (L.describe(self.limits, scope, cap)
                                            + f" from {'this realm' if scope == 'realm' else 'the cell'}; "
                                            f"raise with --sample-limit {self.limits.option(scope, cap)}=N")
            state.limited[key] = state.limited.get(key, 0) + 1
        return kept

    @staticmethod
    def _over(state: CellState, m: L.Meter, raw: Any, size: Callable[[dict], int]) -> tuple[str | None, str]:
        """(cap, scope) a sample goes over, or (None, "") after counting it. End samples are
        counted, never refused."""
        end = isinstance(raw, dict) and raw.get("kind") in END_KINDS
        cap = m.over_count()
        if cap is not None and not end:
            return cap, "realm"
        cap = state.cell_meter.over_count()
        if cap is not None and not end:
            return cap, "cell"
        b = size(raw) if isinstance(raw, dict) else 64
        cap = m.over_bytes(b)
        if cap is not None and not end:
            return cap, "realm"
        cap = state.cell_meter.over_bytes(b)
        if cap is not None and not end:
            return cap, "cell"
        m.take(b)
        state.cell_meter.take(b)
        return None, ""

    def append_batch(self, cell: str, src: str, samples: list[Any], queue: int = 0,
                     nbytes: int | None = None) -> dict[str, Any]:
        """Write a posted batch of sender ``src`` (module docstring: duplicates suppressed, gaps
        recorded, samples over the limits or failing the schema refused one by one). ``nbytes``:
        the body's size (spread evenly over its samples for the byte caps). Returns ``{"seq",
        "accepted", "duplicates", "refused": [{"n", "reason"}]}``. Raises
        :class:`harness.store.files.DiskFull` when the disk is (or was found) full: nothing of
        the batch is kept and the cell's state is as before, so the sender's retry finds it new."""
        state = self.cells[cell]
        refused: list[dict[str, Any]] = []
        accepted = duplicates = 0
        each = max(1, nbytes // max(1, len(samples))) if nbytes else None
        with self._lock:
            if self.full is not None:
                raise self.full
            now = self.elapsed_s()
            out: list[bytes] = []
            before = self._seq
            expected = state.senders.get(src, 1)
            gaps: list[tuple[str, int, int]] = []
            fresh = []
            for raw in samples:
                n = raw.get("n") if isinstance(raw, dict) else None
                # a number outside 1..MAX_SEQUENCE is refused below and never moves the sequence (one
                # of 2^40+5 made every later sample of the sender a "duplicate" and a trillion "lost")
                n = n if isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= MAX_SEQUENCE else None
                if n is not None and n < expected:
                    duplicates += 1
                    continue
                if n is not None and n > expected:
                    gaps.append((src, expected, n - 1))
                    self._line(out, cell, {"kind": "gap", "src": src, "first_n": expected, "last_n": n - 1}, now)
                if n is not None:
                    expected = n + 1
                fresh.append((n, raw))
            kept = {id(r) for r in self._limit(state, cell, [r for _, r in fresh], each, lambda s: src, out)}
            # checked against the state as this batch leaves it (not yet applied: a full disk keeps none of it)
            last_step, ended = state.last_step, state.ended
            slack = state.lost_samples + sum(b - a + 1 for _, a, b in gaps) + state.refused
            effects: list[tuple[str, Any]] = []
            for n, raw in fresh:
                if id(raw) not in kept:
                    refused.append({"n": n, "reason": "over the sample limits"})
                    continue
                try:
                    if n is None:
                        given = raw.get("n") if isinstance(raw, dict) else None
                        raise SampleRefused("n: the sender's sequence number (an integer from 1 to "
                                            f"{MAX_SEQUENCE:,}) is " + ("missing" if given is None else f"{str(given)[:40]}"))
                    sample = check_sample(raw)
                    missing = self._check_state(sample, last_step, ended, slack)
                except SampleRefused as exc:
                    kind = raw.get("kind") if isinstance(raw, dict) and isinstance(raw.get("kind"), str) else None
                    reason = str(exc)
                    refused.append({"n": n, "reason": reason})
                    effects.append(("refused" if ended is None else "late", None))
                    slack += ended is None
                    self._line(out, cell, {"kind": "refused", "src": src, "n": n, "sample_kind": kind and kind[:40],
                                           "reason": reason[:500]}, now)
                    if kind in END_KINDS and ended is None:  # the worker ended: say how, never wait
                        ended = "error"
                        effects.append(("update", {"kind": "error", "message": f"its {kind} sample was refused: {reason}"}))
                    continue
                accepted += 1
                self._line(out, cell, {**sample, "src": src, "queue": queue}, now)
                if sample.get("kind") == "step":
                    last_step = sample["step"]
                elif sample.get("kind") in END_KINDS and ended is None:
                    ended = sample["kind"]
                effects.append(("missing", missing))
                effects.append(("sample", sample))
            self._flush(out, before)  # DiskFull: raised with nothing applied
            state.duplicates += duplicates
            state.senders[src] = expected
            state.gaps.extend(gaps)
            for what, x in effects:
                if what == "refused":
                    state.refused += 1
                elif what == "late":
                    state.late += 1
                elif what == "missing":
                    state.missing_steps.extend(x)
                elif what == "update":
                    self._update(state, x)
                else:
                    self._clock(state, src, x, now)
                    self._update(state, x)
            return {"seq": self._seq, "accepted": accepted, "duplicates": duplicates, "refused": refused}

    @staticmethod
    def _check_state(sample: dict[str, Any], last_step: int | None, ended: str | None, slack: int) -> list[int]:
        """Refuse what the cell's state rules out: anything after the cell ended, a step that
        repeats or goes back, a step further ahead than ``slack`` (samples lost or refused so
        far) could explain. Returns the step numbers a kept step skipped (they are missing)."""
        if ended is not None:
            raise SampleRefused(f"the cell already ended ({ended}); nothing is accepted after that")
        if sample.get("kind") == "step":
            step = sample["step"]
            if last_step is not None and step <= last_step:
                raise SampleRefused(f"step {step} repeats or goes back (the last step received is {last_step})")
            first = 0 if last_step is None else last_step + 1
            # a step far beyond what could have been lost is not a step of this cell's plan
            if step > first + slack:
                raise SampleRefused(f"step {step} is not the next step ({first}): steps count 0, 1, 2… per cell")
            return list(range(first, step))
        return []

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
        return step_at(times, last, time_s)

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
        """Close ``samples.jsonl`` and give the disk reserve back."""
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
            self._free_reserve()
