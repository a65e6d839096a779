"""Standard output whose reader has gone (``webgpu-harness run | head -1``): the console drops
what it writes instead of raising BrokenPipeError in the middle of a run (harness/cli/out.py
``GoneReader``). A real pipe, its read end closed; the run itself through a real browser:
tests/e2e/test_reliability.py."""

from __future__ import annotations

import os
import sys

from harness.cli import out


def test_a_closed_pipe_is_dropped_not_raised_and_the_descriptor_goes_to_devnull(monkeypatch):
    r, w = os.pipe()
    os.close(r)                                   # the reader has gone
    stream = os.fdopen(w, "w", buffering=1)
    monkeypatch.setattr(sys, "stdout", stream)
    gone = out.GoneReader()
    try:
        try:                                      # the pipe really is broken: a plain write raises
            stream.write("x\n")
            stream.flush()
            raised = False
        except BrokenPipeError:
            raised = True
        assert raised
        assert gone.write("a line\n") == len("a line\n")   # dropped, not raised
        gone.flush()
        assert gone.gone
        assert os.readlink(f"/proc/self/fd/{w}") == os.devnull   # the exit's flush is quiet too
        assert gone.write("another\n") == len("another\n")
    finally:
        try:
            stream.close()
        except OSError:
            pass


def test_the_console_writes_to_stdout_as_it_is_at_each_call(monkeypatch, capsys):
    out.say("first")
    assert capsys.readouterr().out == "first\n"   # captured: the console follows sys.stdout
