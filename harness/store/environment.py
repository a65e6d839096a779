"""What a run records about where it ran: harness version, git commit (from a clone), how the harness
is installed (clone or wheel), OS, CPU, Python."""

from __future__ import annotations

import os
import platform
from datetime import datetime, timezone

import psutil

from harness import __version__, locations


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def describe() -> dict:
    """Environment block of ``manifest.json``."""
    return {
        "harness_version": __version__,
        "git_commit": locations.git_commit(),
        "harness_install": locations.install_kind(),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "os": f"{platform.system()} {platform.release()} ({platform.platform()})",
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "memory_bytes": psutil.virtual_memory().total,
        "python": platform.python_version(),
    }
