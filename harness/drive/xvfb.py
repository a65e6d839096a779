"""An X display for browsers that need one (WebKitGTK's MiniBrowser), started and stopped by
the harness: ``Xvfb -displayfd`` tells us when it is ready and on which display.

Why a start used to fail under load with "Xvfb exited right after taking display :N (status
1)": Xvfb reports the display with two writes to the ``-displayfd`` pipe, the number and then
``"\\n"`` (xserver os/connection.c), and exits with "Fatal server error: Cannot write display
number to fd N" when the second fails. The harness read the first write and closed the pipe;
on a busy machine that close came between the two writes. The reader now waits for the newline
(reproduced here with 30 starts beside 4 busy loops: 12 failures before, none after). Xvfb's
stderr is kept in a temporary file and its last lines go into any start error.
"""

from __future__ import annotations

import os
import random
import select
import shutil
import subprocess
import tempfile
import time

from harness.drive.base import BrowserNotFound
from harness.drive.reaper import REAPER

INSTALL_HINT = "install it: sudo apt-get install -y xvfb"


class Xvfb:
    """A private Xvfb server. ``display`` is ``":N"`` once started. Raises
    :class:`BrowserNotFound` when Xvfb is not installed, ``RuntimeError`` (with Xvfb's own
    error lines) if it fails to start."""

    def __init__(self, size: str = "1280x800x24", timeout_s: float = 15):
        self.size, self.timeout_s = size, timeout_s
        self.proc: subprocess.Popen | None = None
        self.display: str | None = None
        self._stderr = None

    @staticmethod
    def available() -> bool:
        return shutil.which("Xvfb") is not None

    def start(self, attempts: int = 5) -> str:
        """Start Xvfb on a free display and return it (``":N"``), retrying a display taken by
        another server at the same moment."""
        for attempt in range(attempts):
            try:
                return self._start_once()
            except RuntimeError:
                if attempt == attempts - 1:
                    raise
        raise AssertionError("unreachable")

    def stderr_tail(self, lines: int = 3) -> str:
        """The last lines Xvfb wrote to stderr, joined with ' | ' ('' if none)."""
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0)
            text = self._stderr.read().decode(errors="replace")
        except (OSError, ValueError):
            return ""
        kept = [ln.strip() for ln in text.splitlines() if ln.strip() and ln.strip() != "(EE)"]
        return " | ".join(kept[-lines:])

    def _start_once(self) -> str:
        exe = shutil.which("Xvfb")
        if exe is None:
            raise BrowserNotFound(f"Xvfb (an X display server for headless WebKitGTK) is missing; {INSTALL_HINT}")
        read_fd, write_fd = os.pipe()
        # A random display number (rather than -displayfd's lowest free one) keeps harnesses that
        # start at the same moment from racing for :0; -displayfd still reports readiness.
        number = random.randint(100, 30000)
        self._stderr = tempfile.TemporaryFile()
        try:
            self.proc = subprocess.Popen(
                [exe, f":{number}", "-displayfd", str(write_fd), "-screen", "0", self.size, "-nolisten", "tcp"],
                pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=self._stderr, start_new_session=True)
        finally:
            os.close(write_fd)
        REAPER.track(self.proc.pid, "Xvfb", group=True)
        try:
            reported = self._read_display(read_fd)
        finally:
            os.close(read_fd)
        if not reported:
            why = self.stderr_tail()
            self.stop()
            raise RuntimeError(f"Xvfb did not start on :{number}" + (f": {why}" if why else ""))
        self.display = f":{reported}"
        try:  # two servers racing for one display number: the loser exits at once
            self.proc.wait(0.3)
            why = self.stderr_tail()
            status = self.proc.returncode
            self.stop()
            raise RuntimeError(f"Xvfb exited right after taking display {self.display} (status {status})"
                               + (f": {why}" if why else ""))
        except subprocess.TimeoutExpired:
            pass
        return self.display

    def _read_display(self, fd: int) -> str:
        """The display number Xvfb writes to ``fd``, read up to its newline (the pipe stays open
        until Xvfb's second write is done: module docstring); '' on timeout or exit."""
        deadline = time.monotonic() + self.timeout_s
        data = b""
        while b"\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0:
                return ""
            ready, _, _ = select.select([fd], [], [], min(left, 0.5))
            if ready:
                chunk = os.read(fd, 64)
                if not chunk:  # Xvfb closed the pipe (exited)
                    break
                data += chunk
            elif self.proc is not None and self.proc.poll() is not None:
                break
        return data.decode(errors="replace").strip()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if self.proc is not None:
            REAPER.untrack(self.proc.pid)
        self.proc = None
        if self._stderr is not None:
            try:
                self._stderr.close()
            except OSError:
                pass
            self._stderr = None
