"""Transport: a browser driven through Playwright's Python API (one session class).

Used by the Chromium family (system Chromium through ``executable_path``, with the DevTools
protocol for the worker's JS heap) and by a Playwright-installed WebKit build. Families decide
what to launch (harness/drive/chromium.py, webkit.py); this module only drives it.
"""

from __future__ import annotations

import json
import logging
import time

from harness.drive import processes
from harness.drive.base import BrowserSession, Located, ProcessInfo, interrupts_deferred
from harness.drive.reaper import REAPER


#: What Playwright's Python side says when its node driver went away (Ctrl-C reaches the driver,
#: which is in our process group, before us): playwright/_impl/_transport.py.
DRIVER_CLOSED = "Connection closed while reading from the driver"


class _DriverClosedFilter(logging.Filter):
    """Drops asyncio's "Future exception was never retrieved" for a Playwright future that failed
    only because the driver's connection closed (an interrupt, or a driver that died: the run
    says which process died, in one line of its own)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not (exc is not None and DRIVER_CLOSED in str(exc))


def quiet_driver_close() -> None:
    """Install :class:`_DriverClosedFilter` on the ``asyncio`` logger (once)."""
    log = logging.getLogger("asyncio")
    if not any(isinstance(f, _DriverClosedFilter) for f in log.filters):
        log.addFilter(_DriverClosedFilter())


class PlaywrightSession(BrowserSession):
    """A Playwright browser: Chromium (``engine="chromium"``, with CDP for the worker's heap) or
    a Playwright-installed WebKit (``engine="webkit"``; no CDP, WebKit process names)."""

    def __init__(self, located: Located, headed: bool, args: list[str], engine: str = "chromium",
                 channel: str | None = None, connect=None):
        """``channel``: a Playwright browser channel (``chrome``: installed Google Chrome) instead
        of ``located.executable``; ``connect(playwright) -> Browser``: reach a browser that runs
        elsewhere (harness/drive/remote.py) instead of launching one."""
        from playwright.sync_api import sync_playwright

        self.engine = engine
        quiet_driver_close()
        before = {p.pid for p in processes.descendants()}
        self._pw = sync_playwright().start()
        try:
            if connect is not None:
                self._browser = connect(self._pw)
            elif engine == "webkit":
                self._browser = self._pw.webkit.launch(headless=not headed, args=args)
            else:
                where = {"channel": channel} if channel else {"executable_path": located.executable}
                self._browser = self._pw.chromium.launch(headless=not headed, args=args, **where)
        except BaseException as exc:  # Ctrl-C during a launch too: stop the driver and its browser
            try:
                self._pw.stop()
            except Exception:
                pass
            if not isinstance(exc, Exception):
                raise
            verb = "reach" if connect is not None else "launch"
            raise RuntimeError(f"could not {verb} {located.endpoint or located.executable}: {str(exc).splitlines()[0]}") from exc
        self.version = self._browser.version
        new = [p for p in processes.descendants() if p.pid not in before]
        if connect is not None:  # not launched here: no process tree of ours (remote.py finds them)
            self._root = None
        elif engine == "webkit":  # the first process Playwright's driver started for this browser
            self._root = next((p for p in new if "node" not in p.name().lower()), None)
        else:
            self._root = next((p for p in new if processes.chrome_type(p) == "browser"
                               and "chrom" in p.name().lower()), None)
        # Playwright's node driver (in our process group) and the browser, which Playwright
        # starts detached, in a group of its own: the reaper ends both whatever happens to us
        self._node = next((p for p in new if "node" in p.name().lower()), None)
        REAPER.track(self._node.pid if self._node else None, "playwright driver (node)")
        REAPER.track(self._root.pid if self._root else None, f"{engine} browser", group=True)
        self._death: str | None = None
        self._browser.on("disconnected", lambda *_: self._set_death("browser disconnected (the browser process exited or was killed)"))
        self._context = None
        self._page = None
        #: keyword arguments of every new browser context (e.g. ignore_https_errors)
        self.context_options: dict = {}
        self._cdp = self._browser.new_browser_cdp_session() if engine == "chromium" else None
        if self._cdp is not None:
            self._cdp.on("Target.receivedMessageFromTarget", self._on_target_message)
        self._worker_session: str | None = None
        self._heap: dict[str, int] | None = None
        #: message id → time.monotonic() when a Runtime.getHeapUsage was sent
        self._heap_asked: dict[int, float] = {}
        self._msg_id = 0
        self._gc_pending: dict[int, object] = {}
        self._gc_done: list[tuple[object, bool, float]] = []
        #: the worker whose heap :meth:`worker_heap` reads: the first target whose URL contains this
        self.heap_worker_url = "/web/worker.js"

    def _set_death(self, why: str) -> None:
        if self._death is None:
            self._death = self._who_died() or why

    def _who_died(self) -> str | None:
        """The process whose death explains a lost connection: the driver, then the browser."""
        node, root = getattr(self, "_node", None), getattr(self, "_root", None)
        if node is not None and not processes.running(node.pid):
            return f"Playwright's driver (node, pid {node.pid}) exited"
        if root is not None and not processes.running(root.pid):
            return f"browser process (pid {root.pid}) exited"
        return None

    def open(self, url: str, before_goto=None) -> None:
        """``before_goto(browser, context)``, when given, runs in the new context before the
        page navigates (``app --inject cdp``: harness/drive/inject.py attaches there)."""
        if self._context is not None:
            self._context.close()
        self._worker_session = None
        self._heap = None
        self._gc_pending.clear()
        self._gc_done.clear()
        self._context = self._browser.new_context(**self.context_options)
        if before_goto is not None:
            before_goto(self._browser, self._context)
        self._page = self._context.new_page()
        self._page.on("crash", lambda *_: self._set_death("renderer crashed (page crash event)"))
        try:
            self._page.goto(url)
        finally:  # the new context's renderer: never a process list found before it
            processes.forget(self._root.pid if self._root else None)

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
        with interrupts_deferred():  # listeners run in here: a Ctrl-C is raised after, not in one
            try:
                if self._page is not None and not self._page.is_closed():
                    self._page.wait_for_timeout(seconds * 1000)
                else:
                    self._browser.contexts  # touch the connection
            except Exception as exc:  # connection gone mid-wait
                self._set_death(f"browser connection lost: {str(exc).splitlines()[0]}")

    def dead(self) -> str | None:
        if self._death is None:
            who = self._who_died()
            if who:
                self._set_death(who)
        return self._death

    def processes(self) -> list[ProcessInfo]:
        if self._root is None or not self._root.is_running():
            return []
        procs = [self._root] + processes.descendants(self._root.pid, processes.DISCOVERY_S)
        if self.engine == "chromium" and self._page is not None and not any(
                processes.chrome_type(p) == "renderer" for p in procs):  # a page has one: look again soon
            procs = [self._root] + processes.descendants(self._root.pid, processes.MISSING_S)
        if self.engine == "webkit":
            return [ProcessInfo(p.pid, processes.webkit_process_type(p)) for p in procs]
        return [ProcessInfo(p.pid, processes.chrome_type(p)) for p in procs]

    # --- JS heap of the worker via CDP (Runtime.getHeapUsage on the worker target) ---
    def _on_target_message(self, event: dict) -> None:
        try:
            msg = json.loads(event.get("message", "{}"))
        except ValueError:
            return
        if msg.get("id") in self._gc_pending:
            tag, then = self._gc_pending.pop(msg["id"])
            self._gc_done.append((tag, "error" not in msg, time.monotonic()))
            if then:  # at once, not at the next poll: a worker waiting at a checkpoint goes on
                self._worker_send("Runtime.evaluate", {"expression": then})
            return
        result = msg.get("result")
        asked = self._heap_asked.pop(msg.get("id"), None)
        if result and "usedSize" in result:
            # read by the worker between the ask and this answer: placed at the middle of the two
            now = time.monotonic()
            self._heap = {"used_bytes": int(result["usedSize"]), "total_bytes": int(result["totalSize"]),
                          "at_monotonic": (asked + now) / 2 if asked is not None else now}

    @property
    def no_devtools(self) -> str:
        return "" if self._cdp is not None else f"Playwright's {self.engine} has no DevTools protocol session"

    def _worker_send(self, method: str, params: dict | None = None) -> int | None:
        """Send ``method`` (with ``params``) to the workload worker's target (attached on first
        use; flatten off: answers arrive as Target.receivedMessageFromTarget). Returns the
        message id, None when there is no worker (yet)."""
        if self._death or self._cdp is None:
            return None
        with interrupts_deferred():  # CDP calls dispatch listeners too
            return self._worker_send_now(method, params)

    def _worker_send_now(self, method: str, params: dict | None = None) -> int | None:
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
                "message": json.dumps({"id": self._msg_id, "method": method, **({"params": params} if params else {})})})
            return self._msg_id
        except Exception:
            self._worker_session = None
            return None

    def worker_heap(self) -> dict[str, int] | None:
        """The latest answer (``used_bytes``, ``total_bytes``, ``at_monotonic``: when it was
        read, time.monotonic()), and a new question sent."""
        mid = self._worker_send("Runtime.getHeapUsage")
        if mid is not None:
            self._heap_asked[mid] = time.monotonic()
            if len(self._heap_asked) > 64:  # answers that never came (a worker gone)
                for k in sorted(self._heap_asked)[:-64]:
                    del self._heap_asked[k]
        return None if self._death else self._heap

    def collect_garbage(self, tag=None, then: str | None = None) -> bool:
        """HeapProfiler.collectGarbage on the worker target (a full, forced collection); its
        answer (the collection done) comes back through :meth:`collections_done` with ``tag``,
        and ``then`` (a JS expression) is evaluated in the same worker (Runtime.evaluate, on the
        same target session) from the listener that received the answer, not at the next poll."""
        mid = self._worker_send("HeapProfiler.collectGarbage")
        if mid is not None:
            self._gc_pending[mid] = (tag, then)
        return mid is not None

    def collections_done(self) -> list[tuple[object, bool, float]]:
        done, self._gc_done = self._gc_done, []
        return done

    def collections_pending(self) -> int:
        return len(self._gc_pending)

    def close(self) -> None:
        for step in (lambda: self._browser.close(), lambda: self._pw.stop()):
            try:
                step()
            except Exception:
                pass
        # whatever the driver did not end (a killed node driver leaves its browser running)
        REAPER.end(self._root.pid if self._root else None, grace_s=1)
        REAPER.end(self._node.pid if self._node else None, grace_s=1)
