"""The run's progress through a pipe (harness/cli/progress.py ``Lines``), its words on the cases a
real run reaches rarely: a cell whose browser never launched, a retried cell, a run cut short.
The real clock; what it prints is collected from ``say``. (A whole run through a pipe:
tests/e2e/test_decode_loop.py, tests/e2e/test_faults.py.)"""

from __future__ import annotations

from types import SimpleNamespace

from harness.cli.progress import Lines


def test_a_cell_that_never_started_ends_in_0_s_not_minus_0():
    said: list[str] = []
    p = Lines(said.append, 2)
    p.end("c0", "chromium decode-loop/fresh [tiny]", "failed", None)   # --browser-path /bin/false: no start
    assert said == ["[1/2] chromium decode-loop/fresh [tiny]: failed: 0 steps in 0 s"]


def test_start_step_end_and_a_retry_say_what_happened_once_each():
    said: list[str] = []
    p = Lines(said.append, 1)
    p.start("c0", "webkit decode-loop/reuse [tiny]", 24)
    p.step("c0", "webkit decode-loop/reuse [tiny]", 3)                   # within 15 s: no line
    p.start("c0", "webkit decode-loop/reuse [tiny]", 24)                 # retried in a fresh browser
    p.end("c0", "webkit decode-loop/reuse [tiny]", "ok", 24)
    p.close([SimpleNamespace(cell="c0", status="ok")], lambda c: "x", lambda c: 24)   # ended: nothing more
    assert said[0] == "[1/1] webkit decode-loop/reuse [tiny]: started (24 steps)"
    assert said[1] == "[1/1] webkit decode-loop/reuse [tiny]: started again (24 steps)"
    assert said[2].startswith("[1/1] webkit decode-loop/reuse [tiny]: ok: 24 of 24 steps in ") and len(said) == 3


def test_a_run_cut_short_ends_each_started_cell_with_the_steps_kept():
    said: list[str] = []
    p = Lines(said.append, 3)
    p.start("a", "A", 200)
    p.step("a", "A", 60)
    cells = [SimpleNamespace(cell="a", status="failed"), SimpleNamespace(cell="b", status="pending")]
    p.close(cells, lambda c: c.cell.upper(), lambda c: 64)               # b never started: no line
    assert said[1:] == [said[-1]] and said[-1].startswith("[1/3] A: failed: 64 of 200 steps in ")
