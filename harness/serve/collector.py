"""The run's sample server in a process of its own, so that delivery does not wait for the
harness's other threads.

Why: the harness process holds one interpreter lock (GIL) for its threads — the runner's
(which drives the browser through Playwright and looks at its processes), the memory probes'
and the server's. On a loaded machine a thread is often descheduled while it holds that lock,
and every other thread then waits for the CPU scheduler to run it again: measured with the
harness sharing one CPU with 6 busy loops (benchmarks/soak.py), the server thread was runnable
but waiting 97% of the time and a step took 1.7–3.6 s (p99) from the worker to samples.jsonl.
In its own process the server waits only for the CPU.

:class:`Collector` is what the runner uses as its sample store: the same interface as
:class:`harness.store.store.SampleStore` (``register``, ``cells``, ``append``, ``end``,
``step_at``, ``elapsed_s``, ``full``, ``close``) plus :meth:`Collector.serving`, which starts the
HTTP server (harness/serve/app.py) in the child. The child owns ``samples.jsonl`` — every line is
written there, the harness's own samples (memory, cell ends) sent to it in order over a pipe —
and after each change sends the cell's state back; a thread of the parent applies it to
:class:`~harness.store.store.CellState` mirrors, which the runner reads as before. Both sides
use one clock (``time.monotonic`` is system-wide on Linux and macOS: the parent's start is the
child's).

The child ignores Ctrl-C from its start (the parent ends it after writing what it must) and exits
when the pipe closes, so a killed harness leaves no server behind.
"""

from __future__ import annotations

import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Iterator

from harness.store import files
from harness.store import limits as L
from harness.store.runfolder import RunFolderError
from harness.store.store import CellState, step_at

#: Seconds to wait for the child to start (imports under load) and to answer a command.
START_TIMEOUT_S = 60.0
ANSWER_TIMEOUT_S = 30.0

#: CellState fields the child sends back after a change (everything the runner reads).
_FIELDS = ("steps", "last_step", "last_progress_monotonic", "env", "outcome", "reason", "device_lost", "ended",
           "gaps", "missing_steps", "duplicates", "refused", "late", "clock_offset_ms", "limited", "limited_words")


class CollectorDied(RuntimeError):
    """The sample server's process is gone (its message says how)."""


