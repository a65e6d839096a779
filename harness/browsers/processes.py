"""Process-tree helpers shared by drivers (psutil)."""

from __future__ import annotations

import os

import psutil


def descendants(pid: int | None = None) -> list[psutil.Process]:
    """Live descendants of ``pid`` (default: this process); [] if it is gone."""
    try:
        return psutil.Process(pid or os.getpid()).children(recursive=True)
    except psutil.Error:
        return []


def cmdline(proc: psutil.Process) -> list[str]:
    try:
        return proc.cmdline()
    except psutil.Error:
        return []


def chrome_type(proc: psutil.Process) -> str:
    """Chrome's process type from ``--type=`` (no flag: the browser process)."""
    for arg in cmdline(proc):
        if arg.startswith("--type="):
            return arg.split("=", 1)[1]
    return "browser"
