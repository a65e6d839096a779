"""Runs the cells of ``webgpu-harness app``: a user's unmodified app in each browser, with the
probes injected into its page and every worker it starts (web/inject/).

Per cell (app × browser × injection path × repetition), in a fresh browser context:

  1. the app's URL must answer (an HTTP GET from the harness; unreachable or ≥ 400: failed);
  2. an :class:`~harness.serve.injection.InjectionCore` holds the bootstrap and takes the
     realms' samples; ``cdp`` attaches :class:`~harness.drive.inject.ChromiumInjector` to the new
     context before the page navigates, ``proxy`` opens the app through a
     :class:`~harness.serve.proxy.ReverseProxy`;
  3. the page actions (``--wait-for``/``--click``/``--fill`` in order, then ``--script``) run
     while the harness-side probes (memory per process, worker heap) keep sampling;
  4. the cell ends when the measured realm reached ``--steps``, after ``--duration`` seconds
     from opening, or ``--idle`` seconds after the app's last step; with no step
     ``--start-timeout`` seconds after the actions it ends too;
  5. the page realm is flushed (and, for ``interval:`` steps, its open step ended) and the
     workers' batches (sent at most 100 ms after a step) are given 0.6 s to arrive.

The *measured realm* is the page, frame or worker global that made a GPUDevice and reported the
most steps; steps.csv keeps its steps with every other realm's calls placed on them by time
(harness/placement.py), samples.jsonl keeps every realm's. A cell never ends ``ok`` or
``skipped`` on a partial or empty measurement (:meth:`AppRunner._verdict`):

  - no device in any instrumented realm, while the app started a worker or frame the bootstrap
    could not enter: ``failed``, naming it (it may have done the GPU work);
  - no device and the app failed (an uncaught error, an unhandled rejection): ``failed`` with it;
  - no device otherwise: ``skipped``, "no WebGPU device";
  - a device but no step, or steps that all counted zero calls, while the app failed: ``failed``
    with the first error; a device but no step otherwise: ``failed`` (try another ``--step-on``);
  - fewer steps than ``--steps``: ``failed``.

What makes an ``ok`` cell partial or eventful — a worker or frame not measured, a device lost or
made again, the app's errors — is the manifest cell's ``warnings`` (:func:`harness.serve.realms.measurement_warnings`).
"""

from __future__ import annotations

import time
from contextlib import ExitStack
from dataclasses import dataclass
from urllib.parse import urlsplit

from harness.app_plan import AppCell, AppPlan, idle_limit
from harness.drive.actions import ActionFailed, perform, run_script
from harness.drive.base import BrowserSession, adapter_text
from harness.drive.runner import Runner
from harness.probe.base import ProbeContext
from harness.probe.registry import PROBES
from harness.serve.injection import InjectConfig, InjectionCore
from harness.serve.realms import LATE, RealmWatch, describe_problem, measurement_warnings, short_url

#: Seconds the workers' last batches get to arrive after the page was flushed (web/inject/
#: transport.js sends a queued sample within 100 ms; the rest is slack for a loaded machine).
FLUSH_WAIT_S = 0.6
#: Seconds the harness's GET of the app URL may take.
REACH_TIMEOUT_S = 10.0


@dataclass
class AppProbeContext(ProbeContext):
    """A probe context whose ``token()`` is the measured realm's last step received. (The
    analysis puts every harness-side sample on the measured realm's steps by the time it was
    taken: harness/placement.py; the ``token`` written with a sample is what was known then.)"""

    watch: RealmWatch | None = None

    def token(self) -> int | None:
        return self.watch.last_step() if self.watch is not None else None

    def token_at(self, time_s: float) -> int | None:
        """The measured realm's last step received (which realm is measured is known only at the end)."""
        return self.token()


def reachable(url: str) -> str | None:
    """None when ``url`` answers a GET with a status below 400, else the reason (one line)."""
    import httpx

    try:
        with httpx.Client(follow_redirects=True, timeout=REACH_TIMEOUT_S, trust_env=False) as client:
            with client.stream("GET", url) as r:
                status = r.status_code
    except httpx.HTTPError as exc:
        return f"the app at {url} is unreachable ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
    return f"the app at {url} answered HTTP {status}" if status >= 400 else None



