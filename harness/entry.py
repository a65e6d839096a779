"""The command line's entry point (``webgpu-harness``, ``python -m harness``): Ctrl-C at any
moment is one line and exit status 130, never a Python traceback.

Installed before anything heavy is imported (the first seconds of a run import typer, pandas,
Playwright…): a first Ctrl-C prints ``interrupted`` and unwinds (typer turns it into exit 130;
commands that measure install their own handler, which writes the report of what was received
first: harness/cli/run.py ``sigterm_as_interrupt``). Once the command is done, Ctrl-C is
ignored while the processes the harness started are ended (harness/drive/reaper.py, at most a
few seconds), so that clean-up is never cut by a traceback either.
"""

from __future__ import annotations

import os
import signal
import sys


def _interrupted(signum, frame) -> None:
    signal.signal(signal.SIGINT, _again)
    try:
        sys.stderr.write("interrupted\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    raise KeyboardInterrupt


def _again(signum, frame) -> None:
    raise KeyboardInterrupt


def _unraisable(hook):
    """``sys.unraisablehook`` that keeps a Ctrl-C Python could not pass on (raised inside a
    weakref callback or a ``__del__``: it would print a traceback and be lost) for the harness to
    raise again (harness/drive/base.py ``raise_lost_interrupt``); anything else as before."""
    def unraisable(u) -> None:
        if u.exc_type is not None and issubclass(u.exc_type, KeyboardInterrupt):
            from harness.drive.base import note_lost_interrupt

            note_lost_interrupt()
            return
        hook(u)
    return unraisable


def _open_closed_std() -> None:
    """Standard descriptors closed at start (``webgpu-harness run >&-``) opened on /dev/null:
    Python left ``sys.stdout`` None (the console failed as it loaded), and the first file the
    harness opened would have taken the number 1, so that a browser started with it wrote its
    output into that file."""
    for fd, mode, name in ((0, os.O_RDONLY, "stdin"), (1, os.O_WRONLY, "stdout"), (2, os.O_WRONLY, "stderr")):
        try:
            os.fstat(fd)
        except OSError:
            new = os.open(os.devnull, mode)
            if new != fd:
                os.dup2(new, fd)
                os.close(new)
            os.set_inheritable(fd, True)  # os.open's are not (PEP 446): the browser and the collector need it
            if getattr(sys, name) is None:
                setattr(sys, name, os.fdopen(fd, "r" if fd == 0 else "w", closefd=False))


def main(argv: list[str] | None = None) -> None:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); exits with its status."""
    _open_closed_std()
    signal.signal(signal.SIGINT, _interrupted)
    sys.unraisablehook = _unraisable(sys.unraisablehook)
    args = sys.argv[1:] if argv is None else argv
    code = 0
    try:
        if args[:1] and args[0] in ("run", "app", "serve"):
            # first thing, before the imports of the first seconds: end what a killed harness left
            # (its watchdog normally did already; harness/drive/reaper.py). Inside the try: a Ctrl-C
            # here (0.3 s in) escaped as a KeyboardInterrupt and killed the process by SIGINT
            from harness.drive import reaper

            reaper.reap_stale_at_start()
        from harness.cli import app

        app(args=argv, prog_name="webgpu-harness")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            sys.stderr.write(f"{exc.code}\n")
    except KeyboardInterrupt:  # in an import, before typer runs, or in typer's own start
        code = 130
    finally:
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # the clean-up at exit is not cut
        except ValueError:  # not the main thread (tests calling main in a thread)
            pass
    from harness.drive.base import interrupt_lost

    if interrupt_lost() and code in (0, 1):  # a Ctrl-C swallowed where nothing checked for it again
        code = 130
    sys.exit(code)
