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
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from harness import environment
from harness.browsers import BROWSERS, BrowserNotFound, BrowserSession, Located
from harness.probes.process_memory import DEFAULT_INTERVAL_S, ProcessMemoryProbe
from harness.server import DEFAULT_ROOTS, ServerThread, create_app
from harness.store import SampleStore
from harness.workloads import Workload


#: Emulated WebGPU defaults: one 16 KiB page per shader stage with bindings (WebKit BindGroup.mm,
#: page rounding an assumption matching the field report's ~14 KB per bind group at 150,000 /
#: 2,048 MB; references.md), and WebKit's Metal limits on A14+ GPUs (HardwareCapabilities.mm),
#: which onnxruntime-web's kernels need (9+ storage buffers per stage).
DEFAULT_EMULATION = {"bytesPerStage": 16384, "pageBytes": 16384, "limits": "webkit-apple7"}


def version_from_user_agent(ua: str) -> str:
    """Browser version from a user agent: Chrome/…, Firefox/…, else Safari's Version/…; '' if none."""
    import re

    for pattern in (r"(?:HeadlessChrome|Chrome|Chromium)/([\d.]+)", r"Firefox/([\d.]+)", r"Version/([\d.]+)"):
        m = re.search(pattern, ua or "")
        if m:
            return m.group(1)
    return ""


@dataclass
class Cell:
    """One measured combination. ``status``: pending → ok / failed / skipped."""

    cell: str
    browser: str
    workload: str
    variant: str
    profile: str | None
    tokens: int
    repetition: int = 0
    seed: int = 1
    params: dict[str, Any] = field(default_factory=dict)
    browser_version: str = ""
    adapter: str = ""
    webgpu: str = ""
    status: str = "pending"
    reason: str = ""


@dataclass
class RunPlan:
    """What to run. ``variants``/``profiles`` map workload name → chosen names."""

    browsers: list[str]
    workloads: list[Workload]
    variants: dict[str, list[str]]
    profiles: dict[str, str | None]
    tokens: int = 64
    seed: int = 1
    params: dict[str, Any] = field(default_factory=dict)
    repeat: int = 1
    headed: bool = False
    browser_path: str | None = None
    browser_args: list[str] = field(default_factory=list)
    #: extra folders the server serves: URL prefix → folder (e.g. a --model's folder)
    extra_roots: dict[str, Path] = field(default_factory=dict)
    without_browser_args: list[str] = field(default_factory=list)
    memory_interval_s: float = DEFAULT_INTERVAL_S
    heap_interval_s: float = 1.0
    start_timeout_s: float = 90.0
    step_timeout_s: float = 120.0
    probes: bool = True
    webgpu: str = "auto"  # auto | real | emulated
    #: options of installEmulatedWebGPU (web/emulation/webgpu-emulated.js): memory model and limits
    emulation_options: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_EMULATION))
    #: bytes; marks the token at which the content process would exceed it (iOS jetsam)
    memory_budget_bytes: int | None = None

    def cells(self) -> list[Cell]:
        """Every cell, per browser in round-robin order: repetition r of every workload × variant
        before repetition r+1 (r0 fresh, r0 reuse, r1 fresh, r1 reuse…), so drift during a
        browser's session hits every variant alike."""
        return [c for browser in self.browsers for rep in range(self.repeat)
                for c in self.repetition_cells(browser, rep)]

    def repetition_cells(self, browser: str, rep: int) -> list[Cell]:
        """Repetition ``rep`` of every workload × variant of ``browser``."""
        out = []
        for wl in self.workloads:
            for variant in self.variants[wl.name]:
                profile = self.profiles.get(wl.name)
                cid = f"{browser}.{wl.name}.{variant}.{profile or 'default'}.r{rep}"
                out.append(Cell(cid, browser, wl.name, variant, profile, self.tokens, rep, self.seed,
                                {**wl.defaults(), **self.params}))
        return out


Progress = Callable[[str, Cell, dict], None]


