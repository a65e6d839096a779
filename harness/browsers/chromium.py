"""Chromium through Playwright's Python API.

Playwright's own browser download is unavailable on our machines, so the driver launches the
system Chromium (Debian package ``chromium``: ``/usr/bin/chromium``) via ``executable_path``;
``--browser-path`` overrides it and a Playwright-installed Chromium is used when one exists.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from harness.browsers import processes
from harness.browsers.base import BrowserDriver, BrowserNotFound, BrowserSession, Located, ProcessInfo

#: Flags for every launch. ``--enable-unsafe-webgpu`` exposes WebGPU on Linux (SwiftShader on
#: CPU-only machines); the two network flags keep Chromium from reaching out on a closed
#: network; ForceEagerMeasureMemory makes performance.measureUserAgentSpecificMemory() resolve
#: at once instead of at the next GC (Chromium's measure-memory explainer).
CHROMIUM_FLAGS = [
    "--enable-unsafe-webgpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--enable-blink-features=ForceEagerMeasureMemory",
    "--no-first-run",
    "--disable-sync",
]

SYSTEM_PATHS = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
INSTALL_HINT = "install Debian's Chromium: sudo apt-get update && sudo apt-get install -y chromium (or pass --browser-path)"


class ChromiumSession(BrowserSession):
    """A Playwright browser: Chromium (``engine="chromium"``, with CDP for the worker's heap) or
    a Playwright-installed WebKit (``engine="webkit"``; no CDP, WebKit process names)."""

    def __init__(self, located: Located, headed: bool, args: list[str], engine: str = "chromium"):
        from playwright.sync_api import sync_playwright

        self.engine = engine
        before = {p.pid for p in processes.descendants()}
        self._pw = sync_playwright().start()
        try:
            if engine == "webkit":
                self._browser = self._pw.webkit.launch(headless=not headed, args=args)
            else:
                self._browser = self._pw.chromium.launch(
                    executable_path=located.executable, headless=not headed, args=args)
        except Exception as exc:
            self._pw.stop()
            raise RuntimeError(f"could not launch {located.executable}: {str(exc).splitlines()[0]}") from exc
        self.version = self._browser.version
        new = [p for p in processes.descendants() if p.pid not in before]
        if engine == "webkit":  # the first process Playwright's driver started for this browser
            self._root = next((p for p in new if "node" not in p.name().lower()), None)
        else:
            self._root = next((p for p in new if processes.chrome_type(p) == "browser"
                               and "chrom" in p.name().lower()), None)
        self._death: str | None = None
        self._browser.on("disconnected", lambda *_: self._set_death("browser disconnected (the browser process exited or was killed)"))
        self._context = None
        self._page = None
        self._cdp = self._browser.new_browser_cdp_session() if engine == "chromium" else None
        if self._cdp is not None:
            self._cdp.on("Target.receivedMessageFromTarget", self._on_target_message)
        self._worker_session: str | None = None
        self._heap: dict[str, int] | None = None
        self._msg_id = 0

    def _set_death(self, why: str) -> None:
        if self._death is None:
            self._death = why

    def open(self, url: str) -> None:
        if self._context is not None:
            self._context.close()
        self._worker_session = None
        self._heap = None
        self._context = self._browser.new_context()
        self._page = self._context.new_page()
        self._page.on("crash", lambda *_: self._set_death("renderer crashed (page crash event)"))
        self._page.goto(url)

    def evaluate(self, expression: str):
        return self._page.evaluate(expression)

    def pump(self, seconds: float) -> None:
        if self._death:
            return
        try:
            if self._page is not None and not self._page.is_closed():
                self._page.wait_for_timeout(seconds * 1000)
            else:
                self._browser.contexts  # touch the connection
        except Exception as exc:  # connection gone mid-wait
            self._set_death(f"browser connection lost: {str(exc).splitlines()[0]}")

    def dead(self) -> str | None:
        if self._death is None and self._root is not None and not self._root.is_running():
            self._set_death("browser process exited")
        return self._death

    def processes(self) -> list[ProcessInfo]:
        if self._root is None or not self._root.is_running():
            return []
        procs = [self._root] + processes.descendants(self._root.pid)
        if self.engine == "webkit":
            from harness.browsers.webdriver import webkit_process_type

            return [ProcessInfo(p.pid, webkit_process_type(p)) for p in procs]
        return [ProcessInfo(p.pid, processes.chrome_type(p)) for p in procs]

    # --- JS heap of the worker via CDP (Runtime.getHeapUsage on the worker target) ---
    def _on_target_message(self, event: dict) -> None:
        try:
            msg = json.loads(event.get("message", "{}"))
        except ValueError:
            return
        result = msg.get("result")
        if result and "usedSize" in result:
            self._heap = {"used_bytes": int(result["usedSize"]), "total_bytes": int(result["totalSize"])}

    def worker_heap(self) -> dict[str, int] | None:
        if self._death or self._cdp is None:
            return None
        try:
            if self._worker_session is None:
                targets = self._cdp.send("Target.getTargets")["targetInfos"]
                worker = next((t for t in targets if t["type"] == "worker" and "/web/worker.js" in t["url"]), None)
                if worker is None:
                    return None
                self._worker_session = self._cdp.send(
                    "Target.attachToTarget", {"targetId": worker["targetId"], "flatten": False})["sessionId"]
            self._msg_id += 1
            self._cdp.send("Target.sendMessageToTarget", {
                "sessionId": self._worker_session,
                "message": json.dumps({"id": self._msg_id, "method": "Runtime.getHeapUsage"})})
        except Exception:
            self._worker_session = None
        return self._heap

    def close(self) -> None:
        for step in (lambda: self._browser.close(), lambda: self._pw.stop()):
            try:
                step()
            except Exception:
                pass


class ChromiumDriver(BrowserDriver):
    name = "chromium"
    description = "Chromium via Playwright (system Chromium through executable_path)"

    def locate(self, browser_path: str | None = None) -> Located:
        if browser_path:
            if not Path(browser_path).exists():
                raise BrowserNotFound(f"--browser-path {browser_path} does not exist; {INSTALL_HINT}")
            return Located(self.name, browser_path, "playwright")
        try:
            import playwright  # noqa: F401
        except ImportError as exc:
            raise BrowserNotFound("the Python package playwright is missing: pip install playwright") from exc
        pw_path = _playwright_chromium()
        if pw_path:
            return Located(self.name, pw_path, "playwright", ["Playwright-installed Chromium"])
        for path in SYSTEM_PATHS:
            if Path(path).exists():
                return Located(self.name, path, "playwright", ["system Chromium"])
        found = shutil.which("chromium")
        if found:
            return Located(self.name, found, "playwright", ["system Chromium"])
        raise BrowserNotFound(f"Chromium not found; {INSTALL_HINT}")

    def launch(self, located: Located, headed: bool = False, extra_args: list[str] | None = None,
               without_args: list[str] | None = None) -> ChromiumSession:
        args = [a for a in CHROMIUM_FLAGS if a not in (without_args or [])] + list(extra_args or [])
        return ChromiumSession(located, headed, args)


def _playwright_chromium() -> str | None:
    """Path of a Playwright-downloaded Chromium if one is installed, without starting one."""
    cache = Path.home() / ".cache" / "ms-playwright"
    for exe in sorted(cache.glob("chromium-*/chrome-linux*/chrome"), reverse=True):
        if exe.exists():
            return str(exe)
    return None
