"""harness/gc_pause.py: the cyclic collector is off inside an analysis and back on after it, also
when blocks nest or overlap from two threads, and stays off after it when it was off before."""

from __future__ import annotations

import gc
import threading
from pathlib import Path

import pytest

from harness import gc_pause, pipeline

RUN = Path(__file__).resolve().parent / "analysis" / "runs" / "chromium-decode-loop"


def test_nested_and_restored():
    assert gc.isenabled()
    with gc_pause.paused():
        assert not gc.isenabled()
        with gc_pause.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block is still open
    assert gc.isenabled()


def test_off_before_stays_off():
    gc.disable()
    try:
        with gc_pause.paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_an_interrupted_end_is_mended_by_the_next_block():
    """A Ctrl-C between a block's count going to 0 and the collector going back on (a few
    bytecodes) left it off; the next block's end turns it on (an adversary's trace-raised
    KeyboardInterrupt at that line showed it off for good before)."""
    import sys

    target = gc_pause.paused.__wrapped__.__code__

    def tracer(frame, event, arg):
        if frame.f_code is target:
            frame.f_trace_lines = True
            return line_tracer
        return None

    def line_tracer(frame, event, arg):
        if event == "line" and "_open == 0 and _ours" in _source_line(frame):
            sys.settrace(None)
            frame.f_trace = None
            raise KeyboardInterrupt
        return line_tracer

    try:
        sys.settrace(tracer)
        with gc_pause.paused():
            pass
    except KeyboardInterrupt:
        pass
    finally:
        sys.settrace(None)
    assert not gc.isenabled()  # the interrupted end left it off ...
    with gc_pause.paused():
        pass
    assert gc.isenabled()  # ... and the next block's end turned it on


def _source_line(frame) -> str:
    import linecache

    return linecache.getline(frame.f_code.co_filename, frame.f_lineno)


def test_overlapping_threads():
    """Thread A's block ends while thread B's is open: still off; on once B's ends."""
    a_in, a_out, b_in = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def a():
        with gc_pause.paused():
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def b():
        a_in.wait(5)
        with gc_pause.paused():
            b_in.set()
            a_out.wait(5)
            seen["after a"] = gc.isenabled()

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == {"after a": False}
    assert gc.isenabled()


def test_analysis_runs_paused_and_restores(tmp_path, monkeypatch):
    """A real recorded run: the collector is off while its tables are built (the real build,
    watched), on afterwards, also when the analysis raises."""
    from harness import tables as T
    from harness.store.runfolder import RunFolderError

    states = []
    build = T.build

    def watched(run_dir):
        states.append(gc.isenabled())
        return build(run_dir)

    monkeypatch.setattr(T, "build", watched)
    a = pipeline.analyse(RUN, out_dir=tmp_path)
    pipeline.write(a)
    assert states == [False] and gc.isenabled()
    with pytest.raises(RunFolderError):
        pipeline.analyse(tmp_path / "not-a-run")
    assert gc.isenabled()
    assert a.tables.summary["bind_groups_per_token"].notna().all()
    assert (tmp_path / "report.html").stat().st_size > 0
