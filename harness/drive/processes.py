"""Process-tree helpers shared by drivers (psutil): descendants, and the process type label of
Chrome's (``--type=``) and WebKit's (process name) processes used in memory.csv."""

from __future__ import annotations

import os

import psutil


def descendants(pid: int | None = None) -> list[psutil.Process]:
    """Live descendants of ``pid`` (default: this process); [] if it is gone."""
    try:
        return psutil.Process(pid or os.getpid()).children(recursive=True)
    except psutil.Error:
        return []


def cmdline(proc: psutil.Process) -> list[str]:
    try:
        return proc.cmdline()
    except psutil.Error:
        return []


def chrome_type(proc: psutil.Process) -> str:
    """Chrome's process type from ``--type=`` (no flag: the browser process)."""
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
    args = cmdline(proc)
    if any(a.startswith("--type=") for a in args) or any("chrom" in a.lower() for a in args[:1]):
        kind = chrome_type(proc)
        sub = next((a.split("=", 1)[1] for a in args if a.startswith("--utility-sub-type=")), "")
        return f"{kind} ({sub})" if sub else kind
    return webkit_process_type(proc)
