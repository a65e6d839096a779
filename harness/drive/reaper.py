"""Every process the harness starts ends with it: on any exit, on a signal, or, when the harness
itself was killed (SIGKILL, an out-of-memory kill), at the next harness start.

Drivers hand each process they start to :data:`REAPER` (:meth:`Reaper.track`): Xvfb and
WebKitWebDriver start in a process group of their own, which MiniBrowser and its web, network
and GPU processes inherit; Chromium is started by Playwright's node driver in a group of its
own (Playwright launches browsers ``detached``). The reaper keeps what it tracks in a pid file,
``<state dir>/<harness pid>.json`` (``$XDG_RUNTIME_DIR/webgpu-harness`` or
``/tmp/webgpu-harness-<uid>``), with each process's start time so that a pid the system has
since given to another program is never touched.

- :meth:`Reaper.end_all` (``atexit``, and the drivers' ``close``) ends every tracked group and
  process: SIGTERM, then SIGKILL after :data:`GRACE_S`; then deletes the pid file.
- a watchdog process (harness/drive/watchdog.py), started with the first process tracked,
  ends what a killed harness left as soon as it is killed;
- :func:`reap_stale` (called when a run starts) reads the pid files of harness processes that
  no longer run and ends what they list (SIGTERM, SIGKILL after :data:`STALE_GRACE_S`): a killed
  harness leaves nothing running past the next start, should its watchdog have died too.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

#: Seconds between SIGTERM and SIGKILL when ending a group.
GRACE_S = 2.0
#: The same for what a killed harness left (nothing of theirs is measured any more).
STALE_GRACE_S = 1.0


def state_dir() -> Path:
    """Folder of the pid files (created on first use)."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    d = Path(base) / "webgpu-harness" if base and Path(base).is_dir() else Path(tempfile.gettempdir()) / f"webgpu-harness-{os.getuid()}"
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    return d


def _create_time(pid: int) -> float | None:
    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return None


def _same(pid: int, created: float | None) -> bool:
    """Whether ``pid`` is still the process that started at ``created``."""
    now = _create_time(pid)
    return now is not None and created is not None and abs(now - created) < 0.05


def _members(entry: dict) -> list[psutil.Process]:
    """Live processes of a tracked entry: its group's members started no earlier than the group
    was tracked (so a recycled group id is not ours), else the process and its descendants."""
    out: list[psutil.Process] = []
    pid, created = entry["pid"], entry.get("created")
    if entry.get("group"):
        since = (created or 0) - 0.05
        for p in psutil.process_iter(["pid"]):
            try:
                if os.getpgid(p.pid) == pid and p.create_time() >= since and p.pid != os.getpid():
                    out.append(p)
            except (OSError, psutil.Error):
                continue
    if _same(pid, created):
        try:
            root = psutil.Process(pid)
            out += [root] + root.children(recursive=True)
        except psutil.Error:
            pass
    return list({p.pid: p for p in out}.values())


def end_entries(entries: list[dict], grace_s: float = GRACE_S) -> list[str]:
    """End every process of ``entries`` (SIGTERM, then SIGKILL after ``grace_s``); returns
    ``label (pid N)`` of each process that was still running."""
    procs = {p.pid: (p, e.get("label", "")) for e in entries for p in _members(e)}
    if not procs:
        return []
    for p, _ in procs.values():
        try:
            p.terminate()
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs([p for p, _ in procs.values()], timeout=grace_s)
    for p in alive:
        try:
            p.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=grace_s)
    out = []
    for p, label in procs.values():
        try:
            name = p.name()
        except psutil.Error:
            name = label
        out.append(f"{name or label} (pid {p.pid})")
    return out


