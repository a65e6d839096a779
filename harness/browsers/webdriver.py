"""WebKit engines through W3C WebDriver (Selenium): WebKitGTK's MiniBrowser on Linux and Safari
on macOS share this session class; only how the driver is started differs.

Nothing here uses CDP: probes reach the worker through the worker bootstrap, and memory is
sampled from the process tree of the WebDriver server (psutil).
"""

from __future__ import annotations

import os
import platform
import shutil
import time
from pathlib import Path

import psutil

from harness.browsers import processes
from harness.browsers.base import BrowserDriver, BrowserNotFound, BrowserSession, Located, ProcessInfo
from harness.browsers.xvfb import Xvfb

#: Seconds any single WebDriver command may take before it is cut and the cell recorded failed.
COMMAND_TIMEOUT_S = 60

WEBKITGTK_DRIVER = "WebKitWebDriver"
MINIBROWSER_PATHS = [
    "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser",
    "/usr/lib/aarch64-linux-gnu/webkit2gtk-4.1/MiniBrowser",
    "/usr/libexec/webkit2gtk-4.1/MiniBrowser",
]
WEBKITGTK_HINT = "install WebKitGTK's WebDriver and MiniBrowser: sudo apt-get install -y webkit2gtk-driver xvfb"
SAFARI_HINT = ("Safari runs only on macOS: enable it once with `safaridriver --enable` "
               "(and Develop > Allow Remote Automation)")

#: WebKit process names → the label used in memory.csv.
WEBKIT_PROCESS_TYPES = {
    "MiniBrowser": "MiniBrowser", "WebKitWebProcess": "WebKitWebProcess",
    "WebKitGPUProcess": "WebKitGPUProcess", "WebKitNetworkProcess": "WebKitNetworkProcess",
    "Safari": "Safari", "com.apple.WebKit.WebContent": "WebContent", "com.apple.WebKit.GPU": "GPU",
    "com.apple.WebKit.Networking": "Networking", "safaridriver": "safaridriver",
    "WebKitWebDriver": "WebKitWebDriver",
}


def _zombie(proc: psutil.Process) -> bool:
    """A killed child not yet reaped still 'runs' for psutil: its status says otherwise."""
    try:
        return proc.status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return True


def webkit_process_type(proc: psutil.Process) -> str:
    try:
        name = proc.name()
    except psutil.Error:
        return "unknown"
    for key, label in WEBKIT_PROCESS_TYPES.items():
        if name.startswith(key[:15]):  # Linux truncates comm to 15 characters
            return label
    return name


def webkitgtk_options(minibrowser: str):
    """Selenium options for WebKitGTK: MiniBrowser in automation mode."""
    from selenium.webdriver.webkitgtk.options import Options

    opts = Options()
    opts.binary_location = minibrowser
    opts.add_argument("--automation")
    return opts


def safari_options():
    """Selenium options for Safari (safaridriver): a clean automation window, no tech preview."""
    from selenium.webdriver.safari.options import Options

    opts = Options()
    opts.automatic_inspection = False
    opts.automatic_profiling = False
    return opts


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
        if self._root is not None and (not self._root.is_running() or _zombie(self._root)):
            self._death = "WebDriver server exited"
        elif self._root is not None:
            kids = processes.descendants(self._root.pid)
            if not any(webkit_process_type(p) in ("WebKitWebProcess", "WebContent") for p in kids):
                self._death = "web content process exited (crashed or was killed)"
        return self._death

    def processes(self) -> list[ProcessInfo]:
        if self._root is None:
            return []
        return [ProcessInfo(p.pid, webkit_process_type(p)) for p in processes.descendants(self._root.pid)]

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


def playwright_webkit() -> str | None:
    """Folder of a Playwright-installed WebKit build (``playwright install webkit``), or None."""
    cache = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or Path.home() / ".cache" / "ms-playwright")
    for folder in sorted(cache.glob("webkit-*"), reverse=True):
        if (folder / "pw_run.sh").exists():
            return str(folder)
    return None


