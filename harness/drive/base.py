"""The seam every browser family implements.

A :class:`BrowserDriver` knows how to find its browser and launch it; the
:class:`BrowserSession` it returns opens the runner page, lets the runner wait while pumping the
driver's event loop, reports the browser's processes for memory sampling, and says when the
browser died. Drivers never know about tables or reports.
"""

from __future__ import annotations

import abc
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

#: Ctrl-C/SIGTERM that arrived while a driver dispatched its events (see :func:`interrupts_deferred`);
#: ``lost``: one raised where Python could not pass it on (a weakref callback, a ``__del__``:
#: :func:`note_lost_interrupt`), to be raised again at the next :func:`raise_lost_interrupt`.
_INTERRUPT = {"depth": 0, "pending": False, "lost": False}


def note_lost_interrupt() -> None:
    """Remember a KeyboardInterrupt Python swallowed (harness/entry.py's ``sys.unraisablehook``)."""
    _INTERRUPT["lost"] = True


def interrupt_lost() -> bool:
    """Whether a KeyboardInterrupt was swallowed since the last call (and forget it)."""
    lost, _INTERRUPT["lost"] = _INTERRUPT["lost"], False
    return lost


def raise_lost_interrupt() -> None:
    """Raise KeyboardInterrupt again if one was swallowed (called where the runner waits)."""
    if interrupt_lost():
        raise KeyboardInterrupt


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """A block in which a Ctrl-C/SIGTERM (harness/cli/run.py's handler asks
    :func:`defer_interrupt`) is held and raised as ``KeyboardInterrupt`` when the block ends:
    Playwright dispatches event listeners inside its calls, and an interrupt raised in a
    listener is printed as a traceback and lost."""
    _INTERRUPT["depth"] += 1
    try:
        yield
    finally:
        _INTERRUPT["depth"] -= 1
        if _INTERRUPT["depth"] == 0 and _INTERRUPT["pending"]:
            _INTERRUPT["pending"] = False
            raise KeyboardInterrupt


def defer_interrupt() -> bool:
    """Called by the signal handler: True (and the interrupt is held) inside
    :func:`interrupts_deferred`, else False (raise it now)."""
    if _INTERRUPT["depth"] > 0:
        _INTERRUPT["pending"] = True
        return True
    return False


class BrowserNotFound(RuntimeError):
    """The browser (or its driver) is not installed; the message says how to install it."""


@dataclass
class ProcessInfo:
    pid: int
    process_type: str  # Chrome's --type (browser, renderer, gpu-process, utility, zygote) or WebKit's process name


@dataclass
class Located:
    """Where a browser was found: executable path, how it is driven, install hint if missing."""

    name: str
    executable: str
    driver: str
    notes: list[str] = field(default_factory=list)
    #: a remote browser's endpoint (WebDriver URL, Playwright ws://, CDP http://); "" when launched here
    endpoint: str = ""
    #: W3C capabilities sent to a WebDriver endpoint (remote only)
    capabilities: dict = field(default_factory=dict)


