"""Browser families by name. A new family is one module in harness/drive/ (``locate`` and
``launch``, picking a transport session) and one entry in :data:`BROWSERS`."""

from harness.drive.base import BrowserDriver
from harness.drive.chromium import ChromiumDriver
from harness.drive.safari import SafariDriver
from harness.drive.webkit import WebKitGTKDriver

#: ``--browser`` name → family. Order: what ``run`` launches first when no --browser is given.
BROWSERS: dict[str, type[BrowserDriver]] = {
    "chromium": ChromiumDriver,
    "webkit": WebKitGTKDriver,
    "safari": SafariDriver,
}
