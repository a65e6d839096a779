"""Per-process memory and CPU time of the browser under test, sampled from the harness with psutil.

Every ``memory_interval_s`` (plan setting) a sampler thread reads RSS, (where psutil can:
Linux ``/proc/<pid>/smaps``) USS, and the CPU time used so far (``cpu_user_s``,
``cpu_system_s``: psutil ``cpu_times``, so the GPU process's own work shows) of each browser
process and records one ``process_memory`` sample per process, labelled with the process type
the driver gives (Chrome's ``--type``, WebKit's process name) and the token the cell had reached
*when the sample was taken*: a round is written :data:`STAMP_DELAY_S` later, once the steps the
worker ended before it have arrived, stamped with
:meth:`harness.probe.base.ProbeContext.token_at` (the rest at ``stop``). The list of processes comes from the
driver (``session.processes()``), refreshed once a second from the runner's thread in
:meth:`ProcessMemoryProbe.poll` (drivers are not thread-safe). A zombie or exiting process
(psutil status zombie or dead, or RSS 0) is not sampled: its numbers are not measurements.

On macOS the samples are ``source: footprint``: RSS plus the physical footprint
(``footprint_bytes``, harness/probe/footprint.py), the number jetsam and Activity Monitor use;
psutil's USS needs root there for any process but our own, so it is not read. A session that
cannot see its browser's processes (a remote browser) gives none, and nothing is recorded:
memory is then "not measurable remotely" (:func:`describe`), never 0.
"""

from __future__ import annotations

import platform
import threading

import psutil

from harness.drive.base import ProcessInfo
from harness.probe import footprint
from harness.probe.base import Probe, ProbeContext

#: macOS: physical footprint instead of USS (harness/probe/footprint.py).
DARWIN = platform.system() == "Darwin"

#: Seconds between refreshes of the process list from the driver.
REFRESH_S = 1.0
#: Seconds a round waits before it is stamped and written (longer than a step's delivery).
STAMP_DELAY_S = 1.0


class ProcessMemoryProbe(Probe):
    """Samples the session's processes every ``interval_s`` on a thread of its own."""

    name = "process_memory"

    def __init__(self, ctx: ProbeContext, with_uss: bool = not DARWIN):
        super().__init__(ctx)
        self.interval_s = float(getattr(ctx.settings, "memory_interval_s", 0.25))
        self.with_uss = with_uss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"memory-{ctx.cell}", daemon=True)
        self._procs: dict[int, psutil.Process] = {}
        self._snapshot: list[ProcessInfo] = []
        self._lock = threading.Lock()
        self._last_refresh = 0.0
        self._pending: list[tuple[float, list[dict]]] = []  # (time_s, samples) not yet written

    def refresh(self, infos: list[ProcessInfo]) -> None:
        """Give the sampler the current process list (called from the driver's thread)."""
        with self._lock:
            self._snapshot = infos

    def start(self) -> None:
        self.refresh(self.ctx.session.processes())
        self._thread.start()

    def poll(self, now: float) -> None:
        if now - self._last_refresh > REFRESH_S:
            self.refresh(self.ctx.session.processes())
            self._last_refresh = now

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self._write(until_s=float("inf"))

    def _write(self, until_s: float) -> None:
        """Stamp and record the rounds taken before ``until_s`` (run clock, s)."""
        with self._lock:
            due = [r for r in self._pending if r[0] <= until_s]
            self._pending = [r for r in self._pending if r[0] > until_s]
        for time_s, round_ in due:
            token = self.ctx.token_at(time_s)
            self.ctx.record([{**s, "token": token} for s in round_])

    def sample_once(self) -> int:
        """Record one sample per live process; returns how many were recorded."""
        with self._lock:
            infos = list(self._snapshot)
        token = None  # stamped when written (_write)
        now = round(self.ctx.store.elapsed_s(), 4)  # one timestamp per round, so rounds group
        out = []
        for info in infos:
            proc = self._procs.get(info.pid)
            if proc is None:
                try:
                    proc = self._procs[info.pid] = psutil.Process(info.pid)
                except psutil.Error:
                    continue
            try:
                with proc.oneshot():
                    if proc.status() in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD):
                        continue
                    if self.with_uss:
                        mem = proc.memory_full_info()
                        rss, uss = mem.rss, getattr(mem, "uss", None)
                    else:
                        rss, uss = proc.memory_info().rss, None
                    cpu = proc.cpu_times()
            except psutil.Error:
                continue
            if not rss:  # an exiting process: its mappings are already gone
                continue
            sample = {"kind": "process_memory", "source": "psutil", "process_type": info.process_type,
                      "pid": int(info.pid), "rss_bytes": rss, "uss_bytes": uss,
                      "cpu_user_s": round(cpu.user, 4), "cpu_system_s": round(cpu.system, 4),
                      "time_s": now, "token": token}
            fp = footprint.read(info.pid) if DARWIN else None
            if fp is not None:
                sample.update(source="footprint", footprint_bytes=fp[0])
            out.append(sample)
        if out:
            with self._lock:
                self._pending.append((now, out))
        self._write(until_s=self.ctx.store.elapsed_s() - STAMP_DELAY_S)
        return len(out)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.sample_once()
            self._stop.wait(self.interval_s)


def describe(session) -> str:
    """What per-process memory a cell of ``session`` records (manifest cell ``memory``): the
    method and how the processes were found, or ``not measurable remotely: <why>``."""
    scope = getattr(session, "process_scope", "")
    if not scope:
        why = getattr(session, "unmeasurable", "") or "the browser's processes are not on this machine"
        return f"not measurable remotely: {why}"
    method = ("physical footprint (proc_pid_rusage) and RSS" if DARWIN and footprint.available()
              else "RSS and USS (psutil)")
    return f"per-process {method}; processes: {scope}"
