"""The session's one real-browser recording, shared by the tests of ``make test``.

Lighthouse's habit (gather once, audit many times): a few ``webgpu-harness`` invocations in real
Chromium and WebKitGTK are started in the background as soon as pytest has collected a test that
reads them, while the tests that need no browser run; the tests that read them run last
(tests/conftest.py orders them) and wait for the recording they need.

:data:`RECORDINGS` names each invocation; a test reads one through the session fixtures of
tests/conftest.py (``shared_decode``, ``shared_ort``, ``shared_app``; ``decode_run`` is the
Chromium half of ``shared_decode``). A test that needs a run of its own is ``@pytest.mark.full``
(``make test-full``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: Steps of each app in the shared app recording (tokens of a decoder, steps of a compute app).
APP_STEPS = 4
#: Test apps (tests/apps/) in the shared app recording: a decoder (Transformers.js in a module
#: worker) and a compute page (main thread).
APPS = ("transformers", "main-thread")

#: name → (arguments of ``python -m harness``, whether it needs the test apps' server). The
#: test-app URLs are filled in at start (``{apps}``: the server's base URL).
RECORDINGS: dict[str, tuple[tuple[str, ...], bool]] = {
    # decode-loop tiny, fresh + reuse, Chromium (real WebGPU on SwiftShader) and WebKitGTK
    # (emulated), checked against the CPU reference, with a memory budget
    "decode": (("run", "--browser", "chromium,webkit", "--workload", "decode-loop", "--profile", "tiny",
                "--tokens", "24", "--param", "verify=true", "--memory-budget", "2048MB"), False),
    # a short ort-decode: onnxruntime-web's WebGPU EP as shipped, the bind-group cache and the
    # forced-GC workaround (static KV cache: the cache's hits are exact), Chromium
    "ort": (("run", "--browser", "chromium", "--workload", "ort-decode", "--profile", "tiny", "--tokens", "48",
             "--variant", "default,bind-group-cache,force-gc", "--param", "kvCache=static"), False),
    # one decoder and one compute app, unmodified, in Chromium through both injection paths
    "app": (("app", *(f"{{apps}}/{a}/?tokens={APP_STEPS}&steps={APP_STEPS}" for a in APPS), "-b", "chromium",
             "--inject", "cdp,proxy", "--steps", str(APP_STEPS), "--start-timeout", "240", "--idle", "120"), True),
    # the same apps in WebKitGTK (proxy, emulated WebGPU)
    "app-webkit": (("app", *(f"{{apps}}/{a}/?tokens={APP_STEPS}&steps={APP_STEPS}" for a in APPS), "-b", "webkit",
                    "--steps", str(APP_STEPS), "--start-timeout", "240", "--idle", "120"), True),
}
#: Recordings run one after another in each lane; lanes run side by side, and beside the tests
#: that need no browser (2 cores).
LANES = (("decode", "app-webkit"), ("ort", "app"))


@dataclass
class Recorded:
    """What one recording left: exit status, console output, its run folder and how long it took (s)."""

    name: str
    returncode: int
    stdout: str
    stderr: str
    run_dir: Path
    seconds: float


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class SharedRecording:
    """Runs the needed recordings in background lanes (:meth:`start`: one thread per lane, each
    recording of a lane after the one before it) and hands each one out once it has finished
    (:meth:`get`). The test apps' server (tests/apps/server.py) runs as a process of its own while
    an app recording needs it."""

    root: Path
    needed: set[str]
    timeout_s: float = 1500
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)
    done: dict[str, Recorded] = field(default_factory=dict)
    finished: dict[str, threading.Event] = field(default_factory=dict)
    threads: list[threading.Thread] = field(default_factory=list)
    server: subprocess.Popen | None = None
    apps_url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: bool = False

    def _start_server(self) -> None:
        with self.lock:
            if self.server is not None:
                return
            port = free_port()
            self.server = subprocess.Popen([sys.executable, str(REPO / "tests" / "apps" / "server.py"), "--port", str(port)],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            self.apps_url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1):
                        return
                except OSError:
                    if self.server.poll() is not None:
                        break
                    time.sleep(0.1)
        raise RuntimeError(f"the test apps' server (tests/apps/server.py) did not start on port {port}")

    def _record(self, name: str) -> None:
        args, needs_apps = RECORDINGS[name]
        d = self.root / name
        d.mkdir(parents=True, exist_ok=True)
        t0 = time.monotonic()
        try:
            if needs_apps:
                self._start_server()
            cmd = [sys.executable, "-m", "harness", *(a.replace("{apps}", self.apps_url) for a in args),
                   "--output", str(d / "run")]
            with open(d / "stdout.txt", "w") as out, open(d / "stderr.txt", "w") as err:
                with self.lock:
                    if self.stopping:
                        raise RuntimeError("the session ended first")
                    p = self.procs[name] = subprocess.Popen(cmd, cwd=REPO, stdout=out, stderr=err,
                                                            env={**os.environ, "COLUMNS": "200"})
                try:
                    p.wait(timeout=self.timeout_s)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
                    err.write(f"\n(tests/shared_run.py: killed after {self.timeout_s:.0f} s)\n")
            code = p.returncode
        except Exception as e:          # the recording could not start: its readers fail saying why
            (d / "stderr.txt").write_text(f"tests/shared_run.py: {e}\n")
            (d / "stdout.txt").touch()
            code = -1
        self.done[name] = Recorded(name, code, (d / "stdout.txt").read_text(), (d / "stderr.txt").read_text(),
                                   d / "run", time.monotonic() - t0)
        self.finished[name].set()

    def _lane(self, names: list[str]) -> None:
        for n in names:
            self._record(n)

    def start(self) -> None:
        """Starts one thread per lane that has a needed recording."""
        for lane in LANES:
            names = [n for n in lane if n in self.needed]
            for n in names:
                self.finished[n] = threading.Event()
            if names:
                t = threading.Thread(target=self._lane, args=(names,), name=f"shared-{'+'.join(names)}", daemon=True)
                self.threads.append(t)
                t.start()

    def get(self, name: str) -> Recorded:
        """The finished recording ``name`` (waits for it). Raises ``KeyError`` for one not started."""
        self.finished[name].wait()
        return self.done[name]

    def stop(self) -> None:
        """Ends whatever still runs (an interrupted session) and the apps' server."""
        with self.lock:
            self.stopping = True
            procs = list(self.procs.values())
        for p in procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    p.kill()
        for t in self.threads:
            t.join(timeout=60)
        if self.server is not None and self.server.poll() is None:
            self.server.terminate()
            try:
                self.server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.server.kill()


def make_root(config) -> Path:
    """A fresh folder for the session's recordings: under pytest's base temporary folder (kept for
    the last 3 sessions, like every ``tmp_path``), or a new temporary folder."""
    factory = getattr(config, "_tmp_path_factory", None)
    return factory.mktemp("shared") if factory is not None else Path(tempfile.mkdtemp(prefix="webgpu-harness-shared-"))
