"""Per-process memory of the browser under test, sampled from the harness with psutil.

Every ``interval_s`` it reads RSS and (where psutil can: Linux ``/proc/<pid>/smaps``) USS of
each browser process and records one ``process_memory`` sample per process, labelled with the
process type the driver gives (Chrome's ``--type``) and the token the cell had reached. It also
asks the session for the worker's JS heap (CDP) and records it as a ``worker_heap`` sample —
that call must happen on the driver's thread, so the runner calls :meth:`sample_heap` itself.
"""

from __future__ import annotations

import threading
from typing import Callable

import psutil

from harness.browsers.base import ProcessInfo
from harness.store import SampleStore

#: Default sampling period (s). USS reads every mapping, ~1–5 ms per Chromium process here.
DEFAULT_INTERVAL_S = 0.25


class ProcessMemoryProbe:
    """Samples ``processes()`` every ``interval_s`` into ``store`` for ``cell`` (a thread)."""

    def __init__(self, store: SampleStore, cell: str, processes: Callable[[], list[ProcessInfo]],
                 interval_s: float = DEFAULT_INTERVAL_S, with_uss: bool = True):
        self.store, self.cell, self.processes = store, cell, processes
        self.interval_s = interval_s
        self.with_uss = with_uss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"memory-{cell}", daemon=True)
        self._procs: dict[int, psutil.Process] = {}
        self._snapshot: list[ProcessInfo] = []
        self._lock = threading.Lock()

    def refresh(self, infos: list[ProcessInfo]) -> None:
        """Give the sampler the current process list (called from the driver's thread)."""
        with self._lock:
            self._snapshot = infos

    def start(self) -> "ProcessMemoryProbe":
        self.refresh(self.processes())
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def sample_once(self) -> int:
        """Record one sample per live process; returns how many were recorded."""
        with self._lock:
            infos = list(self._snapshot)
        token = self.store.cells[self.cell].last_step
        now = round(self.store.elapsed_s(), 4)  # one timestamp per round, so rounds group
        out = []
        for info in infos:
            proc = self._procs.get(info.pid)
            if proc is None:
                try:
                    proc = self._procs[info.pid] = psutil.Process(info.pid)
                except psutil.Error:
                    continue
            try:
                if self.with_uss:
                    mem = proc.memory_full_info()
                    rss, uss = mem.rss, getattr(mem, "uss", None)
                else:
                    rss, uss = proc.memory_info().rss, None
            except psutil.Error:
                continue
            out.append({"kind": "process_memory", "source": "psutil", "process_type": info.process_type,
                        "pid": info.pid, "rss_bytes": rss, "uss_bytes": uss,
                        "time_s": now, "token": token})
        if out:
            self.store.append(self.cell, out)
        return len(out)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.sample_once()
            self._stop.wait(self.interval_s)

    def sample_heap(self, heap: dict[str, int] | None) -> None:
        """Record the worker's JS heap (from the driver) if known."""
        if heap:
            self.store.append(self.cell, [{
                "kind": "worker_heap", "source": "cdp", "process_type": "worker",
                "js_heap_bytes": heap["used_bytes"], "js_heap_total_bytes": heap["total_bytes"],
                "time_s": round(self.store.elapsed_s(), 4), "token": self.store.cells[self.cell].last_step}])
