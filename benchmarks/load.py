"""A stated CPU load for benchmarks that measure latency under load (benchmarks/soak.py).

:func:`contended` starts ``hogs`` busy loops pinned to one CPU and yields a ``pin()`` that puts
every thread of the calling process (the harness: its server thread, runner, probes) on the
same CPU; call it once the browser was launched, so that the browser and its driver keep every
CPU. With 6 hogs the harness gets the share of one of 7 runnable tasks on a CPU — of one of ~14
on 2 cores, a load average of ~15 — under the kernel's ordinary fair scheduling, while the
browser (many threads: SwiftShader's pool) runs with what the machine gives it; a shared
machine loses one CPU to the hogs meanwhile. This is how the 1.47 s p99 of issue 19 arose: the
worker makes steps faster than the starved harness takes them. The machine's own 1-minute load
average is sampled every second meanwhile (min / median / max in the result); other users add
to it.

Needs only ``sched_setaffinity`` (Linux), no privileges.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import threading
from contextlib import contextmanager
from typing import Iterator


def _cmdline(p) -> list[str]:
    try:
        return p.cmdline()
    except Exception:
        return []


@contextmanager
def contended(hogs: int = 6) -> Iterator[dict]:
    """Run the block under the load of the module docstring. Yields a dict with ``pin`` (call it
    to pin the harness's threads to the hogs' CPU) that is filled in on exit: ``hogs``, ``cpu``,
    ``pinned`` (whether ``pin`` was called) and ``loadavg_1min`` {min, median, max}."""
    every = os.sched_getaffinity(0)
    cpu = min(every)
    info: dict = {"hogs": hogs, "cpu": cpu, "pinned": False}
    spin = f"import os; os.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass"
    # each in a session of its own: the kernel schedules sessions as groups (autogroup), so a hog
    # in the harness's session would also take the harness's own group share
    children = [subprocess.Popen([sys.executable, "-c", spin], start_new_session=True) for _ in range(hogs)]
    loads: list[float] = []
    stop = threading.Event()

    def pin() -> None:
        if info["pinned"]:
            return
        info["pinned"] = True
        import psutil

        # the harness: this process and its sample server (harness/serve/collector.py), not the browser
        pids = [os.getpid()] + [p.pid for p in psutil.Process().children(recursive=True)
                                if "harness.serve.collector" in " ".join(_cmdline(p))]
        info["pinned_processes"] = len(pids)
        for pid in pids:
            for tid in os.listdir(f"/proc/{pid}/task"):
                try:
                    os.sched_setaffinity(int(tid), {cpu})
                except OSError:
                    pass

    def sample() -> None:
        while not stop.wait(1.0):
            loads.append(os.getloadavg()[0])

    info["pin"] = pin
    t = threading.Thread(target=sample, daemon=True)
    t.start()
    try:
        yield info
    finally:
        stop.set()
        for c in children:
            c.kill()
        for c in children:
            c.wait()
        for tid in os.listdir(f"/proc/{os.getpid()}/task"):
            try:
                os.sched_setaffinity(int(tid), every)
            except OSError:
                pass
        info.pop("pin", None)
        if loads:
            info["loadavg_1min"] = {"min": min(loads), "median": statistics.median(loads), "max": max(loads)}
