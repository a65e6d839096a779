"""Family: WebKit on Linux. ``--browser webkit`` is a Playwright WebKit build when one is
installed (driven through Playwright, harness/drive/playwright.py), else WebKitGTK (Debian
``webkit2gtk-driver``): WebKitWebDriver + MiniBrowser under a private Xvfb, driven through
WebDriver (harness/drive/webdriver.py). WebKitGTK 2.50 has no WebGPU backend: cells run on
the emulated WebGPU of web/emulation/ (references.md).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from harness import locations
from harness.drive.base import BrowserDriver, BrowserNotFound, Located
from harness.drive.reaper import REAPER
from harness.drive.webdriver import COMMAND_TIMEOUT_S, WebDriverSession
from harness.drive.xvfb import Xvfb

WEBKITGTK_DRIVER = "WebKitWebDriver"
MINIBROWSER_PATHS = [
    "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser",
    "/usr/lib/aarch64-linux-gnu/webkit2gtk-4.1/MiniBrowser",
    "/usr/libexec/webkit2gtk-4.1/MiniBrowser",
]
WEBKITGTK_HINT = "install WebKitGTK's WebDriver and MiniBrowser: sudo apt-get install -y webkit2gtk-driver xvfb"


def webkitgtk_options(minibrowser: str):
    """Selenium options for WebKitGTK: MiniBrowser in automation mode."""
    from selenium.webdriver.webkitgtk.options import Options

    opts = Options()
    opts.binary_location = minibrowser
    opts.add_argument("--automation")
    return opts


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
            from harness.drive.playwright import PlaywrightSession

            return PlaywrightSession(located, headed, list(extra_args or []), engine="webkit")
        from selenium import webdriver
        from selenium.webdriver.remote.client_config import ClientConfig
        from selenium.webdriver.webkitgtk.service import Service

        xvfb = None
        env = dict(os.environ)
        if not headed or not env.get("DISPLAY"):
            xvfb = Xvfb()
            try:
                env["DISPLAY"] = xvfb.start()
            except BaseException:
                xvfb.stop()
                raise
        env["XDG_RUNTIME_DIR"] = locations.runtime_dir(env.get("XDG_RUNTIME_DIR"))
        opts = webkitgtk_options(located.executable)
        for a in extra_args or []:
            opts.add_argument(a)
        # its own process group, which MiniBrowser and its web processes inherit: the reaper
        # (harness/drive/reaper.py) ends the whole tree whatever happens to the harness
        class TrackedService(Service):
            """Hands WebKitWebDriver to the reaper the moment it exists: ``start()`` then waits
            for its port, and a harness SIGKILLed in that wait left the driver running for good."""

            def _start_process(self, path: str) -> None:
                super()._start_process(path)
                REAPER.track(self.process.pid, WEBKITGTK_DRIVER, group=True)

        service = TrackedService(executable_path=shutil.which(WEBKITGTK_DRIVER), env=env,
                                 popen_kw={"start_new_session": True})
        try:
            # Started by hand so that creating the session is bounded by COMMAND_TIMEOUT_S too
            # (a MiniBrowser that cannot reach its display would otherwise block forever).
            service.start()  # tracked as soon as it was started (TrackedService)
            config = ClientConfig(remote_server_addr=service.service_url, timeout=COMMAND_TIMEOUT_S)
            driver = webdriver.Remote(command_executor=service.service_url, options=opts, client_config=config)
        except BaseException as exc:  # Ctrl-C during a launch too: leave nothing running
            proc = getattr(service, "process", None)
            REAPER.end(proc.pid if proc else None, grace_s=1)
            try:
                service.stop()
            except Exception:
                pass
            if xvfb:
                xvfb.stop()
            if not isinstance(exc, Exception):
                raise
            raise RuntimeError(f"WebKitWebDriver failed to start MiniBrowser: {str(exc).splitlines()[0]}") from exc
        return WebDriverSession(driver, self.name, xvfb, service)
