"""Family: Safari on macOS through safaridriver (WebDriver, harness/drive/webdriver.py)."""

from __future__ import annotations

import platform
import shutil
from pathlib import Path

from harness.drive.base import BrowserDriver, BrowserNotFound, Located
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
