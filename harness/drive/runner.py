"""Runs a plan of cells (browser × workload × variant × profile) and records everything.

One browser launch serves all of its cells; each cell gets a fresh browser context. A cell
ends when the worker posts ``done``, ``error`` or ``skip``, when the browser dies, or when no
sample arrives for ``step_timeout_s``. Whatever was received stays in ``samples.jsonl``; the
cell is marked ``failed`` with the reason, or ``device-lost`` when the worker reported a lost
GPUDevice (a ``device_lost`` sample) before it ended.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

from harness.drive.base import BrowserNotFound, BrowserSession, Located
from harness.drive.registry import driver_for
from harness.plan import Cell, RunPlan
from harness.probe import process_memory
from harness.probe.base import ProbeContext
from harness.probe.registry import PROBES
from harness.serve.app import ServerThread, create_app, default_roots
from harness.serve.urls import runner_url
from harness.store import environment
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


def lost_or(state, status: str, reason: str) -> tuple[str, str]:
    """(``device-lost``, why) when the worker reported a lost device, else (status, reason)."""
    lost = state.device_lost
    if lost is None:
        return status, reason
    where = "before the first step" if lost.get("step") is None else f"at step {lost['step']}"
    return "device-lost", (f"device lost {where} ({lost.get('reason')}: {lost.get('message')}); then {reason}; "
                           f"{state.steps} steps were received and kept")


def cell_config(cell: Cell, wl: Workload, plan: RunPlan) -> dict[str, Any]:
    """The JSON the worker bootstrap fetches from ``/api/cells/<cell>``."""
    profile = dict(wl.profiles.get(cell.profile, {})) if cell.profile else {}
    # --param KEY=VALUE where KEY is a profile dimension overrides that dimension
    profile.update({k: v for k, v in cell.params.items() if k in profile})
    return {
        "cell": cell.cell,
        "entry_url": wl.entry_url,
        "probes": bool(cell.params.get("probes", plan.probes)),
        "webgpu": plan.webgpu,
        "emulation_module": "/web/emulation/webgpu-emulated.js",
        "emulation_options": plan.emulation_options,
        "params": {**cell.params, "workload": wl.name, "variant": cell.variant,
                   "profileName": cell.profile, "profile": profile, "tokens": cell.tokens, "seed": cell.seed},
    }


class Runner:
    """Executes a :class:`RunPlan` into ``run_dir``. ``progress(event, cell, info)`` is called on
    ``start``, ``step`` and ``end`` of each cell."""

    def __init__(self, plan: RunPlan, run_dir: Path, progress: Progress | None = None, argv: list[str] | None = None):
        self.plan = plan
        self.run_dir = Path(run_dir)
        self.progress = progress or (lambda *a: None)
        self.store = SampleStore(self.run_dir)
        self.cells = plan.cells()
        self.workloads = {w.name: w for w in plan.workloads}
        self.manifest: dict[str, Any] = {**environment.describe(), "argv": argv or [],
                                         "parameters": plan.parameters(), "browsers": {}, "cells": []}
        #: (certificate, key) the server uses under --https (set by the command before run())
        self.tls = plan.tls_files

    def write_manifest(self) -> None:
        self.manifest["cells"] = [asdict(c) for c in self.cells]
        path = self.run_dir / "manifest.json"
        path.write_text(json.dumps(self.manifest, indent=2, default=str))

    def run(self, close: bool = True) -> list[Cell]:
        """Run every pending cell. ``close=False`` keeps the sample store open so that
        :meth:`add_repetition` and another ``run`` can follow (``--auto-sample``)."""
        pending = [c for c in self.cells if c.status == "pending"]
        for cell in pending:
            self.store.register(cell.cell, cell_config(cell, self.workloads[cell.workload], self.plan))
        self.write_manifest()
        app = create_app(self.store, {**default_roots(), **self.plan.extra_roots})
        try:
            with ServerThread(app, host=self.plan.host, port=self.plan.port, tls=self.tls) as server:
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
                    self.store.append(cell.cell, [{"kind": "cell_status", "status": "failed", "reason": cell.reason}])

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
                if session is None or session.dead():
                    if session is not None:
                        session.close()
                    session = self._launch(driver, located)
                    if isinstance(session, str):  # launch failures fail the cell, the run goes on
                        self._finish(cell, "failed", f"browser launch failed: {session}")
                        session = None
                        continue
                    self.manifest["browsers"][browser]["version"] = session.version
                    if self.plan.https and hasattr(session, "context_options"):
                        session.context_options["ignore_https_errors"] = True  # our own certificate
                self._run_cell(session, cell, base_url)
                if cell.status == "failed" and cell.reason.startswith("could not open the runner page"):
                    # the browser lives but cannot load pages (e.g. its network process died):
                    # the next cell gets a fresh browser
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

    def _run_cell(self, session: BrowserSession, cell: Cell, base_url: str) -> None:
        state = self.store.cells[cell.cell]
        state.last_sample_monotonic = time.monotonic()  # the start timeout counts from now, not from registration
        cell.browser_version = session.version
        self.progress("start", cell, {})
        try:
            session.open(runner_url(base_url, cell.cell))
        except Exception as exc:
            self._finish(cell, "failed", f"could not open the runner page: {str(exc).splitlines()[0]}")
            return
        cell.platform, cell.memory = session.platform, process_memory.describe(session)
        ctx = ProbeContext(self.store, cell.cell, session, self.plan)
        probes = [P(ctx) for P in PROBES if P.enabled(self.plan)]
        started = []
        seen_steps = 0
        try:
            for probe in probes:
                probe.start()
                started.append(probe)
            while not state.finished.is_set():
                session.pump(0.1)
                now = time.monotonic()
                for probe in started:
                    probe.poll(now)
                if state.steps != seen_steps:
                    seen_steps = state.steps
                    self.progress("step", cell, {"steps": seen_steps})
                why = session.dead()
                if why:
                    self._finish(cell, "failed", f"{why}; {state.steps} steps were received and kept")
                    return
                idle = now - state.last_sample_monotonic
                limit = self.plan.start_timeout_s if state.env is None else self.plan.step_timeout_s
                if idle > limit:
                    where = "before the worker reported" if state.env is None else (
                        "before the first step" if state.last_step is None else f"after step {state.last_step}")
                    self._finish(cell, *lost_or(state, "failed", f"timed out: no sample for {idle:.0f} s {where}"))
                    return
        finally:
            for probe in reversed(started):
                try:
                    probe.stop()
                except Exception:  # a probe's failure to stop never hides the cell's outcome
                    pass
        self.record_env(cell, state.env)
        if state.device_lost is not None and state.outcome != "skip":
            then = "the workload finished" if state.outcome == "done" else f"workload error: {state.reason}"
            self._finish(cell, *lost_or(state, "failed", then))
        elif state.outcome == "done":
            self._finish(cell, "ok", "")
        elif state.outcome == "skip":
            self._finish(cell, "skipped", state.reason)
        else:
            self._finish(cell, "failed", f"workload error: {state.reason}")

    def record_env(self, cell: Cell, env: dict | None) -> None:
        if not env:
            return
        a = env.get("adapter") or {}
        parts = [a.get("vendor"), a.get("architecture")] if a.get("architecture") else [a.get("vendor"), a.get("description")]
        cell.adapter = " ".join(x for x in parts if x)
        cell.webgpu = env.get("webgpu", "")
        if not cell.browser_version:  # serve: a browser we did not launch; its user agent says what it is
            cell.browser_version = version_from_user_agent(env.get("user_agent", ""))
        if not cell.platform and (cell.endpoint or cell.driver == "manual"):  # remote or by hand: where it ran
            cell.platform = platform_from_user_agent(env.get("user_agent", ""))

    def _finish(self, cell: Cell, status: str, reason: str) -> None:
        self.record_env(cell, self.store.cells[cell.cell].env)
        cell.status, cell.reason = status, reason
        self.store.append(cell.cell, [{"kind": "cell_status", "status": status, "reason": reason}])
        self.write_manifest()
        self.progress("end", cell, {"status": status, "reason": reason})
