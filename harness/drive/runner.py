"""Runs a plan of cells (browser × workload × variant × profile) and records everything.

One browser launch serves all of its cells; each cell gets a fresh browser context. A cell
ends when the worker posts ``done``, ``error`` or ``skip``, when the browser (or the process
that hosts the page, or the driver) dies, or when it makes no progress — no new step, workload
heartbeat or end (harness/store/store.py) — for ``step_timeout_s`` (``start_timeout_s`` before
the worker reported). Whatever was received stays in ``samples.jsonl``; the cell is marked
``failed`` with the reason, ``device-lost`` when the worker reported a lost GPUDevice (a
``device_lost`` sample) before it ended, or ``incomplete`` when it finished but samples were
lost on the way or steps are missing. Browser processes that exit during a cell are recorded
(``process_exit`` samples) and named first in a failure's reason.

The module is a little over 400 lines: the cell loop and every way a cell ends (the worker's
word, a dead process, a timeout, a full disk) read best side by side.

The run folder is claimed when the runner is made (harness/store/runfolder.py ``claim``: of two
runs started on one folder, the second gets :class:`RunFolderError`). A full disk fails the cell
running with ``<file>: no space left on device`` and every cell after it without starting it;
what was written stays readable (harness/store/store.py keeps a reserve for the cells' ends).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

import psutil

from harness.drive.base import BrowserNotFound, BrowserSession, Located, adapter_text, raise_lost_interrupt
from harness.drive.registry import driver_for
from harness.plan import Cell, RunPlan
from harness.probe import process_memory
from harness.probe.base import ProbeContext
from harness.drive import processes as procs
from harness.drive.reaper import reap_stale, reaped_since_start
from harness.probe.registry import PROBES
from harness.serve import access
from harness.serve.app import ServerThread, create_app, default_roots
from harness.serve.urls import runner_url
from harness.store import environment, files
from harness.store.runfolder import claim
from harness.store.store import SampleStore
from harness.workloads import Workload


def version_from_user_agent(ua: str) -> str:
    """Browser version from a user agent: Chrome/…, Firefox/…, else Safari's Version/…; '' if none."""
    import re

    for pattern in (r"(?:HeadlessChrome|Chrome|Chromium)/([\d.]+)", r"Firefox/([\d.]+)", r"Version/([\d.]+)"):
        m = re.search(pattern, ua or "")
        if m:
            return m.group(1)
    return ""


def platform_from_user_agent(ua: str) -> str:
    """Where a browser we did not launch runs, from its user agent: ``iOS 18.2 (iPhone)``,
    ``iPadOS 17.0 (iPad)``, ``Android 14 (Pixel 8)``, ``macOS``, ``Windows``, ``ChromeOS``,
    ``Linux``; "" if none. (macOS's version in user agents is frozen at 10.15.7, and iPadOS
    Safari asks for desktop sites by default, reporting macOS: both are left as ``macOS``.)"""
    import re

    ua = ua or ""
    m = re.search(r"\((iPhone|iPad|iPod)[^)]*? OS (\d+(?:_\d+)*)", ua)
    if m:
        return f"{'iPadOS' if m.group(1) == 'iPad' else 'iOS'} {m.group(2).replace('_', '.')} ({m.group(1)})"
    m = re.search(r"Android (\d+(?:\.\d+)*)(?:; ([^;)]+))?", ua)
    if m:
        model = (m.group(2) or "").strip()
        return f"Android {m.group(1)}" + (f" ({model})" if model and model != "K" else "")
    for key, name in (("Macintosh", "macOS"), ("Windows", "Windows"), ("CrOS", "ChromeOS"), ("Linux", "Linux")):
        if key in ua:
            return name
    return ""


Progress = Callable[[str, Cell, dict], None]
#: Seconds between looks at the browser's process list (exits are recorded at this pace).
PROCESS_LOOK_S = 0.5
#: Processes that serve every page of a browser (Chrome's and WebKit's names, harness/drive/
#: processes.py ``detail``): watched from one cell into the next of the same browser, so that one
#: dying between cells (a WebKitNetworkProcess killed as a cell ended: the next page's fetch fails
#: "Load failed") is named by the cell it broke. A page's own processes are not carried.
BROWSER_WIDE = ("browser", "gpu-process", "utility (network.mojom.NetworkService)", "MiniBrowser",
                "WebKitNetworkProcess", "WebKitGPUProcess", "Safari", "Networking", "GPU")


