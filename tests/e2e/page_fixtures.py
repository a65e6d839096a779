"""Fixtures shared by the tests that open generated pages in Chromium (test_report_pages.py,
test_report_layout.py import them): one Playwright Chromium per module, and a folder for screenshots."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def browser():
    """A Playwright Chromium (Debian's /usr/bin/chromium: no browser download here)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium")
        yield b
        b.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    """A folder for the module's screenshots (and PDFs), its path printed."""
    d = tmp_path_factory.mktemp("screenshots")
    print(f"\nscreenshots: {d}")
    return d
