"""Transport: a browser driven through Playwright's Python API (one session class).

Used by the Chromium family (system Chromium through ``executable_path``, with the DevTools
protocol for the worker's JS heap) and by a Playwright-installed WebKit build. Families decide
what to launch (harness/drive/chromium.py, webkit.py); this module only drives it.
"""

from __future__ import annotations

import json

from harness.drive import processes
from harness.drive.base import BrowserSession, Located, ProcessInfo


class PlaywrightSession(BrowserSession):
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
        #: the worker whose heap :meth:`worker_heap` reads: the first target whose URL contains this
        self.heap_worker_url = "/web/worker.js"

    def _set_death(self, why: str) -> None:
        if self._death is None:
            self._death = why

    def open(self, url: str, before_goto=None) -> None:
        """``before_goto(browser, context)``, when given, runs in the new context before the
        page navigates (``app --inject cdp``: harness/drive/inject.py attaches there)."""
        if self._context is not None:
            self._context.close()
        self._worker_session = None
        self._heap = None
        self._context = self._browser.new_context()
        if before_goto is not None:
            before_goto(self._browser, self._context)
        self._page = self._context.new_page()
        self._page.on("crash", lambda *_: self._set_death("renderer crashed (page crash event)"))
        self._page.goto(url)

    def page_object(self):
        return self._page

    def watch_worker(self, url: str) -> None:
        if url != self.heap_worker_url:
            self.heap_worker_url, self._worker_session, self._heap = url, None, None

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
            return [ProcessInfo(p.pid, processes.webkit_process_type(p)) for p in procs]
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
                worker = next((t for t in targets if t["type"] == "worker" and self.heap_worker_url in t["url"]), None)
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