def _lost_or(state, status: str, reason: str) -> tuple[str, str]:
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
                                         "parameters": self._parameters(), "browsers": {}, "cells": []}

    def _parameters(self) -> dict[str, Any]:
        p = self.plan
        return {"browsers": p.browsers, "workloads": [w.name for w in p.workloads], "variants": p.variants,
                "profiles": p.profiles, "tokens": p.tokens, "seed": p.seed, "params": p.params,
                "repeat": p.repeat, "headed": p.headed, "browser_args": p.browser_args,
                "without_browser_args": p.without_browser_args, "probes": p.probes, "webgpu": p.webgpu,
                "emulation_options": p.emulation_options, "memory_budget_bytes": p.memory_budget_bytes,
                "memory_interval_s": p.memory_interval_s, "step_timeout_s": p.step_timeout_s}

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
        app = create_app(self.store, {**DEFAULT_ROOTS, **self.plan.extra_roots})
        try:
            with ServerThread(app) as server:
                for browser in self.plan.browsers:
                    self._run_browser(browser, [c for c in pending if c.browser == browser], server.url)
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
                self._record_env(cell, state.env if state else None)
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
        driver = BROWSERS[browser]()
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
                if session is None or session.dead():
                    if session is not None:
                        session.close()
                    session = self._launch(driver, located)
                    if isinstance(session, str):  # launch failures fail the cell, the run goes on
                        self._finish(cell, "failed", f"browser launch failed: {session}")
                        session = None
                        continue
                    self.manifest["browsers"][browser]["version"] = session.version
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
        memory = ProcessMemoryProbe(self.store, cell.cell, session.processes, self.plan.memory_interval_s)
        try:
            session.open(f"{base_url}/web/runner.html?cell={cell.cell}")
        except Exception as exc:
            self._finish(cell, "failed", f"could not open the runner page: {str(exc).splitlines()[0]}")
            return
        memory.start()
        last_heap = 0.0
        last_refresh = 0.0
        seen_steps = 0
        try:
            while not state.finished.is_set():
                session.pump(0.1)
                now = time.monotonic()
                if now - last_refresh > 1.0:
                    memory.refresh(session.processes())
                    last_refresh = now
                if self.plan.heap_interval_s > 0 and now - last_heap > self.plan.heap_interval_s:
                    memory.sample_heap(session.worker_heap())
                    last_heap = now
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
                    self._finish(cell, *_lost_or(state, "failed", f"timed out: no sample for {idle:.0f} s {where}"))
                    return
        finally:
            memory.stop()
        self._record_env(cell, state.env)
        if state.device_lost is not None and state.outcome != "skip":
            then = "the workload finished" if state.outcome == "done" else f"workload error: {state.reason}"
            self._finish(cell, *_lost_or(state, "failed", then))
        elif state.outcome == "done":
            self._finish(cell, "ok", "")
        elif state.outcome == "skip":
            self._finish(cell, "skipped", state.reason)
        else:
            self._finish(cell, "failed", f"workload error: {state.reason}")

    def _record_env(self, cell: Cell, env: dict | None) -> None:
        if not env:
            return
        a = env.get("adapter") or {}
        parts = [a.get("vendor"), a.get("architecture")] if a.get("architecture") else [a.get("vendor"), a.get("description")]
        cell.adapter = " ".join(x for x in parts if x)
        cell.webgpu = env.get("webgpu", "")
        if not cell.browser_version:  # serve: a browser we did not launch; its user agent says what it is
            cell.browser_version = version_from_user_agent(env.get("user_agent", ""))

    def _finish(self, cell: Cell, status: str, reason: str) -> None:
        self._record_env(cell, self.store.cells[cell.cell].env)
        cell.status, cell.reason = status, reason
        self.store.append(cell.cell, [{"kind": "cell_status", "status": status, "reason": reason}])
        self.write_manifest()
        self.progress("end", cell, {"status": status, "reason": reason})
