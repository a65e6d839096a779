"""A run's progress on the console, counting each cell's own steps (the workload manifest's
``steps``: tokens, rounds × methods, uploads; an app's steps as ``--step-on`` ends them).

On a terminal: rich's bars, one per cell and one for all cells (:class:`Bars`). Through a pipe
(``make run | tee log``, a CI log) rich draws its bars only once, when every cell has ended, so a
run of minutes printed nothing until then; there (:class:`Lines`) each cell's start and end is
one plain line, and a cell that runs on says how far it is every :data:`EVERY_S` seconds.
"""

from __future__ import annotations

import time
from typing import Callable

#: Seconds between two progress lines of one running cell through a pipe.
EVERY_S = 15.0


class Lines:
    """Progress as plain lines (``say``: one line each), for a console that is not a terminal:
    ``[1/4] chromium decode-loop/fresh [tiny]: started (500 steps)``, ``… 120 of 500 steps``
    at most every :data:`EVERY_S` s, ``… ok: 500 of 500 steps in 41 s``."""

    def __init__(self, say: Callable[[str], None], cells: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.say, self.cells, self.clock = say, cells, clock
        self._order: dict[str, int] = {}
        self._total: dict[str, int | None] = {}
        self._started: dict[str, float] = {}
        self._said: dict[str, float] = {}
        self._steps: dict[str, int] = {}
        self._ended: set[str] = set()

    def grow(self, cells: int) -> None:
        """The run has ``cells`` cells now (``--auto-sample`` added a repetition)."""
        self.cells = cells

    def _of(self, steps: int, cell: str) -> str:
        total = self._total.get(cell)
        return f"{steps:,} of {total:,} steps" if total else f"{steps:,} steps"

    def start(self, cell: str, label: str, total: int | None) -> None:
        """A cell started (or was retried); ``total``: the steps it should make, None when unknown."""
        again = cell in self._order  # retried after its browser failed to start
        self._order.setdefault(cell, len(self._order) + 1)
        self._total[cell] = total
        self._started[cell] = self._said[cell] = self.clock()
        self.say(f"[{self._order[cell]}/{self.cells}] {label}: " + ("started again" if again else "started")
                 + (f" ({total:,} steps)" if total else ""))

    def step(self, cell: str, label: str, steps: int) -> None:
        """``steps`` of the cell received so far; a line when :data:`EVERY_S` s passed since its last."""
        self._steps[cell] = steps
        now = self.clock()
        if cell in self._order and now - self._said.get(cell, now) >= EVERY_S:
            self._said[cell] = now
            self.say(f"[{self._order[cell]}/{self.cells}] {label}: {self._of(steps, cell)}")

    def end(self, cell: str, label: str, status: str, steps: int | None) -> None:
        """The cell ended with ``status`` after ``steps`` received (None: as last seen)."""
        n = self._steps.get(cell, 0) if steps is None else steps
        now = self.clock()
        took = now - self._started.get(cell, now)  # never started (its browser did not launch): 0 s
        self._order.setdefault(cell, len(self._order) + 1)
        self._ended.add(cell)
        self.say(f"[{self._order[cell]}/{self.cells}] {label}: {status}: {self._of(n, cell)} in {took:.0f} s")

    def close(self, cells, label: Callable, steps: Callable) -> None:
        """The run stopped (Ctrl-C, SIGTERM): each of ``cells`` (the runner's) that started and
        said no end gets its end line, with the status the runner gave it (``failed``) and the
        steps kept (``steps(cell)``: the store's count, None when unknown)."""
        for c in cells:
            if c.cell in self._order and c.cell not in self._ended:
                self.end(c.cell, label(c), c.status, steps(c))


class Bars:
    """Progress as rich's bars (:class:`rich.progress.Progress`, drawn on a terminal)."""

    def __init__(self, progress, cells: int) -> None:
        self.progress = progress
        self.overall = progress.add_task("cells", total=cells)
        self._tasks: dict[str, int] = {}
        self._done: dict[str, int] = {}

    def grow(self, cells: int) -> None:
        """See :meth:`Lines.grow`."""
        self.progress.update(self.overall, total=cells)

    def start(self, cell: str, label: str, total: int | None) -> None:
        """See :meth:`Lines.start` (a retried cell keeps its bar)."""
        if cell not in self._tasks:
            self._tasks[cell] = self.progress.add_task(label, total=total)

    def step(self, cell: str, label: str, steps: int) -> None:
        """See :meth:`Lines.step`."""
        self._done[cell] = steps
        if cell in self._tasks:
            self.progress.update(self._tasks[cell], completed=steps)

    def end(self, cell: str, label: str, status: str, steps: int | None) -> None:
        """See :meth:`Lines.end`: an ok cell's bar is full at the steps it made (e.g. kernel-only
        timing skipped without timestamp-query)."""
        if steps is not None:  # every step received, also those after the last poll
            self._done[cell] = steps
        if cell in self._tasks:
            if status == "ok":
                n = self._done.get(cell, 0)
                self.progress.update(self._tasks[cell], total=n, completed=n)
            self.progress.update(self._tasks[cell], description=f"{label}: {status}")
        self.progress.advance(self.overall)

    def close(self, cells, label: Callable, steps: Callable) -> None:
        """See :meth:`Lines.close`: the bars stand as they were."""
