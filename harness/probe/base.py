"""Harness-side probes: measurements taken beside the browser (Python), one lifecycle for all.

A probe is made per cell with a :class:`ProbeContext`, then ``start()`` after the runner page
opened, ``poll(now)`` from the runner's thread between driver pumps (the only thread that may
talk to the browser driver), and ``stop()`` when the cell ends, whatever the reason
(crossbench's probe contexts: setup → start → stop). A polling probe schedules its samples
against a fixed start so its period does not drift. The probes that run are listed in
:data:`harness.probe.registry.PROBES`; a new measurement is one module and one line there.
Worker-side probes are the JavaScript modules in ``web/probes/``.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: probes never import the runner
    from harness.drive.base import BrowserSession
    from harness.store.store import SampleStore


@dataclass
class ProbeContext:
    """What a probe of one cell can use: the run's sample ``store`` (thread-safe), the ``cell``
    id, the browser ``session`` (call it only from :meth:`Probe.poll`/``start``) and the plan's
    settings (``settings``: the :class:`harness.plan.RunPlan`)."""

    store: "SampleStore"
    cell: str
    session: "BrowserSession"
    settings: Any

    def token(self) -> int | None:
        """The last step the cell's worker reported (None before the first)."""
        return self.store.cells[self.cell].last_step

    def token_at(self, time_s: float) -> int | None:
        """The step the worker had reached at ``time_s`` (the run's clock): the last step it
        ended by then, placed on our clock from its own (harness/store/store.py ``step_at``),
        so a sample is not stamped late by the time its steps took to arrive."""
        return self.store.step_at(self.cell, time_s)

    def record(self, samples: list[dict]) -> None:
        """Append harness-side samples for this cell to samples.jsonl."""
        if samples:
            self.store.append(self.cell, samples)


class Probe(abc.ABC):
    """One measurement of one cell. Subclasses set ``name`` and implement the hooks they need."""

    name: str = ""

    def __init__(self, ctx: ProbeContext):
        self.ctx = ctx

    @classmethod
    def enabled(cls, settings: Any) -> bool:
        """Whether this probe runs under the plan ``settings`` (default: always)."""
        return True

    def start(self) -> None:
        """Called once after the runner page was opened."""

    def poll(self, now: float) -> None:
        """Called repeatedly from the runner's thread (``now``: time.monotonic() seconds)."""

    def stop(self) -> None:
        """Called once when the cell ends; must not raise."""


class PollingProbe(Probe):
    """A probe that samples every ``interval_s`` from :meth:`poll`, on a schedule fixed at
    :meth:`start` (sample k is due at start + k × interval, skipping missed ones) so the period
    does not drift with the runner's pump length."""

    interval_s: float = 1.0

    def start(self) -> None:
        self._t0: float | None = None
        self._k = 0

    def poll(self, now: float) -> None:
        if self.interval_s <= 0:
            return
        if self._t0 is None:
            self._t0 = now
        due = self._t0 + self._k * self.interval_s
        if now >= due:
            self._k = int((now - self._t0) // self.interval_s) + 1
            self.sample(now)

    @abc.abstractmethod
    def sample(self, now: float) -> None:
        """Take one sample."""
