"""The harness's watchdog: a small process that ends what the harness started when the harness
itself is killed (SIGKILL, an out-of-memory kill), without waiting for the next harness start.

Started by :class:`harness.drive.reaper.Reaper` with the first process it tracks, in a session of
its own (a Ctrl-C or a kill of the harness's process group does not reach it), reading a pipe
whose other end only the harness holds. The kernel closes that end when the harness exits, however
it exits: the watchdog wakes at once, and if the harness's pid file (harness/drive/reaper.py) is
still there — the harness did not end its processes itself — ends every group and process it
lists (SIGTERM, then SIGKILL after :data:`GRACE_S`) and deletes it. WebKitWebDriver, MiniBrowser
and its web processes (measured: they outlived a SIGKILLed harness by 10–20 s) and Xvfb are
gone within ~1 s. Only psutil and the reaper are imported (it starts in a fraction of a second).

    python -m harness.drive.watchdog HARNESS_PID PID_FILE   (stdin: the pipe)
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

#: Seconds between SIGTERM and SIGKILL for what a killed harness left (no run to save any more).
GRACE_S = 0.5
#: Seconds the harness may take, once its end of the pipe closed, to be seen exited (a zombie or gone).
EXIT_WAIT_S = 2.0


def main(argv: list[str]) -> int:
    harness_pid, pid_file = int(argv[0]), Path(argv[1])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C meant for the harness
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # the terminal closing with it
    from harness.drive.reaper import _same, _zombie, end_entries  # now, not once the harness is gone

    try:
        while sys.stdin.buffer.read(65536):  # returns b"" once the harness is gone
            pass
    except OSError:
        pass
    try:
        doc = json.loads(pid_file.read_text())
    except (OSError, ValueError):
        return 0  # the harness ended its processes and deleted its pid file: nothing to do
    if int(doc.get("harness_pid", -1)) != harness_pid:
        return 0
    # the kernel closes a dying process's files before it becomes a zombie: give it a moment to
    # be seen gone (returning at once left Xvfb and WebKitWebDriver running in 3 of 25 kills)
    deadline = time.monotonic() + EXIT_WAIT_S
    while _same(harness_pid, doc.get("harness_created")) and not _zombie(harness_pid):
        if time.monotonic() > deadline:
            return 0  # it still runs (closed its end by hand): the harness's own clean-up applies
        time.sleep(0.02)
    end_entries(doc.get("entries") or [], GRACE_S)
    try:
        pid_file.unlink()
    except OSError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