class WebKitGTKDriver(BrowserDriver):
    """``--browser webkit``: a Playwright WebKit build when one is installed (driven like
    Chromium, through Playwright), else WebKitGTK (Debian ``webkit2gtk-driver``):
    WebKitWebDriver + MiniBrowser under Xvfb."""

    name = "webkit"
    description = "Playwright WebKit if installed, else WebKitGTK MiniBrowser via WebKitWebDriver (Selenium) under Xvfb"

    def locate(self, browser_path: str | None = None) -> Located:
        pw = None if browser_path else playwright_webkit()
        if pw:
            return Located(self.name, pw, "playwright-webkit", ["Playwright WebKit build"])
        driver = shutil.which(WEBKITGTK_DRIVER)
        if driver is None:
            raise BrowserNotFound(f"{WEBKITGTK_DRIVER} not found; {WEBKITGTK_HINT}")
        exe = browser_path or next((p for p in MINIBROWSER_PATHS if Path(p).exists()), None)
        if exe is None or not Path(exe).exists():
            raise BrowserNotFound(f"MiniBrowser not found; {WEBKITGTK_HINT}")
        if not os.environ.get("DISPLAY") and not Xvfb.available():
            raise BrowserNotFound(f"no X display and no Xvfb; {WEBKITGTK_HINT}")
        return Located(self.name, exe, "selenium-webkitgtk", [f"driver {driver}", "WebKitGTK"])

    def launch(self, located: Located, headed: bool = False, extra_args=None, without_args=None):
        if located.driver == "playwright-webkit":
            from harness.browsers.chromium import ChromiumSession

            return ChromiumSession(located, headed, list(extra_args or []), engine="webkit")
        from selenium import webdriver
        from selenium.webdriver.remote.client_config import ClientConfig
        from selenium.webdriver.webkitgtk.service import Service

        xvfb = None
        env = dict(os.environ)
        if not headed or not env.get("DISPLAY"):
            xvfb = Xvfb()
            env["DISPLAY"] = xvfb.start()
        opts = webkitgtk_options(located.executable)
        for a in extra_args or []:
            opts.add_argument(a)
        service = Service(executable_path=shutil.which(WEBKITGTK_DRIVER), env=env)
        try:
            # Started by hand so that creating the session is bounded by COMMAND_TIMEOUT_S too
            # (a MiniBrowser that cannot reach its display would otherwise block forever).
            service.start()
            config = ClientConfig(remote_server_addr=service.service_url, timeout=COMMAND_TIMEOUT_S)
            driver = webdriver.Remote(command_executor=service.service_url, options=opts, client_config=config)
        except Exception as exc:
            service.stop()
            if xvfb:
                xvfb.stop()
            raise RuntimeError(f"WebKitWebDriver failed to start MiniBrowser: {str(exc).splitlines()[0]}") from exc
        return WebDriverSession(driver, self.name, xvfb, service)


class SafariDriver(BrowserDriver):
    """Safari on macOS through safaridriver (Selenium); same session code as WebKitGTK."""

    name = "safari"
    description = "Safari via safaridriver (Selenium), macOS only"

    def locate(self, browser_path: str | None = None) -> Located:
        if platform.system() != "Darwin":
            raise BrowserNotFound(f"--browser safari needs macOS with safaridriver (this is {platform.system()}); "
                                  "on a Mac enable it once with `safaridriver --enable` (and Develop > Allow Remote Automation)")
        driver = shutil.which("safaridriver") or "/usr/bin/safaridriver"
        if not Path(driver).exists():
            raise BrowserNotFound(f"safaridriver not found; {SAFARI_HINT}")
        return Located(self.name, browser_path or "/Applications/Safari.app", "selenium-safari", [f"driver {driver}"])

    def launch(self, located: Located, headed: bool = True, extra_args=None, without_args=None) -> WebDriverSession:
        from selenium import webdriver

        return WebDriverSession(webdriver.Safari(options=safari_options()), self.name)