class Reaper:
    """What this harness process started (thread-safe), mirrored in its pid file."""

    def __init__(self):
        self._lock = threading.Lock()
        self._entries: dict[int, dict] = {}
        self._path: Path | None = None
        self._registered = False
        self._watchdog: subprocess.Popen | None = None
        self._pipe: int | None = None

    @property
    def path(self) -> Path:
        if self._path is None:
            self._path = state_dir() / f"{os.getpid()}.json"
        return self._path

    def track(self, pid: int | None, label: str, group: bool = False) -> None:
        """Remember ``pid`` (and, with ``group``, the process group it leads) until it is ended
        or :meth:`untrack`-ed. Ignores None and pids already gone."""
        if not pid:
            return
        created = _create_time(pid)
        if created is None:
            return
        with self._lock:
            self._entries[pid] = {"pid": pid, "created": created, "label": label, "group": group}
            self._save()
            if not self._registered:
                atexit.register(self.end_all)
                self._registered = True
            self._start_watchdog()

    def _start_watchdog(self) -> None:
        """Start the watchdog (harness/drive/watchdog.py) once per harness process."""
        if self._watchdog is not None and self._watchdog.poll() is None:
            return
        try:
            read, write = os.pipe()
            os.set_inheritable(read, False)
            self._watchdog = subprocess.Popen(
                [sys.executable, "-m", "harness.drive.watchdog", str(os.getpid()), str(self.path)],
                stdin=read, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                close_fds=True)
            os.close(read)
            os.set_inheritable(write, False)  # no child of ours keeps it open past our death
            self._pipe = write
        except OSError:
            self._watchdog = None  # no watchdog: the next start's reap_stale still ends them

    def untrack(self, pid: int | None) -> None:
        with self._lock:
            if self._entries.pop(pid or 0, None) is not None:
                self._save()

    def end(self, pid: int | None, grace_s: float = GRACE_S) -> list[str]:
        """End one tracked entry (its group or tree) now; returns what was still running."""
        with self._lock:
            entry = self._entries.pop(pid or 0, None)
            self._save()
        return end_entries([entry], grace_s) if entry else []

    def end_all(self, grace_s: float = GRACE_S) -> list[str]:
        """End everything tracked and delete the pid file (the watchdog then exits with nothing
        to do); returns what was still running."""
        with self._lock:
            entries = list(self._entries.values())
            self._entries.clear()
        ended = end_entries(entries, grace_s) if entries else []
        with self._lock:
            self._save()
            if self._pipe is not None and not self._entries:
                try:
                    os.close(self._pipe)
                except OSError:
                    pass
                self._pipe = None
        return ended

    def tracked(self) -> list[dict]:
        with self._lock:
            return list(self._entries.values())

    def _save(self) -> None:
        try:
            if not self._entries:
                self.path.unlink(missing_ok=True)
                return
            doc = {"harness_pid": os.getpid(), "harness_created": _create_time(os.getpid()),
                   "entries": list(self._entries.values())}
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(doc))
            os.replace(tmp, self.path)
        except OSError:
            pass  # no state dir: clean-up at exit still works, only the next-start sweep is lost


def reap_stale() -> list[str]:
    """End what killed harness processes left running (their pid files); returns ``name (pid)``
    of each process ended. Pid files of harness processes still running are left alone."""
    ended: list[str] = []
    try:
        files = sorted(state_dir().glob("*.json"))
    except OSError:
        return ended
    for f in files:
        try:
            doc = json.loads(f.read_text())
            owner = int(doc["harness_pid"])
        except (OSError, ValueError, KeyError, TypeError):
            f.unlink(missing_ok=True)
            continue
        if owner == os.getpid() or _same(owner, doc.get("harness_created")):
            continue
        ended += end_entries(doc.get("entries") or [], STALE_GRACE_S)
        f.unlink(missing_ok=True)
    return ended


#: what :func:`reap_stale_at_start` ended (harness/entry.py calls it first thing; the runner says it)
_REAPED_AT_START: list[str] = []


def reap_stale_at_start() -> None:
    """:func:`reap_stale` as the command line starts, remembered for :func:`reaped_since_start`."""
    try:
        _REAPED_AT_START.extend(reap_stale())
    except Exception:  # never stops a command from starting; the runner's own call tries again
        pass


def reaped_since_start() -> list[str]:
    """What this harness process ended of killed harnesses' leftovers so far (and forget it)."""
    out = list(_REAPED_AT_START)
    _REAPED_AT_START.clear()
    return out


def new_group_kwargs() -> dict:
    """``subprocess.Popen`` keywords that start a process in a new session and process group."""
    return {"start_new_session": True}


def signal_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    """Send ``sig`` to a process group; a gone group is fine."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


#: The harness process's reaper.
REAPER = Reaper()


def wait_gone(pids: list[int], timeout_s: float = 5.0) -> list[int]:
    """Pids among ``pids`` still running after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    left = list(pids)
    while left and time.monotonic() < deadline:
        left = [p for p in left if psutil.pid_exists(p) and not _zombie(p)]
        if left:
            time.sleep(0.05)
    return left


def _zombie(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return True
