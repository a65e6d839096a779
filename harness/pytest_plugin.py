"""pytest plugin: the harness's WebGPU probes in another project's own tests (entry point
``pytest11`` ``webgpu_harness``, pyproject.toml; active wherever the package is installed).

Fixtures:
  ``webgpu_probes``  a function: ``probes = webgpu_probes(page)`` instruments a Playwright
                     Chromium page — its documents and every worker they start, classic, module,
                     ``blob:`` or nested — before the app's first script (the same bootstrap and
                     counters as ``webgpu-harness app --inject cdp``: harness/drive/inject.py).
                     Call it before ``page.goto``. Returns :class:`WebGPUProbes`.
  ``webgpu_browser`` a session-wide Playwright Chromium with WebGPU on (the Chromium
                     ``webgpu-harness run`` finds, with its flags), for suites without a browser
                     fixture of their own (e.g. pytest-playwright's ``page`` works too).

Steps end on each resolved ``GPUBuffer.mapAsync`` by default (one per token for a decoder that
reads its logits back; ``step_on=`` takes the forms of ``app --step-on``); step 0 runs from the
page's first script to the first boundary (library load, pipelines, prefill). Counters are per
step of the *measured realm* (the page or worker that made a GPUDevice and ended the most
steps; harness/serve/realms.py) with every other realm's calls placed on them by time, named as
the columns of steps.csv (RESULTS.md): ``create_bind_group``, ``dispatch_workgroups``,
``submit``, ``bind_groups_live`` …

Nothing heavy is imported until a fixture is used: installing the wheel without the ``measure``
extra leaves every other pytest run untouched.
"""

from __future__ import annotations

from typing import Any

import pytest

#: Seconds a worker's last batch gets to arrive (web/inject/transport.js sends within 100 ms).
FLUSH_WAIT_S = 0.6


class WebGPUProbes:
    """The probes in one Playwright Chromium page (see the module docstring).

    Raises RuntimeError when the page is not Chromium's (the DevTools protocol is needed) or
    belongs to a persistent context without a browser object."""

    def __init__(self, page, step_on: str = "mapAsync", webgpu: str = "auto") -> None:
        from harness.drive.inject import ChromiumInjector
        from harness.serve.injection import InjectConfig, InjectionCore
        from harness.serve.realms import RealmWatch

        context = page.context
        browser = context.browser
        if browser is None or browser.browser_type.name != "chromium":
            raise RuntimeError("webgpu_probes needs a page of a Playwright Chromium browser (DevTools protocol); "
                               "for WebKit or Safari measure the app with `webgpu-harness app URL --inject proxy`")
        self.page = page
        self.watch = RealmWatch()
        self.core = InjectionCore(InjectConfig(step_on=step_on, webgpu=webgpu), on_samples=self.watch.accept)
        self._injector = ChromiumInjector(self.core)
        self._injector.attach(browser, context)

    def flush(self) -> None:
        """Send what the page queued and wait for the workers' last batches."""
        try:
            self.page.evaluate("globalThis.__webgpuHarness?.flush().then(() => true) ?? null")
        except Exception:  # the page closed or navigated away
            pass
        self.page.wait_for_timeout(FLUSH_WAIT_S * 1000)

    def realms(self) -> list[dict[str, Any]]:
        """Every page and worker global that reported: realm id, kind, url, script type,
        whether it made a device, steps."""
        return [r.describe() for r in self.watch.realms.values()]

    def steps(self, flush: bool = True) -> list[dict[str, Any]]:
        """The measured realm's steps in order, each ``{"step", "wall_ms", "cpu_ms", <counter
        columns>, <live-object columns>}``; [] when no realm made a GPUDevice. As in ``app``'s
        steps.csv, every other realm's calls are placed on these steps by time and counted in
        (``realm_<label>_<column>``: each realm's part, when another realm made calls;
        harness/placement.py; the realms' clocks by delivery lag: no round trips here)."""
        import pandas as pd

        from harness.placement import CellClock, attribute_realms
        from harness.store import catalog
        from harness.store import timeline as TL

        if flush:
            self.flush()
        m = self.watch.measured()
        if m is None:
            return []
        columns = {c.name: c.column for c in catalog.counters()}
        samples = list(self.core.samples)
        clock = CellClock()
        for s in samples:
            clock.see(s)
            if s.get("kind") in ("step", "open_step") and s.get("realm") != m.id:
                clock.others.setdefault(str(s.get("realm")), []).append(s)
        rows, ends = [], []
        fit = clock.fit(m.id)
        for s in sorted((s for s in samples if s.get("kind") == "step" and s.get("realm") == m.id),
                        key=lambda s: s["step"]):
            row = {"cell": "c", "step": s["step"], "wall_ms": s.get("wall_ms"), "cpu_ms": s.get("cpu_ms")}
            row.update({columns.get(k, k): v for k, v in (s.get("counters") or {}).items()})
            row.update(s.get("live") or {})
            rows.append(row)
            if fit is not None and s.get("t_ms") is not None:
                ends.append((s["step"], fit.run_s(float(s["t_ms"])), s.get("wall_ms")))
        if rows and len(ends) == len(rows) and clock.others:
            frame = pd.DataFrame(rows)
            _, per_realm = attribute_realms(frame, {"c": {"app_url": "pytest", "realm": m.id, "realms": self.realms()}},
                                            {"c": clock}, {"c": TL.spans(ends)})
            frame = pd.concat([frame, per_realm], axis=1)
            timing = ("wall_ms", "cpu_ms")
            rows = [{k: (None if pd.isna(v) else int(v) if k not in timing and float(v).is_integer() else v)
                     for k, v in r.items() if k != "cell"} for r in frame.to_dict("records")]
        for r in rows:
            r.pop("cell", None)
        return rows

    def counts(self, column: str, flush: bool = True) -> list[int]:
        """One steps column, e.g. ``counts("create_bind_group")``: its value at each step."""
        return [row.get(column) for row in self.steps(flush)]

    def close(self) -> None:
        self._injector.detach()


@pytest.fixture
def webgpu_probes():
    """``webgpu_probes(page, step_on="mapAsync", webgpu="auto")`` → :class:`WebGPUProbes`."""
    made: list[WebGPUProbes] = []

    def instrument(page, step_on: str = "mapAsync", webgpu: str = "auto") -> WebGPUProbes:
        probes = WebGPUProbes(page, step_on=step_on, webgpu=webgpu)
        made.append(probes)
        return probes

    yield instrument
    for p in made:
        p.close()


@pytest.fixture(scope="session")
def webgpu_browser():
    """A Playwright Chromium (``playwright.sync_api.Browser``) with WebGPU enabled, headless."""
    from playwright.sync_api import sync_playwright

    from harness.drive.chromium import CHROMIUM_FLAGS, ChromiumDriver

    located = ChromiumDriver().locate()
    pw = sync_playwright().start()
    browser = pw.chromium.launch(executable_path=located.executable, headless=True, args=CHROMIUM_FLAGS)
    try:
        yield browser
    finally:
        browser.close()
        pw.stop()
