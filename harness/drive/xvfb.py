"""An X display for browsers that need one (WebKitGTK's MiniBrowser), started and stopped by
the harness: ``Xvfb -displayfd`` picks a free display number and tells us which."""

from __future__ import annotations

import os
import random
import select
import shutil
import subprocess

from harness.drive.base import BrowserNotFound

INSTALL_HINT = "install it: sudo apt-get install -y xvfb"


class Xvfb:
    """A private Xvfb server. ``display`` is ``":N"`` once started. Raises
    :class:`BrowserNotFound` when Xvfb is not installed, ``RuntimeError`` if it fails to start."""

    def __init__(self, size: str = "1280x800x24", timeout_s: float = 15):
        self.size, self.timeout_s = size, timeout_s
        self.proc: subprocess.Popen | None = None
        self.display: str | None = None

    @staticmethod
    def available() -> bool:
        return shutil.which("Xvfb") is not None

    def start(self, attempts: int = 5) -> str:
        """Start Xvfb on a free display and return it (``":N"``), retrying a lost race."""
        for attempt in range(attempts):
            try:
                return self._start_once()
            except RuntimeError:
                if attempt == attempts - 1:
                    raise
        raise AssertionError("unreachable")

    def _start_once(self) -> str:
        exe = shutil.which("Xvfb")
        if exe is None:
            raise BrowserNotFound(f"Xvfb (an X display server for headless WebKitGTK) is missing; {INSTALL_HINT}")
        read_fd, write_fd = os.pipe()
        # A random display number (rather than -displayfd's lowest free one) keeps harnesses that
        # start at the same moment from racing for :0; -displayfd still reports readiness.
        number = random.randint(100, 30000)
        self.proc = subprocess.Popen([exe, f":{number}", "-displayfd", str(write_fd), "-screen", "0", self.size,
                                      "-nolisten", "tcp"],
                                     pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(write_fd)
        try:
            # Xvfb writes the number and then "\n" in a second write: closing the pipe before the
            # newline arrives makes that write fail, and Xvfb exits ("Cannot write display number
            # to fd", status 1). Read up to the newline.
            got = b""
            while not got.endswith(b"\n"):
                ready, _, _ = select.select([read_fd], [], [], self.timeout_s)
                chunk = os.read(read_fd, 64) if ready else b""
                if not chunk:
                    break
                got += chunk
            reported = got.decode().strip()
        finally:
            os.close(read_fd)
        if not reported:
            self.stop()
            raise RuntimeError(f"Xvfb did not start on :{number}")
        self.display = f":{reported}"
        try:  # two servers racing for one display number: the loser exits at once
            self.proc.wait(0.3)
            raise RuntimeError(f"Xvfb exited right after taking display {self.display} (status {self.proc.returncode})")
        except subprocess.TimeoutExpired:
            pass
        return self.display

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.proc = None
