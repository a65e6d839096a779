"""Process-tree helpers shared by drivers (psutil): descendants, and the process type label of
Chrome's (``--type=``) and WebKit's (process name) processes used in memory.csv."""

from __future__ import annotations

import os

import psutil


#: Seconds a browser's list of descendants is reused (:func:`descendants` ``max_age_s``): finding
#: them reads every process's /proc/<pid>/stat (psutil's ``ppid_map``), which on a loaded shared
#: machine held the runner's thread, and with it the GIL the sample server needs, for long.
DISCOVERY_S = 2.0
#: Seconds a list is reused when it lacks a process that must be there (an open page's
#: content process): looked for again at least this often.
MISSING_S = 0.5
_DESCENDANTS: dict[int, tuple[float, list[psutil.Process]]] = {}


def descendants(pid: int | None = None, max_age_s: float = 0.0) -> list[psutil.Process]:
    """Live descendants of ``pid`` (default: this process); [] if it is gone. With
    ``max_age_s``, a list found at most that long ago is reused, less the processes that
    exited since (new ones show up within ``max_age_s``)."""
    import time

    pid = pid or os.getpid()
    if max_age_s > 0:
        got = _DESCENDANTS.get(pid)
        if got is not None and time.monotonic() - got[0] <= max_age_s:
            return [p for p in got[1] if p.is_running()]
    try:
        found = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []
    if max_age_s > 0:
        if len(_DESCENDANTS) > 64:
            _DESCENDANTS.clear()
        _DESCENDANTS[pid] = (time.monotonic(), found)
    return found


def forget(pid: int | None) -> None:
    """Drop the reused list of ``pid``'s descendants (:func:`descendants` ``max_age_s``): the
    next call looks again. Called when a page opens in a new browser context, whose new
    content process (Chromium's renderer) a list found before it cannot hold; reusing one there
    left a whole short cell without its renderer's samples."""
    if pid is not None:
        _DESCENDANTS.pop(pid, None)


def cmdline(proc: psutil.Process) -> list[str]:
    try:
        return proc.cmdline()
    except psutil.Error:
        return []


#: (pid, start time) → process type: a process's command line and name do not change, and
#: reading ``/proc/<pid>/cmdline`` of a busy browser process waits on its memory map lock (on a
#: loaded machine the runner's thread spent most of its time there, holding up delivery).
_TYPES: dict[tuple[int, float, str], str] = {}


def _memo(proc: psutil.Process, what: str, compute) -> str:
    try:
        key = (proc.pid, proc.create_time(), what)
    except psutil.Error:
        return compute(proc)
    got = _TYPES.get(key)
    if got is None:
        if len(_TYPES) > 4096:
            _TYPES.clear()
        got = _TYPES[key] = compute(proc)
    return got


def chrome_type(proc: psutil.Process) -> str:
    """Chrome's process type from ``--type=`` (no flag: the browser process); read once per
    process."""
    return _memo(proc, "chrome", _chrome_type)


def _chrome_type(proc: psutil.Process) -> str:
    for arg in cmdline(proc):
        if arg.startswith("--type="):
            return arg.split("=", 1)[1]
    return "browser"


#: WebKit process names → the label used in memory.csv.
WEBKIT_PROCESS_TYPES = {
    "MiniBrowser": "MiniBrowser", "WebKitWebProcess": "WebKitWebProcess",
    "WebKitGPUProcess": "WebKitGPUProcess", "WebKitNetworkProcess": "WebKitNetworkProcess",
    "Safari": "Safari", "com.apple.WebKit.WebContent": "WebContent", "com.apple.WebKit.GPU": "GPU",
    "com.apple.WebKit.Networking": "Networking", "safaridriver": "safaridriver",
    "WebKitWebDriver": "WebKitWebDriver",
}


def zombie(proc: psutil.Process) -> bool:
    """A killed child not yet reaped still 'runs' for psutil: its status says otherwise."""
    try:
        return proc.status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return True


def webkit_process_type(proc: psutil.Process) -> str:
    """WebKit's process name as the memory.csv label (:data:`WEBKIT_PROCESS_TYPES`); the
    name itself when unknown, ``unknown`` when the process is gone."""
    return _memo(proc, "webkit", _webkit_process_type)


def _webkit_process_type(proc: psutil.Process) -> str:
    try:
        name = proc.name()
    except psutil.Error:
        return "unknown"
    for key, label in WEBKIT_PROCESS_TYPES.items():
        if name.startswith(key[:15]):  # Linux truncates comm to 15 characters
            return label
    return name


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def thread_names(proc: psutil.Process) -> set[str]:
    """Names of the process's threads (Linux ``/proc/<pid>/task/*/comm``); empty elsewhere."""
    out: set[str] = set()
    base = f"/proc/{proc.pid}/task"
    try:
        for tid in os.listdir(base):
            try:
                with open(f"{base}/{tid}/comm") as fh:
                    out.add(fh.read().strip())
            except OSError:
                continue
    except OSError:
        pass
    return out


def detail(proc: psutil.Process) -> str:
    """A process named for a failure reason: Chrome's type with its utility sub-type
    (``utility (network.mojom.NetworkService)``), else its name."""
    return _memo(proc, "detail", _detail)


def _detail(proc: psutil.Process) -> str:
    args = cmdline(proc)
    if any(a.startswith("--type=") for a in args) or any("chrom" in a.lower() for a in args[:1]):
        kind = chrome_type(proc)
        sub = next((a.split("=", 1)[1] for a in args if a.startswith("--utility-sub-type=")), "")
        return f"{kind} ({sub})" if sub else kind
    return webkit_process_type(proc)
