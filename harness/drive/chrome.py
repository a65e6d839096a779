"""Family: Google Chrome as installed on the machine (any OS), driven through Playwright's
``chrome`` channel (harness/drive/playwright.py), next to ``chromium`` (a Chromium build found
by path). Chrome's own WebGPU is used: on a Mac, Metal on the Apple GPU.

Playwright looks for the ``chrome`` channel in exactly these places (Playwright 1.65.2,
``_createChromiumChannel("chrome")`` in ``driver/package/lib/coreBundle.js``): Linux
``/opt/google/chrome/chrome``; macOS ``/Applications/Google Chrome.app/Contents/MacOS/Google
Chrome``; Windows ``Google\\Chrome\\Application\\chrome.exe`` under ``%LOCALAPPDATA%``,
``%PROGRAMFILES%``, ``%PROGRAMFILES(X86)%`` and ``%HOMEDRIVE%\\Program Files [(x86)]``.
:func:`channel_paths` lists the same, so ``locate`` answers without starting a browser.
"""

from __future__ import annotations

import os
import platform
import plistlib
import subprocess
from pathlib import Path

from harness.drive.base import BrowserDriver, BrowserNotFound, Located
from harness.drive.chromium import CHROMIUM_FLAGS
from harness.drive.playwright import PlaywrightSession

INSTALL_HINT = ("install Google Chrome (https://www.google.com/chrome/; on Debian/Ubuntu also "
                "`python -m playwright install chrome`), or pass --browser-path")


def channel_paths(system: str | None = None, env: dict | None = None) -> list[str]:
    """Where Playwright's ``chrome`` channel looks on ``system`` (``platform.system()`` names),
    in its order; ``env`` supplies the Windows folders (default: ``os.environ``)."""
    system = system or platform.system()
    env = os.environ if env is None else env
    if system == "Darwin":
        return ["/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"]
    if system == "Windows":
        bases = [env.get("LOCALAPPDATA"), env.get("PROGRAMFILES"), env.get("PROGRAMFILES(X86)")]
        drive = env.get("HOMEDRIVE")
        if drive:
            bases += [drive + "\\Program Files", drive + "\\Program Files (x86)"]
        return [b + "\\Google\\Chrome\\Application\\chrome.exe" for b in bases if b]
    return ["/opt/google/chrome/chrome"]


def chrome_version(path: str) -> str:
    """Chrome's version without opening a browser: the app bundle's ``Info.plist``
    (``CFBundleShortVersionString``) on macOS, else ``chrome --version``; "" when unknown."""
    plist = Path(path).parents[1] / "Info.plist" if ".app/Contents/MacOS/" in path else None
    if plist is not None and plist.exists():
        try:
            return str(plistlib.loads(plist.read_bytes()).get("CFBundleShortVersionString", ""))
        except (OSError, plistlib.InvalidFileException):
            return ""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.strip().rsplit(" ", 1)[-1] if out.strip() else ""


class ChromeDriver(BrowserDriver):
    """``--browser chrome``: the installed Google Chrome through Playwright's ``chrome`` channel
    (``--browser-path`` instead launches that executable as Chrome)."""

    name = "chrome"
    description = "Google Chrome via Playwright's chrome channel (installed Chrome, any OS)"
    forces_collections = True  # HeapProfiler.collectGarbage on the worker's target (playwright.py)

    def locate(self, browser_path: str | None = None) -> Located:
        if browser_path:
            if not Path(browser_path).exists():
                raise BrowserNotFound(f"--browser-path {browser_path} does not exist; {INSTALL_HINT}")
            return Located(self.name, browser_path, "playwright", ["Chrome at --browser-path"])
        paths = channel_paths()
        found = next((p for p in paths if Path(p).exists() and os.access(p, os.X_OK)), None)
        if found is None:
            raise BrowserNotFound(f"Google Chrome not found at {', '.join(paths)}; {INSTALL_HINT}")
        return Located(self.name, found, "playwright-chrome", ["Google Chrome (Playwright channel chrome)"])

    def launch(self, located: Located, headed: bool = False, extra_args: list[str] | None = None,
               without_args: list[str] | None = None) -> PlaywrightSession:
        args = [a for a in CHROMIUM_FLAGS if a not in (without_args or [])] + list(extra_args or [])
        channel = "chrome" if located.driver == "playwright-chrome" else None
        return PlaywrightSession(located, headed, args, channel=channel)