class Collector:
    """A :class:`~harness.store.store.SampleStore` in a child process (module docstring).
    Raises :class:`RunFolderError` like the store when ``samples.jsonl`` is a link or not a
    regular file, :class:`CollectorDied` when the child does not start."""

    def __init__(self, run_dir: Path, limits: L.SampleLimits | None = None):
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / "samples.jsonl"
        self.limits = limits or L.SampleLimits()
        self.cells: dict[str, CellState] = {}
        self.full: files.DiskFull | None = None
        self.dropped_after_full = 0
        #: why the child is gone, once it went unasked (None while it runs, and after close())
        self.died: str | None = None
        self._closing = False
        self._t0 = time.monotonic()
        self._lock = threading.Lock()
        self._answers: queue.Queue = queue.Queue()
        # a program of its own (python -m harness.serve.collector), not multiprocessing's spawn,
        # which would import the caller's __main__ again (a benchmark script, a user's script)
        mine, theirs = socket.socketpair()
        self._conn = Connection(mine.detach())
        self._send_lock = threading.Lock()
        fd = theirs.fileno()
        # started with SIGINT blocked (a mask survives fork and exec): a Ctrl-C during the child's
        # imports stays pending until it ignores the signal, instead of a KeyboardInterrupt traceback
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            self._proc = subprocess.Popen([sys.executable, "-m", "harness.serve.collector", str(fd), str(self.run_dir),
                                           repr(self._t0)], pass_fds=(fd,), stdin=subprocess.DEVNULL)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        theirs.close()
        self._send(("limits", self.limits))
        self._reader = threading.Thread(target=self._read, name="harness-collector", daemon=True)
        self._reader.start()
        kind, what = self._answer(START_TIMEOUT_S, "start")
        if kind == "error":
            self._wait(5)
            if what.startswith("runfolder:"):
                raise RunFolderError(what[len("runfolder:"):])
            raise CollectorDied(what)

    # --- the SampleStore interface -------------------------------------------------------
    def elapsed_s(self) -> float:
        """Seconds since the store was opened (the run's clock; the child's too)."""
        return time.monotonic() - self._t0

    def register(self, cell: str, config: dict[str, Any]) -> CellState:
        with self._lock:
            state = self.cells[cell] = CellState(config=config)
        self._send(("register", cell, config))
        return state

    def has_cell(self, cell: str) -> bool:
        return cell in self.cells

    def config(self, cell: str) -> dict[str, Any]:
        return self.cells[cell].config

    def append(self, cell: str, samples: list[dict[str, Any]]) -> int:
        """Send harness-side samples to be written (in order with the page's). Returns 0 (the
        seq is the child's)."""
        if cell not in self.cells:
            raise KeyError(cell)
        if samples:
            self._send(("append", cell, samples))
        return 0

    def end(self, cell: str, why: str) -> None:
        state = self.cells.get(cell)
        if state is not None:
            state.ended = state.ended or why
            self._send(("end", cell, why))

    def step_at(self, cell: str, time_s: float) -> int | None:
        """As :meth:`harness.store.store.SampleStore.step_at`, on the mirrored state."""
        state = self.cells[cell]
        with self._lock:
            return step_at(list(state.step_times), state.last_step, time_s)

    def close(self) -> None:
        """Write what is pending, close ``samples.jsonl`` in the child and end it."""
        self._closing = True
        if self._proc.poll() is None and self.died is None:
            try:
                self._send(("close",))
                self._answer(ANSWER_TIMEOUT_S, "close")
            except CollectorDied:
                pass
        if not self._wait(5):
            self._proc.kill()
            self._wait(5)
        try:
            self._conn.close()
        except OSError:
            pass

    def _wait(self, timeout_s: float) -> bool:
        try:
            self._proc.wait(timeout=timeout_s)
            return True
        except subprocess.TimeoutExpired:
            return False

    # --- the HTTP server -----------------------------------------------------------------
    @contextmanager
    def serving(self, roots: dict[str, Path], token: str | None, hosts: list[str], host: str = "127.0.0.1",
                port: int = 0, tls: tuple[Path, Path] | None = None) -> Iterator["Served"]:
        """Start harness/serve/app.py's app over this store in the child (as
        :class:`harness.serve.app.ServerThread` would); yields what has ``url``. Raises
        RuntimeError when it does not start."""
        from harness.serve.app import free_port

        port = port or free_port(host)
        self._send(("serve", {"roots": {k: str(v) for k, v in roots.items()}, "token": token, "hosts": hosts,
                              "host": host, "port": port, "tls": [str(p) for p in tls] if tls else None}))
        kind, what = self._answer(START_TIMEOUT_S, "serve")
        if kind == "error":
            raise RuntimeError(what)
        served = Served("https" if tls else "http", host, port)
        try:
            yield served
        finally:
            if self.died is None:
                try:
                    self._send(("unserve",))
                    self._answer(ANSWER_TIMEOUT_S, "unserve")
                except CollectorDied:
                    pass

    # --- the pipe ------------------------------------------------------------------------
    def _send(self, message: tuple) -> None:
        """Send a command; to a child that is gone, ``serve``/``close`` raise
        :class:`CollectorDied` and the rest are dropped (the runner reads :attr:`died`)."""
        if self.died is not None:
            if message[0] in ("serve", "close"):
                raise CollectorDied(self.died)
            return
        try:
            with self._send_lock:
                self._conn.send(message)
        except (OSError, EOFError, BrokenPipeError) as exc:
            self.died = self.died or f"the harness's sample server (pid {self._proc.pid}) is gone ({exc})"
            if message[0] in ("serve", "close"):
                raise CollectorDied(self.died) from None

    def _answer(self, timeout_s: float, what: str) -> tuple[str, str]:
        try:
            return self._answers.get(timeout=timeout_s)
        except queue.Empty:
            raise CollectorDied(self.died or f"the harness's sample server did not answer '{what}' within "
                                              f"{timeout_s:g} s") from None

    def _read(self) -> None:
        while True:
            try:
                msg = self._conn.recv()
            except (EOFError, OSError):
                self._wait(2)
                if self._closing:
                    self._answers.put(("closed", ""))
                    return
                code = self._proc.returncode
                self.died = self.died or (f"the harness's sample server (pid {self._proc.pid}) exited"
                                          + (f" (code {code})" if code is not None else ""))
                self._answers.put(("error", self.died))
                return
            kind = msg[0]
            if kind == "state":
                self._apply(msg[1], msg[2])
            elif kind == "full":
                self.full = files.DiskFull(msg[1])
                self.dropped_after_full = msg[2]
            else:
                self._answers.put((kind, msg[1] if len(msg) > 1 else ""))

    def _apply(self, cell: str, fields: dict[str, Any]) -> None:
        state = self.cells.get(cell)
        if state is None:
            return
        with self._lock:
            for name, value in fields.items():
                if name == "step_times":
                    state.step_times.extend(value)
                elif name == "gaps":
                    state.gaps = [tuple(g) for g in value]
                elif name in ("limited", "limited_words"):
                    setattr(state, name, {tuple(k): v for k, v in value})
                elif name == "last_progress_monotonic":
                    # only forward: the runner sets it at the cell's start, which the child never hears of
                    # (its value is the registration time until the page reports: the run's start)
                    state.last_progress_monotonic = max(state.last_progress_monotonic, value)
                else:
                    setattr(state, name, value)
        if state.outcome is not None:
            state.finished.set()

    def __del__(self):  # pragma: no cover - a last resort; close() is what the runner calls
        try:
            if self._proc.poll() is None:
                self._proc.kill()
        except Exception:
            pass


