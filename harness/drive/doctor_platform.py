"""``doctor``'s second table: what the harness can measure beside the browser on this machine
(per-process memory: psutil, or physical footprint on macOS; Safari's processes), what it needs
for phones (``--https`` certificates, QR codes) and for remote browsers (a WebDriver, Playwright
or DevTools endpoint answering; a Selenium Grid jar and Java for the Grid test). Each check is a
function returning ``(what, ok, detail)``; nothing here launches a browser.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import socket
import subprocess
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

Row = tuple[str, bool, str]


def process_memory() -> Row:
    """How per-process memory is read here, tried on this process."""
    import psutil

    me = psutil.Process()
    if platform.system() == "Darwin":
        from harness.probe import footprint

        got = footprint.read(me.pid)
        if got is None:
            return ("per-process memory", False, "proc_pid_rusage failed on this process: physical footprint "
                                                 "unavailable, RSS only (psutil)")
        detail = f"physical footprint via proc_pid_rusage: this process {got[0] / 2**20:.1f} MiB"
        check = _footprint_tool(me.pid)
        return ("per-process memory", True, detail + (f"; footprint(1) says {check / 2**20:.1f} MiB" if check else ""))
    try:
        uss = me.memory_full_info().uss
        return ("per-process memory", True, f"RSS and USS via psutil: this process USS {uss / 2**20:.1f} MiB")
    except Exception as exc:  # psutil.AccessDenied on some systems
        return ("per-process memory", True, f"RSS via psutil (USS unavailable: {type(exc).__name__})")


def _footprint_tool(pid: int) -> int | None:
    """``footprint -f bytes -p PID`` (macOS) as a cross-check of proc_pid_rusage; None if absent."""
    from harness.probe.footprint import parse_footprint

    if shutil.which("footprint") is None:
        return None
    try:
        out = subprocess.run(["footprint", "-f", "bytes", "-p", str(pid)], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = [p for p in parse_footprint(out) if p["pid"] == pid]
    return found[0]["footprint_bytes"] if found else None


def safari_processes() -> Row:
    """Safari's processes found by name now (macOS), by type."""
    if platform.system() != "Darwin":
        return ("Safari's processes", False, f"macOS only (this is {platform.system()}); a Safari elsewhere: "
                                             "--webdriver-url to a safaridriver or Grid node on that Mac")
    from harness.drive import macos

    procs = macos.snapshot()
    counts: dict[str, int] = {}
    for p in procs:
        counts[p.label] = counts.get(p.label, 0) + 1
    found = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "none running now"
    known = sum(p.responsible_pid is not None for p in procs)
    return ("Safari's processes", True, f"found by name: {found}; responsibility known for {known} of {len(procs)}; "
                                        "enable automation once with `safaridriver --enable`")


def https_certificates() -> Row:
    from harness.serve import tls

    detail = tls.describe()
    return ("serve --https", not detail.startswith("the Python package"), detail)


def qr_codes() -> Row:
    try:
        import segno
    except ImportError:
        return ("QR codes", False, "pip install segno (serve prints the URL only)")
    return ("QR codes", True, f"segno {segno.__version__}")


def selenium_grid() -> Row:
    """A Selenium Grid standalone jar (scripts/selenium-grid.sh) and Java, for the Grid test."""
    java = shutil.which("java")
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "webgpu-harness" / "selenium"
    jar = os.environ.get("SELENIUM_SERVER_JAR") or next(iter(sorted(cache.glob("selenium-server-*.jar"))[-1:]), None)
    if java and jar:
        return ("Selenium Grid (tests)", True, f"{jar} with {java}")
    missing = [x for x, have in (("java 17+", java), ("the jar: scripts/selenium-grid.sh", jar)) if not have]
    return ("Selenium Grid (tests)", False, "missing " + " and ".join(missing) + " (the Grid e2e test is skipped)")


def endpoint(kind: str, url: str, timeout: float = 10) -> Row:
    """Whether a remote endpoint answers: a WebDriver server's ``/status`` (ready, message), a
    DevTools endpoint's ``/json/version`` (browser), a Playwright server's port."""
    what = {"webdriver": "--webdriver-url", "playwright": "--connect", "cdp": "--cdp-url"}[kind] + " " + url
    try:
        if kind == "webdriver":
            with urllib.request.urlopen(url.rstrip("/") + "/status", timeout=timeout) as r:
                v = json.loads(r.read()).get("value", {})
            return (what, bool(v.get("ready")), f"ready={v.get('ready')}: {v.get('message', '')}")
        if kind == "cdp":
            base = url.replace("ws://", "http://").replace("wss://", "https://").split("/devtools")[0]
            with urllib.request.urlopen(base.rstrip("/") + "/json/version", timeout=timeout) as r:
                v = json.loads(r.read())
            return (what, True, f"{v.get('Browser')} (protocol {v.get('Protocol-Version')})")
        parts = urlsplit(url)
        with socket.create_connection((parts.hostname, parts.port or 80), timeout=timeout):
            return (what, True, "port open (Playwright server; needs --unsafe for the harness's launch options)")
    except Exception as exc:
        return (what, False, f"not answering: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")


def rows(endpoints: list[tuple[str, str]] | None = None) -> list[Row]:
    """Every check, in order; ``endpoints``: (kind, url) pairs to check as well. The Selenium
    Grid row is the test suite's (tests/e2e/test_remote.py): shown in a clone only, where the
    tests are."""
    from harness import locations

    grid = [selenium_grid()] if locations.clone_root() is not None else []
    out = [process_memory(), safari_processes(), https_certificates(), qr_codes(), *grid]
    return out + [endpoint(k, u) for k, u in endpoints or []]