def lost_or(state, status: str, reason: str) -> tuple[str, str]:
    """(``device-lost``, why) when the worker reported a lost device, else (status, reason)."""
    lost = state.device_lost
    if lost is None:
        return status, reason
    where = "before the first step" if lost.get("step") is None else f"at step {lost['step']}"
    return "device-lost", (f"device lost {where} ({lost.get('reason')}: {lost.get('message')}); then {reason}; "
                           f"{state.steps} steps were received and kept")


def finish_status(state, status: str, reason: str) -> tuple[str, str]:
    """The status a cell ends with given what its worker said (``status``/``reason``: ok, failed…)
    and how delivery went: ``incomplete`` instead of ``ok`` when samples were lost or steps are
    missing; the loss appended to any other reason."""
    problem = state.delivery_problem()
    if problem is None:
        return status, reason
    if status == "ok":
        return "incomplete", f"the workload finished but {problem}; {state.steps} steps were received and kept"
    return status, f"{reason}; {problem}"


def _with_token(url: str, token: str | None) -> str:
    if not token or not isinstance(url, str) or not url.startswith(("/user-model/", "/user-inputs/")):
        return url
    return f"{url}{'&' if '?' in url else '?'}{access.TOKEN_PARAM}={token}"


#: Longest a worker waits at one ``--gc-checkpoints`` checkpoint for the harness's forced
#: collection (s); at most half the step timeout, so a wait never reads as a hang (web/probes/step.js).
GC_CHECKPOINT_WAIT_S = 10.0


def gc_checkpoint_settings(cell: Cell, plan: RunPlan, forces_collections: bool) -> dict[str, Any]:
    """What the worker is told about ``--gc-checkpoints N`` (nothing when it is off):
    ``gc_checkpoints`` (N) and ``gc_checkpoint_wait_s``, how long the worker waits after steps
    N-1, 2N-1… for the harness to force a collection and say so (web/probes/step.js
    ``checkpoint``): :data:`GC_CHECKPOINT_WAIT_S`, at most half of ``step_timeout_s``; 0 (the
    worker never waits) when the driver cannot force one (``forces_collections`` false: WebKit,
    Safari, WebDriver endpoints, Dawn, ``serve``) or the cell runs on the page's main thread (no
    worker target to collect in)."""
    every = int(getattr(plan, "gc_checkpoints", 0) or 0)
    if every <= 0:
        return {}
    waits = forces_collections and not cell.params.get("main_thread")
    wait_s = min(GC_CHECKPOINT_WAIT_S, float(plan.step_timeout_s) / 2) if waits else 0.0
    return {"gc_checkpoints": every, "gc_checkpoint_wait_s": wait_s}


def cell_config(cell: Cell, wl: Workload, plan: RunPlan, token: str | None = None,
                forces_collections: bool = False) -> dict[str, Any]:
    """The JSON the worker bootstrap fetches from ``/api/cells/<cell>``. A ``--model``'s URLs and
    ort-run's local input files carry the run's ``token`` (those files are served only with it).
    ``forces_collections``: the cell's driver can force a collection in its worker (workers then
    wait at ``--gc-checkpoints``, :func:`gc_checkpoint_settings`)."""
    profile = dict(wl.profiles.get(cell.profile, {})) if cell.profile else {}
    # --param KEY=VALUE where KEY is a profile dimension overrides that dimension
    profile.update({k: v for k, v in cell.params.items() if k in profile})
    params = dict(cell.params)
    if "model" in params:
        params["model"] = _with_token(params["model"], token)
    if isinstance(params.get("inputs"), str):  # ort-run NAME=URL,...: local .npy files (harness/plan.py local_inputs)
        params["inputs"] = ",".join(f"{n}={_with_token(u, token)}" if sep else item
                                    for item in params["inputs"].split(",") for n, sep, u in [item.partition("=")])
    if isinstance(params.get("externalData"), list):
        params["externalData"] = [{**e, "url": _with_token(e.get("url"), token)} if isinstance(e, dict) else e
                                  for e in params["externalData"]]
    return {
        "cell": cell.cell,
        "entry_url": wl.entry_url,
        "probes": bool(cell.params.get("probes", plan.probes)),
        "webgpu": plan.webgpu,
        "emulation_module": "/web/emulation/webgpu-emulated.js",
        "emulation_options": plan.emulation_options,
        "params": {**params, "workload": wl.name, "variant": cell.variant,
                   "profileName": cell.profile, "profile": profile, "tokens": cell.tokens, "seed": cell.seed},
        # what the serve index page lists (harness/serve/app.py): the configuration and repetition,
        # and the --param values this cell got (a sweep's own value included)
        "sweep": dict(cell.sweep),
        "repetition": cell.repetition,
        "given_params": {k: cell.params[k] for k in plan.params if k in cell.params},
        **gc_checkpoint_settings(cell, plan, forces_collections),
    }