def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _stalled(requests: list, app_url: str) -> str | None:
    """``the app's page stalled after its headers: …`` when the proxy (harness/serve/proxy.py
    request records) got the page's response headers but not its whole body, and no error: an
    upstream that stopped sending (the page load then times out, saying only that), else None."""
    from harness.serve.rewrite import DOCUMENT_DESTS

    page = urlsplit(app_url).path or "/"
    for r in requests:
        if not r.whole and not r.error and (r.dest in DOCUMENT_DESTS or r.path.split("?", 1)[0] == page):
            of = f" of its {int(r.length):,}" if (r.length or "").isdigit() else ""
            return (f"the app's page stalled after its headers: {r.method} {r.path[:200]}: the upstream answered "
                    f"HTTP {r.status} in {r.ms:,.0f} ms, then sent only {r.got:,}{of} bytes before the page load gave up")
    return None


class AppRunner(Runner):
    """Executes an :class:`~harness.app_plan.AppPlan` into ``run_dir`` (module docstring).
    The browser loop, launches, manifest and sample store are :class:`Runner`'s."""

    plan: AppPlan
    #: an app's samples come through the injection path in this process, not the run's server
    uses_collector = False

    def run(self, close: bool = True) -> list:
        pending = [c for c in self.cells if c.status == "pending"]
        for cell in pending:
            self.store.register(cell.cell, {"app_url": cell.app_url, "inject": cell.inject})
        self.write_manifest()
        try:
            for browser in self.plan.browsers:
                self._run_browser(browser, [c for c in pending if c.browser == browser], "")
        except KeyboardInterrupt:
            self.mark_unfinished("interrupted (Ctrl-C or SIGTERM) before this cell finished")
            raise
        finally:
            self.write_manifest()
            if close:
                self.store.close()
        return self.cells

    def record_env(self, cell, env) -> None:
        """App cells take adapter and WebGPU from their measured realm (:meth:`_describe`)."""

    def _run_cell(self, session: BrowserSession, cell: AppCell, base_url: str, last_try: bool = True) -> bool:
        """One app cell in ``session``; always True (an app cell is never retried in a fresh
        browser: what it did is the measurement)."""
        watch = RealmWatch()
        try:
            self._run_app_cell(session, cell, watch)
        except Exception as exc:  # a harness bug or a driver failure: the cell fails, the run goes on
            if cell.status == "pending":
                self._describe(cell, watch)
                self._finish(cell, "failed", f"harness error: {type(exc).__name__}: {_one_line(exc)}; "
                                             f"{watch.steps()} steps were received and kept")
        return True

    def _run_app_cell(self, session: BrowserSession, cell: AppCell, watch: RealmWatch) -> None:
        plan = self.plan
        cell.browser_version = session.version
        # over the sample limits first (refused samples are neither checked nor counted as steps)
        core = InjectionCore(InjectConfig(step_on=plan.step_on, webgpu=plan.webgpu,
                                          emulation_options=dict(plan.emulation_options), probes=plan.probes),
                             on_samples=lambda batch: self.store.append(
                                 cell.cell, watch.accept(self.store.limit(cell.cell, batch))))
        self.progress("start", cell, {})
        problem = reachable(cell.app_url)
        if problem:
            self._finish(cell, "failed", problem)
            return
        opened = time.monotonic()
        proxy = None
        with ExitStack() as stack:
            try:
                if cell.inject == "proxy":
                    from harness.serve.proxy import ReverseProxy

                    proxy = stack.enter_context(ReverseProxy(cell.app_url, core))
                    session.open(proxy.url_for(cell.app_url))
                else:
                    from harness.drive.inject import ChromiumInjector

                    injector = ChromiumInjector(core)
                    stack.callback(injector.detach)
                    session.open(cell.app_url, before_goto=injector.attach)
            except Exception as exc:
                self._describe(cell, watch)
                stalled = _stalled(proxy.requests, cell.app_url) if proxy is not None else None
                self._finish(cell, "failed", (f"{stalled}; then: " if stalled else "") + f"could not open the app "
                             f"({cell.inject}): {_one_line(exc)}; {watch.steps()} steps were received and kept")
                return
            try:
                cell.app_title = str(session.evaluate("document.title") or "")[:300]
            except Exception:
                pass
            ctx = AppProbeContext(self.store, cell.cell, session, plan, watch)
            started = []
            try:
                for probe in [P(ctx) for P in PROBES if P.enabled(plan)]:
                    probe.start()
                    started.append(probe)
                ended = self._measure(session, cell, watch, started, opened)
                if not session.dead():
                    self._flush(session)
            finally:
                for probe in reversed(started):
                    try:
                        probe.stop()
                    except Exception:  # a probe's failure to stop never hides the cell's outcome
                        pass
        self._describe(cell, watch)
        if ended:  # after the flush: every step that arrived is counted
            status, reason = ended[0], f"{ended[1]}; {watch.steps()} steps were received and kept"
        else:
            status, reason = self._verdict(watch)
        if proxy is not None:
            status, reason = self._upstream(cell, proxy, status, reason, watch)
        status, reason = self._limits(cell, status, reason)
        self._finish(cell, status, reason)

    def _upstream(self, cell: AppCell, proxy, status: str, reason: str, watch: RealmWatch) -> tuple[str, str]:
        """What the proxy saw (harness/serve/proxy.py request records): an HTML document or
        worker script passed on without the bootstrap (over the injection cap, an encoding it
        cannot decode) is a realm not instrumented; an upstream that failed is the cell's reason,
        ``the app's page failed: …`` (failed when it was a page, or the cell did not end ok)."""
        from harness.serve.rewrite import DOCUMENT_DESTS

        for r in proxy.requests:
            if r.note:
                cell.workers_not_instrumented.append({"url": r.path, "worker_kind": r.dest or "document",
                                                      "script_type": None, "reason": r.note})
        page = urlsplit(cell.app_url).path or "/"
        bad = [r for r in proxy.requests if r.error]
        docs = [r for r in bad if r.dest in DOCUMENT_DESTS or r.path.split("?", 1)[0] == page]
        first = (docs or bad or [None])[0]
        kept = f"{watch.steps()} steps were received and kept"
        if first is not None:
            failed = f"the app's page failed: {first.method} {first.path[:200]}: {first.error}"
            if docs:
                return "failed", f"{failed}; {kept}"
            if status != "ok":
                return status, f"{failed}; then: {reason}"
        uninjected = next((r for r in proxy.requests if r.note and (r.dest in DOCUMENT_DESTS or r.path == page)), None)
        if uninjected is not None and status == "skipped":
            return "failed", f"the app's page was not instrumented: {uninjected.path[:200]}: {uninjected.note}"
        return status, reason

    def _limits(self, cell: AppCell, status: str, reason: str) -> tuple[str, str]:
        """A cell whose realms posted beyond the sample limits (harness/store/limits.py) is
        incomplete, saying how many samples were refused and which cap."""
        state = self.store.cells.get(cell.cell)
        if state is None or not state.limited:
            return status, reason
        problem = state.delivery_problem() or ""
        if status == "ok":
            return "incomplete", f"the app ran but {problem}"
        return status, f"{reason}; {problem}" if reason else problem

    def _measure(self, session: BrowserSession, cell: AppCell, watch: RealmWatch, probes: list,
                 opened: float) -> tuple[str, str] | None:
        """Page actions, then wait for the cell's end (module docstring). Returns (``failed``,
        why) when the cell failed on the way, None when it ended normally."""
        plan = self.plan
        seen = [0]

        def tick() -> str | None:
            session.pump(0.1)
            now = time.monotonic()
            for probe in probes:
                probe.poll(now)
            if self.full():  # nothing more can be recorded
                return self.full()
            m = watch.measured()
            if m is not None and m.steps != seen[0]:
                seen[0] = m.steps
                self.progress("step", cell, {"steps": m.steps})
            if m is not None and (m.env or {}).get("realm_kind") in ("worker", "sharedworker", "serviceworker"):
                session.watch_worker(m.env.get("realm_url") or "")
            return session.dead()

        try:
            perform(plan.actions, session.page_object(), tick, plan.action_timeout_s)
            if plan.script is not None:
                run_script(plan.script, session.page_object())
        except ActionFailed as exc:
            return "failed", str(exc)
        ready = time.monotonic()
        before, longest = ready, 0.0  # the last step seen, the longest wait for a step (--idle auto)
        while True:
            why = tick()
            if why:
                return "failed", why
            now = time.monotonic()
            if plan.steps and watch.steps() >= plan.steps:
                return None
            if plan.duration_s and now - opened >= plan.duration_s:
                return None
            last = watch.last_step_monotonic()
            if last is None and now - ready > plan.start_timeout_s:
                return None
            if last is not None and last > before:
                longest, before = max(longest, last - before), last
            self.idle_s = idle_limit(plan.idle_s, longest)
            if last is not None and not plan.duration_s and now - max(last, ready) > self.idle_s:
                return None

    def _flush(self, session: BrowserSession) -> None:
        """Send what the page realm queued (ending its open step first for ``interval:`` steps)
        and give the workers' last batches time to arrive."""
        try:
            if self.plan.step_on.startswith("interval:"):
                session.evaluate("globalThis.__webgpuHarness?.endStep() ?? null")
            session.evaluate("globalThis.__webgpuHarness?.flush().then(() => true) ?? null")
        except Exception:  # the page navigated away or the app replaced it: nothing to flush
            pass
        session.pump(FLUSH_WAIT_S)

    def _verdict(self, watch: RealmWatch) -> tuple[str, str]:
        """The cell's status and reason from what its realms reported (module docstring): a
        measurement that is partial or empty never ends ``ok`` or ``skipped`` quietly."""
        plan = self.plan
        m = watch.measured()
        # what ended the wait: --duration when it came first, else --start-timeout after the actions
        waited = (f"within --duration {plan.duration_s:g} s of opening the page"
                  if plan.duration_s and plan.duration_s <= plan.start_timeout_s
                  else f"within {plan.start_timeout_s:g} s of the page actions")
        problem = watch.first_problem()
        missed = [f"{w.get('worker_kind') or 'worker'} {short_url(w['url'])} ({w['reason']})" for w in watch.not_instrumented()]
        missed += [f"frame {short_url(f['url'])} ({f['reason']})" for f in watch.frames_not_instrumented()
                   if f.get("instrumented") is not LATE]
        if m is None:
            realms = len(watch.realms)
            if missed:
                return "failed", (f"no instrumented realm made a GPUDevice ({realms} realm(s) instrumented) and the app "
                                  f"started what the probes could not enter, which may have done the GPU work: not "
                                  f"measured: {'; '.join(missed[:3])}" + (f"; first error: {describe_problem(problem)}"
                                                                          if problem else ""))
            if problem:
                return "failed", f"the app failed before any realm made a GPUDevice: {describe_problem(problem)}"
            return "skipped", (f"no WebGPU device ({realms} realm(s) instrumented, none asked for a GPUDevice "
                               f"{waited})")
        if m.steps == 0:
            if problem:
                return "failed", f"no step ended and the app failed: {describe_problem(problem)}"
            return "failed", (f"the app made a GPUDevice but no step ended (--step-on {plan.step_on}) "
                              f"{waited}; try another --step-on, e.g. interval:1000")
        if watch.calls() == 0 and problem:
            return "failed", (f"every step counted zero WebGPU calls and the app failed: {describe_problem(problem)}; "
                              f"{m.steps} steps were received and kept")
        if plan.steps and m.steps < plan.steps:
            idle = getattr(self, "idle_s", None) or idle_limit(plan.idle_s, 0.0)
            return "failed", (f"the app stopped after {m.steps} of --steps {plan.steps} (no step for {idle:g} s"
                              f"{'' if plan.idle_s is not None else ', --idle auto'})"
                              + (f"; first error: {describe_problem(problem)}" if problem else "")
                              + f"; {m.steps} steps were received and kept")
        return "ok", ""

    def _describe(self, cell: AppCell, watch: RealmWatch) -> None:
        """What the probes found, into the manifest cell (harness/app_plan.py ``AppCell``)."""
        m = watch.measured()
        cell.realms = [r.describe() for r in watch.realms.values()]
        cell.workers_not_instrumented = watch.not_instrumented()
        cell.frames_not_instrumented = watch.frames_not_instrumented()
        cell.warnings = measurement_warnings(watch)
        page = next((r for r in watch.realms.values() if (r.env or {}).get("realm_kind") == "page"), None)
        env = (m.env if m else None) or (page.env if page else None) or {}
        cell.webgpu = {"real": "real", "emulated": "emulated"}.get(env.get("webgpu"), cell.webgpu)
        if m is None:
            return
        cell.adapter = adapter_text((m.device or {}).get("adapter") or {})
        cell.realm, cell.step_kind = m.id, "+".join(sorted(m.triggers))
        cell.realm_kind, cell.realm_url = env.get("realm_kind") or "", env.get("realm_url") or ""
        cell.script_type = env.get("script_type") or ""
        if not self.plan.steps:
            cell.tokens = m.steps
