"""Safari's processes on macOS: which are Safari's, and which one hosts the automation tab.

Safari's web content, GPU and network processes are XPC services of WebKit.framework started by
launchd (parent pid 1), not children of Safari or safaridriver, so a process-tree walk from the
driver finds none of them. They are found by executable instead: the basename of an XPC
service's executable is its service name, ``com.apple.WebKit.WebContent`` / ``.GPU`` /
``.Networking`` (WebKit ``ProcessLauncherCocoa.mm``; variants ``.CaptivePortal`` (Lockdown
Mode), ``.Development``, ``.EnhancedSecurity``), wherever the framework lives (``/System/...``,
the OS cryptex ``/System/Volumes/Preboot/Cryptexes/OS/...``, or Safari Technology Preview's own
copy). The kernel's process name is cut to 16 characters (``com.apple.WebKit`` for every
service), so classification needs the executable path or ``argv[0]``.

Everything here but :func:`snapshot` and :func:`responsible_pid` is a pure function over
process records, tested on real recorded listings (tests/drive/mac-recorded/). Nothing in this
module has been run on a Mac by us: the rules follow the sources cited per function.
"""

from __future__ import annotations

import ctypes
import platform
import re
from dataclasses import dataclass

#: XPC service name → memory.csv process type. ``com.apple.WebKit.Model`` is visionOS's.
WEBKIT_SERVICES = {
    "com.apple.WebKit.WebContent": "WebContent",
    "com.apple.WebKit.GPU": "GPU",
    "com.apple.WebKit.Networking": "Networking",
    "com.apple.WebKit.Model": "Model",
}
#: Suffixes WebKit appends to a service name for variants of the same service
#: (WebKit ``ProcessLauncherCocoa.mm`` and its sandbox profiles).
SERVICE_VARIANTS = ("CaptivePortal", "Development", "EnhancedSecurity")
#: Process type of the web content processes that are not the automation tab's (other tabs, the
#: prewarmed spare, other apps' web views when responsibility is unknown).
OTHER_CONTENT = "WebContent-other"
#: The kernel's ``p_comm`` is MAXCOMLEN (16) characters (xnu ``bsd/sys/param.h``).
MAXCOMLEN = 16
STP_APP = "Safari Technology Preview.app"


@dataclass(frozen=True)
class MacProcess:
    """One process as seen on macOS: ``path`` is the executable path (``exe()``/``argv[0]``, or
    the kernel's 16-character name when neither is readable); ``create_time`` in seconds since
    the epoch; ``responsible_pid`` the app launchd holds responsible for it (None: unknown)."""

    pid: int
    ppid: int
    path: str
    create_time: float | None = None
    responsible_pid: int | None = None

    @property
    def label(self) -> str | None:
        return classify(self.path)

    @property
    def build(self) -> str:
        return webkit_build(self.path)


def classify(path_or_name: str) -> str | None:
    """memory.csv process type of a Safari-related process, from its executable path or name:
    ``WebContent``, ``GPU``, ``Networking``, ``Model``, ``Safari`` (the UI process, also Safari
    Technology Preview's), ``safaridriver``; ``WebKit`` for a WebKit service whose name was cut
    to 16 characters; None when it is not Safari's.

    >>> classify("/System/Library/Frameworks/WebKit.framework/Versions/A/XPCServices/"
    ...          "com.apple.WebKit.GPU.xpc/Contents/MacOS/com.apple.WebKit.GPU")
    'GPU'
    """
    base = path_or_name.rstrip("/").rsplit("/", 1)[-1]
    for service, label in WEBKIT_SERVICES.items():
        if base == service or (base.startswith(service + ".") and base[len(service) + 1:] in SERVICE_VARIANTS):
            return label
    if base == "com.apple.WebKit.WebContent"[:MAXCOMLEN]:  # any service, name cut by the kernel
        return "WebKit"
    if base in ("Safari", "Safari Technology Preview"):
        return "Safari"
    if base == "safaridriver":
        return "safaridriver"
    return None


def webkit_build(path: str) -> str:
    """``"Safari Technology Preview"`` for processes of STP's own WebKit (its app bundle is in
    the path), else ``"system"`` (the OS's WebKit, used by Safari and every other app)."""
    return "Safari Technology Preview" if STP_APP in path else "system"


_PS_EF = re.compile(r"^\s*(?P<uid>\d+)\s+(?P<pid>\d+)\s+(?P<ppid>\d+)\s+\S+\s+\S+\s+\S+\s+\S+\s+(?P<cmd>.+?)\s*$")


