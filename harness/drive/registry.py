"""Browser families by name. A new family is one module in harness/drive/ (``locate`` and
``launch``, picking a transport session) and one entry in :data:`BROWSERS`. A browser behind an
endpoint (``--webdriver-url``, ``--connect``, ``--cdp-url``) is driven by
harness/drive/remote.py instead (:func:`driver_for`)."""

from harness.drive.base import BrowserDriver
from harness.drive.chrome import ChromeDriver
from harness.drive.chromium import ChromiumDriver
from harness.drive.dawn import DawnDriver
from harness.drive.safari import SafariDriver
from harness.drive.webkit import WebKitGTKDriver

#: ``--browser`` name → family. Order: what ``run`` launches first when no --browser is given.
BROWSERS: dict[str, type[BrowserDriver]] = {
    "chromium": ChromiumDriver,
    "chrome": ChromeDriver,
    "webkit": WebKitGTKDriver,
    "safari": SafariDriver,
    # not a browser: native Dawn in Node, run only when named (--browser dawn)
    "dawn": DawnDriver,
}


def driver_for(browser: str, remote: dict | None = None) -> BrowserDriver:
    """The family that drives ``browser``: its remote target's (``remote``: browser label →
    :class:`harness.drive.remote.RemoteTarget`) when it has one, else the local family."""
    if remote and browser in remote:
        from harness.drive.remote import RemoteDriver

        return RemoteDriver(remote[browser])
    return BROWSERS[browser]()