class Served:
    """What :meth:`Collector.serving` yields: the server's scheme, host, port and ``url``."""

    def __init__(self, scheme: str, host: str, port: int):
        self.scheme, self.host, self.port = scheme, host, port

    @property
    def url(self) -> str:
        from harness.serve.urls import local_base

        return local_base(self.scheme, self.host, self.port)


# --------------------------------------------------------------------------------- the child

def _child_main(conn, run_dir: str, t0: float) -> None:
    """The sample server process: a SampleStore, the HTTP server when asked, the pipe."""
    from harness.store.store import SampleStore

    try:
        first = conn.recv()
    except (EOFError, OSError):
        return
    limits = first[1] if first[0] == "limits" else None

    try:
        store = SampleStore(Path(run_dir), limits)
    except RunFolderError as exc:
        conn.send(("error", f"runfolder:{exc}"))
        return
    except OSError as exc:
        conn.send(("error", f"{run_dir}/samples.jsonl: {exc.strerror or exc}"))
        return
    store._t0 = t0  # one clock with the parent
    out: queue.Queue = queue.Queue()
    sent: dict[str, int] = {}  # cell → the last step whose time was sent
    lock = threading.Lock()

    def changed(cell: str) -> None:
        state = store.cells.get(cell)
        if state is None:
            return
        with lock, store._lock:  # a copy, taken while the store does not change it
            fields = {name: getattr(state, name) for name in _FIELDS}
            for name in ("gaps", "missing_steps"):
                fields[name] = list(fields[name])
            fields["clock_offset_ms"] = dict(state.clock_offset_ms)
            fields["limited"] = list(state.limited.items())
            fields["limited_words"] = list(state.limited_words.items())
            new = [t for t in state.step_times if t[1] > sent.get(cell, -1)]
            if new:
                sent[cell] = new[-1][1]
            fields["step_times"] = new
        out.put(("state", cell, fields))
        if store.full is not None:
            out.put(("full", str(store.full.path), store.dropped_after_full))

    _watch(store, changed)

    def sender() -> None:
        for msg in iter(out.get, None):  # None: the end
            try:
                conn.send(msg)
            except (OSError, EOFError):
                return

    threading.Thread(target=sender, name="collector-sender", daemon=True).start()
    try:
        conn.send(("ready", ""))
    except (OSError, EOFError):  # the harness is gone already (a Ctrl-C as it started us): no traceback
        return store.close()
    server = None
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):  # the harness is gone
            break
        kind = msg[0]
        try:
            if kind == "register":
                store.register(msg[1], msg[2])
            elif kind == "append":
                store.append(msg[1], msg[2])
                changed(msg[1])
            elif kind == "end":
                store.end(msg[1], msg[2])
            elif kind == "serve":
                server = _serve(store, msg[1])
                out.put(("served", ""))
            elif kind == "unserve":
                if server is not None:
                    server.__exit__(None, None, None)
                    server = None
                out.put(("unserved", ""))
            elif kind == "close":
                if server is not None:
                    server.__exit__(None, None, None)
                    server = None
                store.close()
                out.put(("closed", ""))
                break
        except Exception as exc:  # a failed start of the server: said to the parent, the child goes on
            out.put(("error", " ".join(str(exc).split()) or type(exc).__name__))
    if server is not None:
        server.__exit__(None, None, None)
    store.close()
    out.put(None)
    time.sleep(0.2)


def _watch(store, changed) -> None:
    """Call ``changed(cell)`` after each page batch (and limit) the store takes."""
    def watched(method):
        def call(cell, *a, **k):
            try:
                return method(cell, *a, **k)
            finally:
                changed(cell)
        return call

    store.append_batch, store.limit = watched(store.append_batch), watched(store.limit)


def _serve(store, spec: dict):
    from harness.serve.app import ServerThread, create_app

    app = create_app(store, {k: Path(v) for k, v in spec["roots"].items()}, token=spec["token"], hosts=spec["hosts"])
    tls = tuple(Path(p) for p in spec["tls"]) if spec["tls"] else None
    server = ServerThread(app, host=spec["host"], port=spec["port"], tls=tls)
    server.__enter__()
    return server


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and then ends us (a pending
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # one, from our start, is dropped)
    _child_main(Connection(int(sys.argv[1])), sys.argv[2], float(sys.argv[3]))
