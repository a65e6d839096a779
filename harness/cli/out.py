"""The two consoles every command prints to, and one plain line."""

from __future__ import annotations

import os
import sys

from rich.console import Console


class GoneReader:
    """Standard output (whatever ``sys.stdout`` is at each call) that outlives its reader: once
    a write to it fails — a pipe's reader has gone (``webgpu-harness run | head -1``), a full
    device (``> /dev/full``) — it drops its text instead of raising BrokenPipeError or OSError
    inside a run, which ended the run with exit 1, its cells pending and nothing analysed. The
    descriptor is pointed at /dev/null then (Python's documented remedy, "Note on SIGPIPE" in
    the signal module's docs), so the exit's flush is quiet too; the run goes on and writes its
    folder."""

    gone = False

    def _out(self):
        return sys.stdout

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                return self._out().write(text)
            except OSError:  # BrokenPipeError, ENOSPC, EIO
                self._went()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._out().flush()
            except OSError:
                self._went()

    def _went(self) -> None:
        self.gone = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._out().fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):  # no descriptor (a test's captured stream)
            pass

    def __getattr__(self, name: str):
        return getattr(self._out(), name)  # isatty, fileno, encoding: rich's questions


# Piped output (make run, CI logs) is not a terminal: rich would wrap tables at 80 columns.
console = Console(file=GoneReader(), width=None if sys.stdout is not None and sys.stdout.isatty() else 160)
err = Console(stderr=True)


def say(message: str) -> None:
    """Print one plain line (no rich markup: reasons hold [brackets])."""
    console.print(message, highlight=False, markup=False, emoji=False, soft_wrap=True)
