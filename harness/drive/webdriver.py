"""Transport: a browser driven through W3C WebDriver (Selenium; one session class).

WebKitGTK's MiniBrowser (harness/drive/webkit.py) and Safari (harness/drive/safari.py) share
this session; only how the driver is started differs. Nothing here uses CDP: probes reach the
worker through the worker bootstrap, and memory is sampled from the process tree of the
WebDriver server (psutil).
"""

from __future__ import annotations

import time

import psutil

from harness.drive import processes
from harness.drive.base import BrowserSession, ProcessInfo
from harness.drive.reaper import REAPER
from harness.drive.xvfb import Xvfb

#: Seconds any single WebDriver command may take before it is cut and the cell recorded failed.
COMMAND_TIMEOUT_S = 60
#: Seconds to wait, when a page or web process is gone, for a dying display or driver to show.
UPSTREAM_GRACE_S = 0.5


class WebDriverSession(BrowserSession):
    """A Selenium session. ``driver_pid`` roots the process tree (WebDriver server → browser →
    web content, GPU and network processes)."""

    def __init__(self, driver, name: str, xvfb: Xvfb | None = None, service=None):
        self._driver = driver
        self._service = service
        self._xvfb = xvfb
        self.name = name
        self.version = str(driver.capabilities.get("browserVersion", ""))
        try:
            driver.command_executor.client_config.timeout = COMMAND_TIMEOUT_S
        except AttributeError:
            pass
        driver.set_page_load_timeout(COMMAND_TIMEOUT_S)
        driver.set_script_timeout(COMMAND_TIMEOUT_S)
        proc = getattr(service or getattr(driver, "service", None), "process", None)
        self._root = psutil.Process(proc.pid) if proc else None
        self._death: str | None = None
        self._page_pid: int | None = None

    def open(self, url: str) -> None:
        self._page_pid = None
        try:
            self._call(lambda: self._driver.get(url))
        finally:  # a navigation may swap web processes: never a process list found before it
            processes.forget(self._root.pid if self._root else None)

    def page_process(self) -> int | None:
        """Pid of the web content process that hosts the open page's worker: the
        WebKitWebProcess with a ``WebCore: Worker`` thread (WebKit names a dedicated worker's
        thread so; Linux ``/proc/<pid>/task/*/comm``). Other web processes (a prewarmed or
        suspended one) do not count. None until the worker started, or where threads cannot be
        read (macOS, a cell on the page's main thread)."""
        if self._page_pid is not None or self._root is None:
            return self._page_pid
        for p in processes.descendants(self._root.pid):
            if processes.webkit_process_type(p) == "WebKitWebProcess" and "WebCore: Worker" in processes.thread_names(p):
                self._page_pid = p.pid
                break
        return self._page_pid

    def page_object(self):
        return self._driver

    def _call(self, fn):
        try:
            return fn()
        except Exception as exc:
            if self._death is None:
                self._death = f"WebDriver command failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            raise

    def evaluate(self, expression: str):
        return self._call(lambda: self._driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            f"Promise.resolve({expression}).then(done, (e) => done('error: ' + e));"))

    def read_clock(self) -> float | None:
        """As :meth:`BrowserSession.read_clock`, with a synchronous script and outside
        ``_call``: a failure here (the page navigating) says nothing about the browser."""
        try:
            v = self._driver.execute_script(f"return {self.CLOCK_EXPRESSION};")
        except Exception:
            return None
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    def pump(self, seconds: float) -> None:
        time.sleep(seconds)

    def _upstream_death(self) -> str | None:
        """The display or the driver gone: what takes the browser and its pages down with it."""
        xvfb = self._xvfb.proc if self._xvfb is not None else None
        if xvfb is not None and (xvfb.poll() is not None or not processes.running(xvfb.pid)):
            return f"Xvfb (the browser's X display, pid {xvfb.pid}) exited"
        if self._root is not None and (not self._root.is_running() or processes.zombie(self._root)):
            return f"the WebDriver server ({self.name}'s driver, pid {self._root.pid}) exited"
        return None

    def _symptom(self) -> str | None:
        """The page's process, every web process, or the browser gone."""
        if self._page_pid is not None and not processes.running(self._page_pid):
            return (f"the web content process hosting the page (WebKitWebProcess pid {self._page_pid}) exited "
                    "(crashed or was killed)")
        if self._root is not None:
            kids = processes.descendants(self._root.pid)
            if not any(processes.webkit_process_type(p) in ("WebKitWebProcess", "WebContent") for p in kids):
                return "web content process exited (crashed or was killed)"
            if self.name == "webkit" and not any(processes.webkit_process_type(p) == "MiniBrowser" for p in kids):
                return "MiniBrowser (the browser process) exited"
        return None

    def dead(self) -> str | None:
        if self._death:
            return self._death
        why = self._upstream_death()
        if why is None:
            symptom = self._symptom()
            if symptom:
                # a killed display or driver takes its children down while it is still dying
                # itself (on a busy machine for a while): look again before blaming the child
                time.sleep(UPSTREAM_GRACE_S)
                why = self._upstream_death() or symptom
        self._death = why
        if self._death is None:
            self.page_process()  # found once the page's worker runs
        return self._death

    def processes(self) -> list[ProcessInfo]:
        if self._root is None:
            return []
        return [ProcessInfo(p.pid, processes.webkit_process_type(p))
                for p in processes.descendants(self._root.pid, processes.DISCOVERY_S)]

    def close(self) -> None:
        try:
            self._driver.quit()
        except Exception:
            pass
        if self._service is not None:
            try:
                self._service.stop()
            except Exception:
                pass
        if self._root is not None:
            for p in [self._root] + processes.descendants(self._root.pid):
                try:
                    p.kill()
                except psutil.Error:
                    pass
            REAPER.end(self._root.pid, grace_s=1)  # and anything of its group that left the tree
        if self._xvfb:
            self._xvfb.stop()