class BrowserSession(abc.ABC):
    """One launched browser. All methods are called from the runner's thread."""

    version: str = ""
    #: where the browser runs, as the driver reports it (W3C ``platformName``); "" when unknown
    platform: str = ""
    #: how the harness finds the browser's processes (manifest cell ``memory``); "" when it cannot
    process_scope: str = "the driver's process tree on this machine"
    #: why per-process memory cannot be measured, when ``process_scope`` is ""
    unmeasurable: str = ""

    @abc.abstractmethod
    def open(self, url: str) -> None:
        """Open ``url`` in a fresh page (closing the previous one)."""

    @abc.abstractmethod
    def pump(self, seconds: float) -> None:
        """Wait ``seconds`` while letting the driver deliver its events."""

    @abc.abstractmethod
    def dead(self) -> str | None:
        """None while the browser and page live, else why not (one line)."""

    @abc.abstractmethod
    def processes(self) -> list[ProcessInfo]:
        """The browser's processes now, each labelled with its process type."""

    @abc.abstractmethod
    def evaluate(self, expression: str):
        """Evaluate a JS expression (may return a promise) in the open page; JSON result."""

    #: The page's clock: ms since the Unix epoch (HR-Time: the time origin plus now()).
    CLOCK_EXPRESSION = "performance.timeOrigin + performance.now()"

    def read_clock(self) -> float | None:
        """``performance.timeOrigin + performance.now()`` of the open page (ms since the Unix
        epoch), or None when it cannot be read now (no page, navigating, no script evaluation);
        never marks the session dead (harness/probe/clock.py)."""
        try:
            v = self.evaluate(self.CLOCK_EXPRESSION)
        except Exception:
            return None
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    def worker_heap(self) -> dict[str, int] | None:
        """JS heap of the workload's worker (bytes) where the driver can read it, else None."""
        return None

    #: Why this session cannot read the worker's JS heap or force a collection in it ("" when it can).
    no_devtools: str = "this driver has no DevTools protocol"

    def collect_garbage(self, tag=None, then: str | None = None) -> bool:
        """Ask the engine to collect garbage in the workload's worker now (a full GC); True when
        the request was sent, False where the driver cannot (see :attr:`no_devtools`). ``then``:
        a JS expression evaluated in that worker as soon as the engine answers that the
        collection is done (``--gc-checkpoints``: it lets a worker waiting at a checkpoint go
        on, harness/probe/gc_checkpoints.py). Here: nothing is sent and nothing evaluated."""
        return False

    def collections_done(self) -> list[tuple[object, bool, float]]:
        """``(tag, ok, answered)`` of each :meth:`collect_garbage` request answered since the last
        call (``answered``: time.monotonic() when the engine's answer arrived)."""
        return []

    def collections_pending(self) -> int:
        """:meth:`collect_garbage` requests sent and not answered yet."""
        return 0

    def watch_worker(self, url: str) -> None:
        """Read :meth:`worker_heap` from the worker whose script URL contains ``url`` from now on
        (an app's worker instead of the harness's ``/web/worker.js``)."""

    def page_object(self):
        """The driver's own object for the open page, for user code (``app --script``): a
        Playwright ``Page``, or the Selenium ``WebDriver``; None when there is none."""
        return None

    @abc.abstractmethod
    def close(self) -> None:
        """Close the browser; never raises."""


class BrowserDriver(abc.ABC):
    """A browser family. Subclasses set ``name`` and implement ``locate`` and ``launch``."""

    name: str = ""
    description: str = ""
    #: Whether this family's sessions can force a full collection in the workload's worker and
    #: then evaluate a script there (:meth:`BrowserSession.collect_garbage` with ``then``):
    #: Chromium through Playwright's DevTools protocol session. Only then is a worker told to
    #: wait at its ``--gc-checkpoints`` (harness/drive/runner.py :func:`cell_config`); WebKit,
    #: Safari, WebDriver endpoints and Dawn cannot, and their workers never wait.
    forces_collections: bool = False

    @abc.abstractmethod
    def locate(self, browser_path: str | None = None) -> Located:
        """Find the browser. Raises :class:`BrowserNotFound` with install instructions."""

    @abc.abstractmethod
    def launch(self, located: Located, headed: bool = False, extra_args: list[str] | None = None,
               without_args: list[str] | None = None) -> BrowserSession:
        """Start the browser with its default flags plus ``extra_args`` minus ``without_args``.

        Raises :class:`BrowserNotFound` or ``RuntimeError``."""


def adapter_text(adapter: dict[str, Any]) -> str:
    """A cell's ``adapter`` label from its ``GPUAdapterInfo`` (the env sample's ``adapter``):
    vendor and architecture, ``google swiftshader``; where the architecture is empty (Dawn on
    NVIDIA's Vulkan driver) the device and the description, ``nvidia nvidia-h200 (NVIDIA:
    580.159.04 580.159.4.0)``; vendor and description when there is no device either."""
    if adapter.get("architecture"):
        parts = [adapter.get("vendor"), adapter.get("architecture")]
    else:
        parts = [adapter.get("vendor"), adapter.get("device"),
                 f"({adapter['description']})" if adapter.get("description") and adapter.get("device") else adapter.get("description")]
    return " ".join(str(x) for x in parts if x)
