"""Finding a remote browser's processes, when they happen to be on this machine.

A browser reached through an endpoint (harness/drive/remote.py) is not a child of the harness.
When the endpoint's host is this machine, its processes can still be found, and their memory
sampled like a local browser's:

- Chrome/Chromium/Edge behind WebDriver (chromedriver, or a Grid node): the session's
  capabilities name its profile folder (``chrome.userDataDir``); the browser process is the one
  whose command line has ``--user-data-dir=<that folder>`` and no ``--type``.
- Chromium behind Playwright or CDP: the browser lists its own processes
  (``SystemInfo.getProcessInfo`` on the browser target); the browser-type pid is verified on
  this machine.
- Safari behind a safaridriver on this Mac: by name (harness/drive/macos.py).
- Anything else behind WebDriver (WebKitWebDriver, geckodriver): the processes under the server
  that listens on the endpoint's port.

Otherwise a finder has ``scope == ""`` and ``why`` says why per-process memory is not
measurable; it then lists no processes, and nothing (never a 0) is recorded.
"""

from __future__ import annotations

import ipaddress
import platform
import socket
import time
from urllib.parse import urlsplit

import psutil

from harness.drive import macos, processes
from harness.drive.base import ProcessInfo

#: Processes under a WebDriver server that are drivers, not the browser.
DRIVER_NAMES = ("chromedriver", "msedgedriver", "WebKitWebDriver", "safaridriver", "geckodriver", "java")


def local_addresses() -> set[str]:
    """Every IP address of this machine's interfaces (psutil)."""
    return {a.address.split("%")[0] for addrs in psutil.net_if_addrs().values() for a in addrs
            if a.family in (socket.AF_INET, socket.AF_INET6)}