class Runner:
    """Executes a :class:`RunPlan` into ``run_dir``. ``progress(event, cell, info)`` is called on
    ``start``, ``step`` and ``end`` of each cell. ``collector``: serve and store the samples in a
    process of their own (harness/serve/collector.py; default :attr:`uses_collector`), so that
    delivery does not wait for this process's threads; False keeps them in this process (``serve``
    builds its own app over the store)."""

    #: whether cells' samples go through the collector process by default
    uses_collector = True

    def __init__(self, plan: RunPlan, run_dir: Path, progress: Progress | None = None, argv: list[str] | None = None,
                 collector: bool | None = None):
        self.plan = plan
        self.run_dir = Path(run_dir)
        self.progress = progress or (lambda *a: None)
        self.cells = plan.cells()
        self.workloads = {w.name: w for w in plan.workloads}
        self.manifest: dict[str, Any] = {**environment.describe(), "argv": argv or [],
                                         "parameters": plan.parameters(), "browsers": {}, "cells": []}
        # the folder is this run's from here on (a second run on it is refused: RunFolderError)
        claim(self.run_dir, {**self.manifest, "cells": [asdict(c) for c in self.cells]})
        limits = getattr(plan, "sample_limits", None)
        if self.uses_collector if collector is None else collector:
            from harness.serve.collector import Collector

            self.store = Collector(self.run_dir, limits)
        else:
            self.store = SampleStore(self.run_dir, limits)
        #: the first full-disk error of a manifest write (the previous manifest was kept)
        self.disk_full: files.DiskFull | None = None
        #: the run's token: the runner page's URL carries it, every API call must (access.py)
        self.token = access.new_token()
        #: processes a killed harness left running, ended when this run started
        self.reaped = reaped_since_start() + reap_stale()
        self._exits: list[dict] = []
        #: (session, its processes watched in the last cell): the BROWSER_WIDE ones go on being watched
        self._carried: tuple = (None, {})
        #: (certificate, key) the server uses under --https (set by the command before run())
        self.tls = plan.tls_files

    def write_manifest(self) -> None:
        """Rewrite manifest.json (temporary file and rename). On a full disk the previous one is
        kept and the error remembered (:attr:`disk_full`): the run goes on to end its cells."""
        self.manifest["cells"] = [asdict(c) for c in self.cells]
        try:
            files.write_atomic(self.run_dir / "manifest.json", json.dumps(self.manifest, indent=2, default=str))
        except files.DiskFull as exc:
            self.disk_full = self.disk_full or exc

    def discard(self) -> None:
        """Give the folder back when nothing was recorded (interrupted before any cell started):
        close the store and remove what the claim made (manifest.json, an empty samples.jsonl),
        and the folder if that leaves it empty. A folder with samples is left as it is."""
        self.store.close()
        samples = self.run_dir / "samples.jsonl"
        try:
            if samples.exists() and samples.stat().st_size:
                return
            samples.unlink(missing_ok=True)
            (self.run_dir / "manifest.json").unlink(missing_ok=True)
            self.run_dir.rmdir()
        except OSError:
            pass

    def full(self) -> str | None:
        """Why nothing more can be recorded, else None: ``<file>: no space left on device`` once
        the disk filled (samples or manifest), or the sample server's process is gone."""
        exc = self.store.full or self.disk_full
        if exc is not None:
            return str(exc)
        return getattr(self.store, "died", None)

    def run(self, close: bool = True) -> list[Cell]:
        """Run every pending cell. ``close=False`` keeps the sample store open so that
        :meth:`add_repetition` and another ``run`` can follow (``--auto-sample``)."""
        pending = [c for c in self.cells if c.status == "pending"]
        forces = {b: driver_for(b, self.plan.remote).forces_collections for b in {c.browser for c in pending}}
        for cell in pending:
            self.store.register(cell.cell, cell_config(cell, self.workloads[cell.workload], self.plan, self.token,
                                                       forces_collections=forces[cell.browser]))
        self.write_manifest()
        roots = {**default_roots(), **self.plan.extra_roots}
        hosts = access.allowed_hosts(self.plan.host, [self.plan.public_url] if self.plan.public_url else [])
        if hasattr(self.store, "serving"):  # the collector: the server runs in its process
            serving = self.store.serving(roots, self.token, hosts, self.plan.host, self.plan.port, self.tls)
        else:
            serving = ServerThread(create_app(self.store, roots, token=self.token, hosts=hosts),
                                   host=self.plan.host, port=self.plan.port, tls=self.tls)
        try:
            with serving as server:
                base = self.plan.public_url or server.url  # --public-url: where a remote browser reaches us
                for browser in self.plan.browsers:
                    self._run_browser(browser, [c for c in pending if c.browser == browser], base)
        except KeyboardInterrupt:
            self.mark_unfinished("interrupted (Ctrl-C or SIGTERM) before this cell finished")
            raise
        finally:
            self.write_manifest()
            if close:
                self.store.close()
        return self.cells

    def mark_unfinished(self, reason: str) -> None:
        """Mark every cell still pending as failed with ``reason`` (samples received are kept)."""
        for cell in self.cells:
            if cell.status == "pending":
                state = self.store.cells.get(cell.cell)
                steps = state.steps if state else 0
                self.record_env(cell, state.env if state else None)
                cell.status, cell.reason = "failed", f"{reason}; {steps} steps were received and kept"
                if state is not None:
                    cell.status, cell.reason = finish_status(state, cell.status, cell.reason)
                    self.store.end(cell.cell, "failed")
                    self.store.append(cell.cell, [{"kind": "cell_status", "status": cell.status, "reason": cell.reason}])

    def add_repetition(self) -> list[Cell]:
        """Append one more repetition of every browser × workload × variant (pending, in the
        round-robin order of :meth:`RunPlan.cells`) and return the new cells."""
        rep = self.plan.repeat
        self.plan.repeat += 1
        self.manifest["parameters"]["repeat"] = self.plan.repeat
        new = [c for browser in self.plan.browsers for c in self.plan.repetition_cells(browser, rep)]
        self.cells += new
        return new

    def _run_browser(self, browser: str, cells: list[Cell], base_url: str) -> None:
        driver = driver_for(browser, self.plan.remote)
        try:
            located = driver.locate(self.plan.browser_path)
        except BrowserNotFound as exc:
            for cell in cells:
                self._finish(cell, "skipped", str(exc))
            return
        self.manifest["browsers"][browser] = asdict(located)
        session: BrowserSession | None = None
        try:
            for cell in cells:
                cell.driver, cell.endpoint = located.driver, located.endpoint
                if self.full():  # nothing more can be recorded: the cell is not started
                    self._finish(cell, "failed", f"{self.full()} (not started)")
                    continue
                for attempt in range(2):
                    if session is None or session.dead():
                        if session is not None:
                            session.close()
                        session = self._launch(driver, located)
                        if isinstance(session, str):  # launch failures fail the cell, the run goes on
                            self._finish(cell, "failed", f"browser launch failed: {session}")
                            session = None
                            break
                        self.manifest["browsers"][browser]["version"] = session.version
                        if self.plan.https and hasattr(session, "context_options"):
                            session.context_options["ignore_https_errors"] = True  # our own certificate
                    opened = self._run_cell(session, cell, base_url, last_try=attempt == 1)
                    if opened:
                        break
                    # the browser lives but cannot load pages (its network process died, WebKit
                    # deleted the session after a hung page): the cell gets a fresh browser
                    session.close()
                    session = None
        finally:
            if session is not None:
                session.close()

    def _launch(self, driver, located: Located, attempts: int = 2) -> BrowserSession | str:
        """Launch, retrying once (a display or port race can fail a first start); the error
        text of the last attempt if none succeeded."""
        error = ""
        for _ in range(attempts):
            try:
                return driver.launch(located, headed=self.plan.headed, extra_args=self.plan.browser_args,
                                     without_args=self.plan.without_browser_args)
            except Exception as exc:
                error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return error

    def _run_cell(self, session: BrowserSession, cell: Cell, base_url: str, last_try: bool = True) -> bool:
        """Run one cell in ``session``. Returns False when the runner page could not be opened
        and ``last_try`` is false (nothing of the cell ran: the caller retries in a fresh browser)."""
        state = self.store.cells[cell.cell]
        state.last_progress_monotonic = time.monotonic()  # the start timeout counts from now, not from registration
        cell.browser_version = session.version
        self.progress("start", cell, {})
        if not last_try:  # a second try keeps what the first saw exit
            self._exits = []
        carried_from, carried = self._carried
        watched = {pid: what for pid, what in carried.items() if what in BROWSER_WIDE} if carried_from is session else {}
        self._carried = (session, watched)
        self._look_at_processes(session, cell, watched, BROWSER_WIDE)  # one gone since the last cell ended
        try:
            session.open(runner_url(base_url, cell.cell, self.token))
        except Exception as exc:
            self._look_at_processes(session, cell, watched, BROWSER_WIDE)  # its network process gone, say
            if not last_try and state.env is None and state.steps == 0:
                return False
            self._finish(cell, "failed", self._blame(f"could not open the runner page (twice, the second time in a "
                                                     f"fresh browser): {str(exc).splitlines()[0]}"))
            return True
        cell.platform, cell.memory = session.platform, process_memory.describe(session)
        ctx = ProbeContext(self.store, cell.cell, session, self.plan)
        probes = [P(ctx) for P in PROBES if P.enabled(self.plan)]
        started = []
        seen_steps = 0
        next_look = 0.0
        try:
            for probe in probes:
                probe.start()
                started.append(probe)
            while not state.finished.is_set():
                session.pump(0.1)
                raise_lost_interrupt()  # a Ctrl-C Python swallowed (a weakref callback) is raised here
                now = time.monotonic()
                for probe in started:
                    probe.poll(now)
                if state.steps != seen_steps:
                    seen_steps = state.steps
                    self.progress("step", cell, {"steps": seen_steps})
                if now >= next_look:  # before env only BROWSER_WIDE ones: the last page's processes end now
                    next_look = now + PROCESS_LOOK_S
                    self._look_at_processes(session, cell, watched, None if state.env is not None else BROWSER_WIDE)
                why = session.dead()
                if why:
                    self._look_at_processes(session, cell, watched)
                    self._end(cell, state, "failed", f"{why}; {state.steps} steps were received and kept")
                    return True
                full = self.full()
                if full:
                    self._end(cell, state, "failed", f"{full}; {state.steps} steps were received and kept")
                    return True
                idle = now - state.last_progress_monotonic
                limit = self.plan.start_timeout_s if state.env is None else self.plan.step_timeout_s
                if idle > limit:
                    where = "before the worker reported" if state.env is None else (
                        "before the first step" if state.last_step is None else f"after step {state.last_step}")
                    self._look_at_processes(session, cell, watched)
                    alive = ", ".join(f"{t} {pid}" for pid, t in sorted(watched.items())) or "none found"
                    self._end(cell, state, "failed", f"timed out: no progress (a new step or a heartbeat) for "
                                                     f"{idle:.0f} s {where}; processes alive: {alive}")
                    return True
        finally:
            for probe in reversed(started):
                try:
                    probe.stop()
                except Exception:  # a probe's failure to stop never hides the cell's outcome
                    pass
        self.record_env(cell, state.env)
        if state.outcome != "done":  # a process that died just before the worker's error is named in it
            self._look_at_processes(session, cell, watched)
        if state.device_lost is not None and state.outcome != "skip":
            then = "the workload finished" if state.outcome == "done" else f"workload error: {state.reason}"
            self._end(cell, state, "failed", then)
        elif state.outcome == "done":
            self._finish(cell, *finish_status(state, "ok", ""))
        elif state.outcome == "skip":
            self._finish(cell, "skipped", state.reason)
        else:
            self._end(cell, state, "failed", f"workload error: {state.reason}")
        return True

    def _end(self, cell: Cell, state, status: str, reason: str) -> None:
        """Finish a cell that did not end ok: ``device-lost`` when the worker reported a lost
        device, the processes that exited named first, delivery losses last."""
        status, reason = lost_or(state, status, reason)
        self._finish(cell, *finish_status(state, status, self._blame(reason)))

    def _look_at_processes(self, session: BrowserSession, cell: Cell, watched: dict[int, str],
                           only: tuple[str, ...] | None = None) -> None:
        """Update ``watched`` (pid → process named for a reason) from the session's processes
        (new ones only of the kinds in ``only`` when given); record a ``process_exit`` sample for
        each one gone since the last look."""
        try:
            now = {p.pid: p for p in session.processes()}
        except Exception:  # a driver that cannot list processes any more: the exits show below
            now = {}
        state = self.store.cells[cell.cell]
        for pid in [p for p in watched if p not in now or not procs.running(p)]:
            what = watched.pop(pid)
            exit_ = {"kind": "process_exit", "pid": pid, "process_type": what, "step": state.last_step}
            self._exits.append(exit_)
            self.store.append(cell.cell, [exit_])
        for pid in now:
            if pid not in watched and procs.running(pid):
                try:
                    what = procs.detail(psutil.Process(pid))
                except Exception:
                    what = now[pid].process_type
                if only is None or what in only:
                    watched[pid] = what

    def _blame(self, reason: str) -> str:
        """``reason`` preceded by the browser processes that exited during the cell, so a
        failure names the process that died (a GPU-process kill is not a mapAsync error)."""
        if not self._exits:
            return reason

        def when(e: dict) -> str:
            return "before the first step" if e["step"] is None else f"after step {e['step']}"

        # the exits at the last step an exit happened at, in the order they came (the first is the
        # cause, the rest its consequences), then the earlier ones: an idle renderer Chromium let
        # go of, or one killed while the run went on, did not end the cell
        at = self._exits[-1]["step"]
        final = [e for e in self._exits if e["step"] == at]
        earlier = [e for e in self._exits if e["step"] != at][::-1]
        text = ", ".join(f"{e['process_type']} (pid {e['pid']})" for e in final[:4]) + f" exited {when(final[0])}"
        if earlier:
            text += " (earlier: " + ", ".join(f"{e['process_type']} (pid {e['pid']}) {when(e)}" for e in earlier[:3]) + ")"
        first = reason.split(";")[0].lower()
        if "exited" in first and ("driver" in first or "xvfb" in first):  # the driver or display died first: the cause
            return f"{reason}; then: {text}"
        return f"{text}; then: {reason}"

    def record_env(self, cell: Cell, env: dict | None) -> None:
        if not env:
            return
        cell.adapter = adapter_text(env.get("adapter") or {})
        cell.webgpu = env.get("webgpu", "")
        if not cell.browser_version:  # serve: a browser we did not launch; its user agent says what it is
            cell.browser_version = version_from_user_agent(env.get("user_agent", ""))
        if not cell.platform and (cell.endpoint or cell.driver == "manual"):  # remote or by hand: where it ran
            cell.platform = platform_from_user_agent(env.get("user_agent", ""))

    def _finish(self, cell: Cell, status: str, reason: str) -> None:
        self.store.end(cell.cell, status)
        self.record_env(cell, self.store.cells[cell.cell].env)
        cell.status, cell.reason = status, reason
        self.store.append(cell.cell, [{"kind": "cell_status", "status": status, "reason": reason}])
        self.write_manifest()
        state = self.store.cells.get(cell.cell)
        self.progress("end", cell, {"status": status, "reason": reason, "steps": state.steps if state else None})
