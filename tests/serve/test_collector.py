"""harness/serve/collector.py: the run's sample server in a process of its own, over real HTTP and
a real child process (no browser): the parent's mirror of each cell follows what the child
stored, the harness's own samples land in order with the page's, the child answers the same
contract as the in-process server and goes away with its parent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import httpx
import psutil
import pytest

from harness.serve import access
from harness.serve.collector import Collector
from harness.store.runfolder import RunFolderError

TOKEN = "t0k3n-of-this-run"
AUTH = {access.TOKEN_HEADER: TOKEN}


def _step(step, n):
    return {"n": n, "kind": "step", "step": step, "wall_ms": 2.0, "t_ms": 10.0 + step, "counters": None, "live": None}


def _wait(cond, timeout_s=10.0):
    deadline = time.monotonic() + timeout_s
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_the_collector_stores_and_mirrors_what_the_page_posts(tmp_path):
    c = Collector(tmp_path)
    try:
        c.register("c1", {"cell": "c1", "params": {}})
        with c.serving({}, TOKEN, access.allowed_hosts("127.0.0.1")) as srv:
            assert httpx.get(f"{srv.url}/api/cells/c1", headers=AUTH).json() == {"cell": "c1", "params": {}}
            r = httpx.post(f"{srv.url}/api/cells/c1/samples", headers=AUTH,
                           json={"src": "w-1", "samples": [{"n": 1, "kind": "env", "user_agent": "ua", "webgpu": "real"}]
                                 + [_step(i, i + 2) for i in range(5)]})
            assert r.status_code == 200 and r.json()["accepted"] == 6
            c.append("c1", [{"kind": "process_memory", "source": "psutil", "pid": 1, "rss_bytes": 5, "time_s": 1.0}])
            r = httpx.post(f"{srv.url}/api/cells/c1/samples", headers=AUTH,
                           json={"src": "w-1", "samples": [{"n": 7, "kind": "done", "result": {}}]})
            assert r.status_code == 200
            state = c.cells["c1"]
            _wait(lambda: state.finished.is_set())
            assert state.steps == 5 and state.last_step == 4 and state.outcome == "done" and state.env["webgpu"] == "real"
            assert c.step_at("c1", c.elapsed_s()) == 4   # the steps' times came across with their clock offsets
            assert httpx.post(f"{srv.url}/api/cells/c1/samples", json={"src": "w-1", "samples": [_step(9, 9)]}).status_code == 403
        c.end("c1", "ok")
        c.append("c1", [{"kind": "cell_status", "status": "ok", "reason": ""}])
    finally:
        c.close()
    lines = [json.loads(x) for x in (tmp_path / "samples.jsonl").read_text().splitlines()]
    kinds = [x["kind"] for x in lines]
    assert kinds == ["env", "step", "step", "step", "step", "step", "process_memory", "done", "cell_status"]
    assert [x["seq"] for x in lines] == list(range(1, 10))   # one writer, one sequence
    assert not (tmp_path / ".webgpu-harness-reserve").exists()


def test_the_collector_refuses_a_samples_file_that_is_a_link(tmp_path):
    (tmp_path / "samples.jsonl").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(RunFolderError, match="samples.jsonl is a symbolic link"):
        Collector(tmp_path)
    assert not (tmp_path / "elsewhere").exists()


def test_the_collector_goes_away_with_a_killed_harness(tmp_path):
    # a harness holding a collector, SIGKILLed: the child sees its pipe close and exits
    script = ("import sys, time; from harness.serve.collector import Collector; "
              f"c = Collector({str(tmp_path)!r}); print(c._proc.pid, flush=True); time.sleep(300)")
    h = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    child = int(h.stdout.readline())
    assert psutil.pid_exists(child)
    os.kill(h.pid, signal.SIGKILL)
    h.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if psutil.Process(child).status() == psutil.STATUS_ZOMBIE:
                break
        except psutil.NoSuchProcess:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the sample server outlived its harness")


def test_a_cells_progress_clock_counts_from_its_start_not_from_registration(tmp_path):
    # the runner registers every cell when the run starts and moves a cell's last progress to the
    # moment it starts it; a harness-side sample (a memory reading) stored before the page reports
    # brings the child's state back — which must not take that clock back to the registration
    # (it did: every cell of a run past --start-timeout failed "timed out … before the worker reported")
    c = Collector(tmp_path)
    try:
        c.register("c1", {"cell": "c1", "params": {}})
        state = c.cells["c1"]
        registered = state.last_progress_monotonic
        time.sleep(0.3)
        state.last_progress_monotonic = started = time.monotonic()   # what runner.py does at the cell's start
        assert started - registered >= 0.3
        c.append("c1", [{"kind": "process_memory", "source": "psutil", "pid": 1, "rss_bytes": 5, "time_s": 1.0}])
        c.append("c1", [{"kind": "cell_status", "status": "x", "reason": "marker"}])
        _wait(lambda: (tmp_path / "samples.jsonl").exists() and "marker" in (tmp_path / "samples.jsonl").read_text())
        deadline = time.monotonic() + 2.0   # the child's state messages arrive meanwhile
        while time.monotonic() < deadline:
            assert state.last_progress_monotonic >= started, "the cell's start was taken back to its registration"
            time.sleep(0.01)
    finally:
        c.close()


def test_the_collector_ignores_ctrl_c_from_its_first_line(tmp_path):
    # a terminal's Ctrl-C reaches the whole process group: the child, still importing its modules
    # (pydantic …), printed a KeyboardInterrupt traceback before the harness's one line. Here a
    # SIGINT goes to the child every few ms from the moment it exists until it answers
    script = ("import sys; from harness.serve.collector import Collector; "
              f"c = Collector({str(tmp_path)!r}); print('ready', flush=True); c.close()")
    h = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    parent, hit = psutil.Process(h.pid), set()
    while h.poll() is None:
        for child in parent.children():
            try:
                os.kill(child.pid, signal.SIGINT)
                hit.add(child.pid)
            except ProcessLookupError:
                pass
        time.sleep(0.005)
    out, err = h.communicate()
    assert hit, "no child was ever seen"
    assert h.returncode == 0 and out == "ready\n", err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err


def test_a_child_whose_harness_is_gone_before_ready_ends_quietly(tmp_path):
    """The harness sent its limits and went away before the child's "ready" (a Ctrl-C as the
    run started): the child ends with status 0 and nothing on stderr, not a BrokenPipeError
    traceback (seen in CI at a Ctrl-C 0.8 s into a run)."""
    from multiprocessing.connection import Connection
    import socket

    mine, theirs = socket.socketpair()
    parent = Connection(mine.detach())
    parent.send(("limits", None))
    proc = subprocess.Popen([sys.executable, "-m", "harness.serve.collector", str(theirs.fileno()), str(tmp_path),
                             repr(time.monotonic())], pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    theirs.close()
    parent.close()  # gone before the child could say it is ready
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "Traceback" not in err, err
