"""Driving a user's app before it is measured: ``app --wait-for/--click/--fill`` (in the order
given) and ``--script FILE.py``, on the driver's own page object — a Playwright ``Page``
(Chromium, Playwright WebKit) or a Selenium ``WebDriver`` (WebKitGTK, Safari).

A selector is CSS, or ``text=TEXT``: the innermost element whose text contains TEXT
(case-insensitive, whitespace collapsed; Playwright's own ``text=`` engine on a Playwright page,
the same rule in a small script on a Selenium one). ``--wait-for`` waits until a matching element
is visible; ``--click`` and ``--fill`` wait the same way, then click, or clear the element and
type TEXT. Waiting is a loop of short checks with ``tick()`` between them, so the runner keeps
sampling memory and delivering the driver's events (Chromium's Fetch interception needs the
runner inside a Playwright call) while an app loads.
"""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path
from typing import Callable

from harness.app_plan import SCRIPT_FUNCTION, Action


class ActionFailed(RuntimeError):
    """An action or --script could not be done; the message is the cell's one-line reason."""


#: Finds the innermost visible element whose text contains arguments[0] (lower case), or null.
_TEXT_JS = """
const want = arguments[0];
const norm = (s) => (s || '').replace(/\\s+/g, ' ').trim().toLowerCase();
const walker = document.createTreeWalker(document.body || document.documentElement, NodeFilter.SHOW_ELEMENT);
let found = null;
for (let el = walker.currentNode; el; el = walker.nextNode()) {
  if (!norm(el.textContent).includes(want)) continue;
  const r = el.getBoundingClientRect();
  if (r.width > 0 || r.height > 0) found = el;   // later matches are deeper: keep the innermost
}
return found;
"""


class PlaywrightPage:
    """Actions on a Playwright ``Page``."""

    def __init__(self, page) -> None:
        self.page = page

    def find(self, selector: str):
        handle = self.page.query_selector(selector)
        return handle if handle is not None and handle.is_visible() else None

    def click(self, element) -> None:
        element.click(timeout=10_000)

    def fill(self, element, text: str) -> None:
        element.fill(text, timeout=10_000)


class SeleniumPage:
    """Actions on a Selenium ``WebDriver``."""

    def __init__(self, driver) -> None:
        self.driver = driver

    def find(self, selector: str):
        if selector.startswith("text="):
            want = " ".join(selector[len("text="):].strip().strip("\"'").split()).lower()
            return self.driver.execute_script(_TEXT_JS, want)
        from selenium.webdriver.common.by import By

        for el in self.driver.find_elements(By.CSS_SELECTOR, selector):
            if el.is_displayed():
                return el
        return None

    def click(self, element) -> None:
        element.click()

    def fill(self, element, text: str) -> None:
        element.clear()
        element.send_keys(text)


def page_driver(page_object) -> PlaywrightPage | SeleniumPage:
    """The action adapter for a driver's page object. Raises :class:`ActionFailed` for none."""
    if page_object is None:
        raise ActionFailed("this browser session has no page object to drive")
    if hasattr(page_object, "query_selector") and hasattr(page_object, "goto"):
        return PlaywrightPage(page_object)
    return SeleniumPage(page_object)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def perform(actions: list[Action], page_object, tick: Callable[[], str | None], timeout_s: float) -> None:
    """Do ``actions`` in order. ``tick()`` runs between checks (about every 0.1 s plus its own
    time) and returns a reason to stop (the browser died) or None. Raises
    :class:`ActionFailed` with one line: the action, and why (not found within ``timeout_s``,
    the driver's error, or ``tick``'s reason)."""
    if not actions:
        return
    page = page_driver(page_object)
    for action in actions:
        deadline = time.monotonic() + timeout_s
        element = None
        while True:
            try:
                element = page.find(action.selector)
            except Exception as exc:  # a malformed selector, a navigation in between
                if "selector" in str(exc).lower() and ("invalid" in str(exc).lower() or "malformed" in str(exc).lower()):
                    raise ActionFailed(f"{action.describe()}: bad selector ({_first_line(exc)})") from None
                element = None
            if element is not None:
                break
            if time.monotonic() > deadline:
                what = "never became visible" if action.kind == "wait-for" else "never appeared"
                raise ActionFailed(f"{action.describe()}: {action.selector!r} {what} within {timeout_s:g} s")
            why = tick()
            if why:
                raise ActionFailed(f"{action.describe()}: {why}")
        try:
            if action.kind == "click":
                page.click(element)
            elif action.kind == "fill":
                page.fill(element, action.text or "")
        except Exception as exc:
            raise ActionFailed(f"{action.describe()} failed: {_first_line(exc)}") from None


def run_script(path: Path, page_object) -> None:
    """Load ``path`` and call its ``drive(page)`` with the driver's page object. Raises
    :class:`ActionFailed` naming the file and the exception (one line) when it raises."""
    path = Path(path)
    spec = importlib.util.spec_from_file_location(f"webgpu_harness_script_{abs(hash(str(path)))}", path)
    try:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        fn = getattr(module, SCRIPT_FUNCTION)
        fn(page_object)
    except Exception as exc:
        raise ActionFailed(f"--script {path.name} raised {_first_line(exc)}") from None