def parse_ps_ef(text: str) -> list[MacProcess]:
    """Rows of a macOS ``ps -ef`` listing (``UID PID PPID C STIME TTY TIME CMD``) as
    :class:`MacProcess` (``path``: the command, which for WebKit's services is the bare
    executable path: they take no arguments). Header, comment (``#``) and other lines are skipped."""
    out = []
    for line in text.splitlines():
        m = _PS_EF.match(line)
        if m and not line.lstrip().startswith("#"):
            out.append(MacProcess(int(m["pid"]), int(m["ppid"]), m["cmd"]))
    return out


@dataclass
class SessionProcesses:
    """Which processes a Safari session's memory samples cover: ``labels`` maps pid → process
    type; ``content`` lists the automation tab's content process(es); ``how`` says in one line
    how they were told apart (recorded with the run)."""

    labels: dict[int, str]
    content: list[int]
    how: str


def select_session(procs: list[MacProcess], before: set[int], session_start: float | None = None,
                   build: str = "system") -> SessionProcesses:
    """Tell the automation tab's web content process apart from the others.

    ``procs``: Safari-related processes now (after the session opened its first page);
    ``before``: pids that existed before the WebDriver session was created; ``session_start``:
    when it was created (epoch s); ``build``: which WebKit drives the session (:func:`webkit_build`).

    Rules, in order (the research notes of issue 13; no published method exists):

    1. only processes of ``build``'s WebKit;
    2. where responsibility is known (:func:`responsible_pid`), only processes whose responsible
       app is a Safari UI process of that build (other apps' web views use the same services);
    3. the automation tab's content process is a WebContent process that did not exist before the
       session (safaridriver opens its automation window in a new tab; WebKit keeps one prewarmed
       spare, which may have been started just before: a pid created after ``session_start`` counts
       as new even if listed in ``before``). Other WebContent processes are labelled
       :data:`OTHER_CONTENT`; the GPU and network processes are shared by every tab of that Safari
       (WebKit ``GPUProcessProxy::getOrCreate`` keeps one per UI process).

    When no WebContent process is new, every candidate is labelled WebContent and ``how`` says
    the tab could not be told apart.
    """
    mine = [p for p in procs if p.label and p.label != "safaridriver" and p.build == build]
    safari = {p.pid for p in mine if p.label == "Safari"}
    if any(p.responsible_pid is not None for p in mine):
        mine = [p for p in mine if p.label == "Safari" or p.responsible_pid in safari]
    contents = [p for p in mine if p.label == "WebContent"]

    def new(p: MacProcess) -> bool:
        return p.pid not in before or (session_start is not None and p.create_time is not None
                                       and p.create_time >= session_start)

    fresh = [p.pid for p in contents if new(p)]
    labels = {p.pid: p.label for p in mine}
    if fresh:
        for p in contents:
            if p.pid not in fresh:
                labels[p.pid] = OTHER_CONTENT
        how = (f"automation tab's content process: {len(fresh)} WebContent process(es) new since the session "
               f"started, {len(contents) - len(fresh)} other(s) labelled {OTHER_CONTENT}")
        return SessionProcesses(labels, fresh, how)
    how = (f"could not tell the automation tab apart: no WebContent process is new since the session started; "
           f"all {len(contents)} labelled WebContent")
    return SessionProcesses(labels, [p.pid for p in contents], how)


def snapshot() -> list[MacProcess]:
    """Safari-related processes of this Mac now (psutil): executable from ``exe()``, else
    ``argv[0]``, else the kernel's name; responsibility where the private libSystem call is
    available. Unverified here (needs macOS)."""
    import psutil

    out = []
    for p in psutil.process_iter(["pid", "ppid", "name", "exe", "cmdline", "create_time"]):
        info = p.info
        path = info.get("exe") or ((info.get("cmdline") or [None])[0]) or info.get("name") or ""
        if classify(path) is None:
            continue
        out.append(MacProcess(info["pid"], info.get("ppid") or 0, path, info.get("create_time"),
                              responsible_pid(info["pid"])))
    return out


def responsible_pid(pid: int) -> int | None:
    """The pid launchd holds responsible for ``pid`` (Safari for its WebKit services), through
    the private ``responsibility_get_pid_responsible_for_pid`` of libSystem (the way Activity
    Monitor-like tools attribute XPC services, e.g. exelban/stats ``Modules/RAM/readers.swift``).
    None off macOS or when the call is missing or fails. Unverified here (needs macOS)."""
    if platform.system() != "Darwin":
        return None
    try:
        fn = ctypes.CDLL(None).responsibility_get_pid_responsible_for_pid
    except (OSError, AttributeError):
        return None
    fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_int]
    got = fn(pid)
    return got if got > 0 else None
