"""Browser drivers by name. Add a family here and in ``BROWSERS``."""

from harness.browsers.base import BrowserDriver, BrowserNotFound, BrowserSession, Located, ProcessInfo
from harness.browsers.chromium import ChromiumDriver
from harness.browsers.webdriver import SafariDriver, WebKitGTKDriver

BROWSERS: dict[str, type[BrowserDriver]] = {
    "chromium": ChromiumDriver,
    "webkit": WebKitGTKDriver,
    "safari": SafariDriver,
}

__all__ = ["BROWSERS", "BrowserDriver", "BrowserNotFound", "BrowserSession", "Located", "ProcessInfo"]
