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
from harness.drive.xvfb import Xvfb

#: Seconds any single WebDriver command may take before it is cut and the cell recorded failed.
COMMAND_TIMEOUT_S = 60


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

    def open(self, url: str) -> None:
        self._call(lambda: self._driver.get(url))

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

    def pump(self, seconds: float) -> None:
        time.sleep(seconds)

    def dead(self) -> str | None:
        if self._death:
            return self._death
        if self._root is not None and (not self._root.is_running() or processes.zombie(self._root)):
            self._death = "WebDriver server exited"
        elif self._root is not None:
            kids = processes.descendants(self._root.pid)
            if not any(processes.webkit_process_type(p) in ("WebKitWebProcess", "WebContent") for p in kids):
                self._death = "web content process exited (crashed or was killed)"
        return self._death

    def processes(self) -> list[ProcessInfo]:
        if self._root is None:
            return []
        return [ProcessInfo(p.pid, processes.webkit_process_type(p)) for p in processes.descendants(self._root.pid)]

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
        if self._xvfb:
            self._xvfb.stop()
