"""Family: Safari on macOS through safaridriver (WebDriver, harness/drive/webdriver.py).

Safari's web content, GPU and network processes are XPC services started by launchd, not
children of safaridriver, so this family's session finds them by executable
(harness/drive/macos.py) and tells the automation tab's content process apart from other tabs'
(new since the session started; same Safari by responsibility where known). Their memory is
read as physical footprint by the process-memory probe (harness/probe/footprint.py). Written
from public sources and tested on recorded macOS listings only: nothing here has run on a Mac
by us (README, "Safari vs Chrome on a Mac").
"""

from __future__ import annotations

import platform
import shutil
import time
from pathlib import Path

from harness.drive import macos
from harness.drive.base import BrowserDriver, BrowserNotFound, Located, ProcessInfo
from harness.drive.webdriver import WebDriverSession

SAFARI_HINT = ("Safari runs only on macOS: enable it once with `safaridriver --enable` "
               "(and Develop > Allow Remote Automation)")


def safari_options():
    """Selenium options for Safari (safaridriver): a clean automation window, no tech preview."""
    from selenium.webdriver.safari.options import Options

    opts = Options()
    opts.automatic_inspection = False
    opts.automatic_profiling = False
    return opts


class SafariSession(WebDriverSession):
    """A safaridriver session whose processes are found by name on this Mac
    (:func:`harness.drive.macos.select_session`), since a tree walk from the driver finds none.
    ``how`` says how the automation tab's content process was chosen."""

    process_scope = "Safari's processes found by name on this Mac (launchd starts them, not the driver)"

    def __init__(self, driver, name: str, before: set[int], started: float, build: str = "system"):
        super().__init__(driver, name)
        self._before, self._started, self._build = before, started, build
        self._content: list[int] = []
        self.how = ""

    def processes(self) -> list[ProcessInfo]:
        sel = macos.select_session(macos.snapshot(), self._before, self._started, self._build)
        self._content, self.how = sel.content, sel.how
        return [ProcessInfo(pid, label) for pid, label in sel.labels.items()]

    def dead(self) -> str | None:
        if self._death:
            return self._death
        if self._root is not None and not self._root.is_running():
            self._death = "safaridriver exited"
        elif self._content and not any(_alive(pid) for pid in self._content):
            self._death = f"the automation tab's web content process exited (pid {', '.join(map(str, self._content))})"
        return self._death


def _alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


class SafariDriver(BrowserDriver):
    """Safari on macOS through safaridriver (Selenium); same session code as WebKitGTK, with
    Safari's processes found by name."""

    name = "safari"
    description = "Safari via safaridriver (Selenium), macOS only"

    def locate(self, browser_path: str | None = None) -> Located:
        if platform.system() != "Darwin":
            raise BrowserNotFound(f"--browser safari needs macOS with safaridriver (this is {platform.system()}); "
                                  "on a Mac enable it once with `safaridriver --enable` (and Develop > Allow Remote Automation); "
                                  "a Safari on another Mac: --webdriver-url (README, \"Selenium Grid / remote browser\")")
        driver = shutil.which("safaridriver") or "/usr/bin/safaridriver"
        if not Path(driver).exists():
            raise BrowserNotFound(f"safaridriver not found; {SAFARI_HINT}")
        return Located(self.name, browser_path or "/Applications/Safari.app", "selenium-safari", [f"driver {driver}"])

    def launch(self, located: Located, headed: bool = True, extra_args=None, without_args=None) -> WebDriverSession:
        from selenium import webdriver

        before = {p.pid for p in macos.snapshot()}
        started = time.time()
        driver = webdriver.Safari(options=safari_options())
        return SafariSession(driver, self.name, before, started, macos.webkit_build(located.executable))
