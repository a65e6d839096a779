"""The two consoles every command prints to, and one plain line."""

from __future__ import annotations

import sys

from rich.console import Console

# Piped output (make run, CI logs) is not a terminal: rich would wrap tables at 80 columns.
console = Console(width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True)


def say(message: str) -> None:
    """Print one plain line (no rich markup: reasons hold [brackets])."""
    console.print(message, highlight=False, markup=False, emoji=False, soft_wrap=True)
