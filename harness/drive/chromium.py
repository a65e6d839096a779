"""Family: Chromium (driven through Playwright, harness/drive/playwright.py).

Playwright's own browser download is unavailable on our machines, so the driver launches the
system Chromium (Debian package ``chromium``: ``/usr/bin/chromium``) via ``executable_path``;
``--browser-path`` overrides it and a Playwright-installed Chromium is used when one exists.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

from harness.drive.base import BrowserDriver, BrowserNotFound, Located
from harness.drive.playwright import PlaywrightSession

#: Flags for every launch. ``--enable-unsafe-webgpu`` exposes WebGPU on Linux (SwiftShader on
#: CPU-only machines); the two network flags keep Chromium from reaching out on a closed
#: network; ForceEagerMeasureMemory makes performance.measureUserAgentSpecificMemory() resolve
#: at once instead of at the next GC (Chromium's measure-memory explainer).
CHROMIUM_FLAGS = [
    "--enable-unsafe-webgpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--enable-blink-features=ForceEagerMeasureMemory",
    "--no-first-run",
    "--disable-sync",
]

SYSTEM_PATHS = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome",
                "/Applications/Chromium.app/Contents/MacOS/Chromium"]
INSTALL_HINT = "install Debian's Chromium: sudo apt-get update && sudo apt-get install -y chromium (or pass --browser-path)"


class ChromiumDriver(BrowserDriver):
    name = "chromium"
    description = "Chromium via Playwright (system Chromium through executable_path)"
    forces_collections = True  # HeapProfiler.collectGarbage on the worker's target (playwright.py)

    def locate(self, browser_path: str | None = None) -> Located:
        if browser_path:
            if not Path(browser_path).exists():
                raise BrowserNotFound(f"--browser-path {browser_path} does not exist; {INSTALL_HINT}")
            if Path(browser_path).is_dir() or not os.access(browser_path, os.X_OK):
                raise BrowserNotFound(f"--browser-path {browser_path} is not an executable file (give the browser "
                                      "program itself, e.g. /usr/bin/chromium)")
            return Located(self.name, browser_path, "playwright")
        if importlib.util.find_spec("playwright") is None:  # found, not imported: locate() is part of validation
            raise BrowserNotFound("the Python package playwright is missing: pip install playwright")
        pw_path = _playwright_chromium()
        if pw_path:
            return Located(self.name, pw_path, "playwright", ["Playwright-installed Chromium"])
        for path in SYSTEM_PATHS:
            if Path(path).exists():
                return Located(self.name, path, "playwright", ["system Chromium"])
        found = shutil.which("chromium")
        if found:
            return Located(self.name, found, "playwright", ["system Chromium"])
        raise BrowserNotFound(f"Chromium not found; {INSTALL_HINT}")

    def launch(self, located: Located, headed: bool = False, extra_args: list[str] | None = None,
               without_args: list[str] | None = None) -> PlaywrightSession:
        args = [a for a in CHROMIUM_FLAGS if a not in (without_args or [])] + list(extra_args or [])
        return PlaywrightSession(located, headed, args)


def _playwright_chromium() -> str | None:
    """Path of a Playwright-downloaded Chromium if one is installed, without starting one."""
    # Playwright's cache: ~/.cache/ms-playwright (Linux), ~/Library/Caches/ms-playwright (macOS)
    for cache in (Path.home() / ".cache" / "ms-playwright", Path.home() / "Library" / "Caches" / "ms-playwright"):
        for pattern in ("chromium-*/chrome-linux*/chrome", "chromium-*/chrome-mac*/Chromium.app/Contents/MacOS/Chromium"):
            for exe in sorted(cache.glob(pattern), reverse=True):
                if exe.exists():
                    return str(exe)
    return None