def is_local(url: str) -> bool:
    """Whether ``url``'s host is this machine: a loopback address, ``localhost``, or a name or
    address that resolves to one of :func:`local_addresses`."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        addrs = {ai[4][0] for ai in socket.getaddrinfo(host, None)}
    except (OSError, UnicodeError):
        return False
    mine = local_addresses()
    return any(ipaddress.ip_address(a.split("%")[0]).is_loopback or a in mine for a in addrs)


def label(proc: psutil.Process) -> str:
    """memory.csv process type: Chrome's ``--type`` for Chromium processes, else WebKit's
    process name (harness/drive/processes.py)."""
    try:
        name = proc.name().lower()
    except psutil.Error:
        return "unknown"
    driver = next((n for n in DRIVER_NAMES if name.startswith(n.lower()[:15])), None)
    if driver:
        return driver
    if "chrom" in name or "msedge" in name or any(a.startswith("--type=") for a in processes.cmdline(proc)):
        return processes.chrome_type(proc)
    return processes.webkit_process_type(proc)


class Finder:
    """Finds nothing: ``why`` says why (the base of every finder)."""

    scope = ""

    def __init__(self, why: str = ""):
        self.why = why

    def locate(self) -> None:
        """Look for the browser once its first page is open (sets ``scope`` or ``why``)."""

    def processes(self) -> list[ProcessInfo]:
        return []


class TreeFinder(Finder):
    """The processes under one root pid found by :meth:`find_root` (subclasses)."""

    described = ""

    def __init__(self, why: str = ""):
        super().__init__(why)
        self.root: psutil.Process | None = None

    def find_root(self) -> psutil.Process | None:
        raise NotImplementedError

    def locate(self) -> None:
        self.root = self.find_root()
        if self.root is not None and self.processes():
            self.scope = self.described
        else:
            self.scope = ""

    def members(self) -> list[psutil.Process]:
        return [self.root] + processes.descendants(self.root.pid)

    def processes(self) -> list[ProcessInfo]:
        if self.root is None or not self.root.is_running():
            return []
        return [ProcessInfo(p.pid, label(p)) for p in self.members() if not processes.zombie(p)]


class UserDataDirFinder(TreeFinder):
    """Chrome/Chromium/Edge on this machine, by its profile folder."""

    def __init__(self, folder: str):
        super().__init__(f"no browser process with --user-data-dir={folder} on this machine (a container?)")
        self.folder = folder
        self.described = f"this machine's browser with --user-data-dir={folder} (WebDriver capabilities)"

    def find_root(self) -> psutil.Process | None:
        flag = f"--user-data-dir={self.folder}"
        for p in psutil.process_iter():
            args = processes.cmdline(p)
            if flag in args and not any(a.startswith("--type=") for a in args):
                return p
        return None


class ListenerFinder(TreeFinder):
    """The processes under the WebDriver server listening on ``port`` of this machine (drivers
    themselves left out)."""

    def __init__(self, port: int):
        super().__init__(f"no browser process under the server on port {port} of this machine "
                         "(a Grid relay, or a server in a container?)")
        self.port = port
        self.described = f"the processes under the WebDriver server on port {port} of this machine"

    def find_root(self) -> psutil.Process | None:
        try:
            conns = psutil.net_connections("tcp")
        except psutil.Error:
            return None
        pid = next((c.pid for c in conns if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == self.port
                    and c.pid), None)
        try:
            return psutil.Process(pid) if pid else None
        except psutil.Error:
            return None

    def members(self) -> list[psutil.Process]:
        return [p for p in processes.descendants(self.root.pid) if label(p) not in DRIVER_NAMES]


class SafariFinder(Finder):
    """Safari behind a safaridriver on this Mac: its processes by name (harness/drive/macos.py)."""

    def __init__(self, before: set[int], started: float):
        super().__init__("")
        self.before, self.started, self.how = before, started, ""

    def locate(self) -> None:
        self.scope = "Safari's processes found by name on this Mac" if self.processes() else ""
        self.why = "" if self.scope else "no Safari process found on this Mac"

    def processes(self) -> list[ProcessInfo]:
        sel = macos.select_session(macos.snapshot(), self.before, self.started)
        self.how = sel.how
        return [ProcessInfo(pid, lab) for pid, lab in sel.labels.items()]


class CdpFinder(TreeFinder):
    """Chromium behind Playwright or CDP: the browser's own process list
    (``SystemInfo.getProcessInfo``), when its browser process is on this machine."""

    def __init__(self, url: str, cdp):
        super().__init__("")
        self.url, self.cdp = url, cdp
        self.described = "the browser's own process list (SystemInfo.getProcessInfo), pids on this machine"

    def find_root(self) -> psutil.Process | None:
        host = urlsplit(self.url).hostname
        try:
            info = self.cdp.send("SystemInfo.getProcessInfo")["processInfo"]
        except Exception as exc:
            self.why = f"SystemInfo.getProcessInfo failed: {str(exc).splitlines()[0] if str(exc) else exc}"
            return None
        pid = next((int(i["id"]) for i in info if i.get("type") == "browser"), None)
        if not is_local(self.url):
            self.why = f"the browser runs on {host}, another machine ({len(info)} processes listed by the browser)"
            return None
        try:
            proc = psutil.Process(pid) if pid else None
        except psutil.Error:
            proc = None
        if proc is None or processes.chrome_type(proc) != "browser" or "chrom" not in proc.name().lower():
            self.why = f"the browser's pid {pid} is not a Chromium browser process on this machine (a container?)"
            return None
        return proc


def before_session(url: str, capabilities: dict) -> tuple[set[int], float]:
    """Taken just before a WebDriver session is requested: the Safari pids already on this Mac
    (only for a safaridriver on this Mac) and the time (epoch s)."""
    started = time.time()
    if platform.system() == "Darwin" and is_local(url) and "safari" in str(capabilities.get("browserName", "")).lower():
        return {p.pid for p in macos.snapshot()}, started
    return set(), started


def webdriver_finder(url: str, caps: dict, before: tuple[set[int], float] = (set(), 0.0)) -> Finder:
    """The finder of a WebDriver session at ``url`` whose returned capabilities are ``caps``."""
    host = urlsplit(url).hostname
    if not is_local(url):
        return Finder(f"the WebDriver endpoint is on {host}, another machine")
    for key in ("chrome", "msedge"):
        folder = (caps.get(key) or {}).get("userDataDir") if isinstance(caps.get(key), dict) else None
        if folder:
            return UserDataDirFinder(folder)
    if "safari" in str(caps.get("browserName", "")).lower():
        if platform.system() == "Darwin":
            return SafariFinder(*before)
        return Finder(f"Safari's endpoint {host} resolves to this machine, which is not a Mac (a tunnel?)")
    return ListenerFinder(urlsplit(url).port or (443 if url.startswith("https") else 80))


def cdp_finder(url: str, cdp) -> Finder:
    """The finder of a Playwright/CDP session: the browser's own process list when ``cdp`` (a
    browser-target CDP session) exists, else nothing (WebKit over Playwright has no such list)."""
    if cdp is None:
        return Finder("a WebKit reached over Playwright's protocol lists no processes")
    return CdpFinder(url, cdp)
