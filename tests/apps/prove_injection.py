#!/usr/bin/env python3
"""Proof that injected probes see every test app's WebGPU calls from the very first one.

For each app in tests/apps/ (served unmodified by tests/apps/server.py) and each injection path,
open it, wait for the app's own "done", and check the per-step counters against what the app is
known to do (exact totals, counted from step 0):

  chromium × cdp        Playwright init script + browser-level CDP Fetch interception
                        (harness/drive/inject.py, the chosen Chromium path)
  chromium × proxy      the reverse proxy (harness/serve/proxy.py)
  webkit   × proxy      WebKitGTK (MiniBrowser via WebKitWebDriver) through the proxy, emulated
                        WebGPU installed by the bootstrap (the engine has none)
  chromium × route      alternative tried: Playwright context.route rewriting + init script
  chromium × autoattach alternative tried: a second CDP session, Target.setAutoAttach with
                        waitForDebuggerOnStart, bootstrap evaluated in each paused worker

    .venv/bin/python tests/apps/prove_injection.py                      # cdp + proxy + webkit, every app
    .venv/bin/python tests/apps/prove_injection.py --apps main-thread --paths chromium:route,chromium:autoattach
    .venv/bin/python tests/apps/prove_injection.py --overhead --tokens 24   # injection overhead, Chromium cdp

Exit 1 when a chosen path (cdp, proxy) misses a count; the alternatives only report.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))

from server import APPS, Served, create_app  # noqa: E402

from harness.serve.injection import InjectConfig, InjectionCore  # noqa: E402
from harness.serve.proxy import ReverseProxy  # noqa: E402

EXPECTED = json.loads((HERE / "models" / "qwen2-tiny" / "expected.json").read_text())
CONFIG = json.loads((HERE / "models" / "qwen2-tiny" / "config.json").read_text())
DECODERS = ("transformers", "ort-classic", "ort-blob")
COMPUTE = ("main-thread", "nested", "eager-module", "eager-blob")
#: tests/apps/shared/compute.js: calls per step, and the setup calls in step 0 only
COMPUTE_PER_STEP = {"createBindGroup": 3, "dispatchWorkgroups": 3, "submit": 1, "commandBuffersSubmitted": 1,
                    "writeBuffer": 1, "writeBufferBytes": 256, "createCommandEncoder": 1, "mapAsync": 1}
COMPUTE_SETUP = {"createBuffer": 3, "createShaderModule": 1, "createComputePipeline": 1}
CHOSEN = ("chromium:cdp", "chromium:proxy", "webkit:proxy")
ALTERNATIVES = ("chromium:route", "chromium:autoattach")


@dataclass
class Realm:
    id: str
    env: dict
    devices: list[dict] = field(default_factory=list)
    steps: list[dict] = field(default_factory=list)


@dataclass
class AppRun:
    """One app opened once through one path; ``samples`` as the interceptor received them."""

    app: str
    path: str
    status: str
    result: dict
    samples: list[dict]
    seconds: float
    realms: dict[str, Realm] = field(default_factory=dict)
    workers: list[dict] = field(default_factory=list)

    def __post_init__(self) -> None:
        for s in self.samples:
            if s["kind"] == "env":
                self.realms[s["realm"]] = Realm(s["realm"], s)
        for s in self.samples:
            r = self.realms.get(s.get("realm"))
            if s["kind"] == "device" and r:
                r.devices.append(s)
            elif s["kind"] == "step" and r:
                r.steps.append(s)
            elif s["kind"] == "worker":
                self.workers.append(s)
        for r in self.realms.values():
            r.steps.sort(key=lambda s: s["step"])

    def device_realms(self) -> list[Realm]:
        return [r for r in self.realms.values() if r.devices]

    def counter(self, name: str) -> list[int]:
        """Per-step counts of ``name`` in the one realm that made a device ([] if none)."""
        rs = self.device_realms()
        return [s["counters"][name] for s in rs[0].steps] if len(rs) == 1 else []

    def uninstrumented_workers(self) -> list[str]:
        seen = {r.env.get("worker_id") for r in self.realms.values()}
        return [w["url"] for w in self.workers if w["worker_id"] not in seen]


def app_url(base: str, app: str, tokens: int, steps: int) -> str:
    return f"{base}/{app}/?tokens={tokens}&steps={steps}"


# --------------------------------------------------------------------------------------------
# Checks: what each app is known to do. Each returns a list of failures (empty: proven).

def check(run: AppRun, tokens: int, steps: int, emulated: bool) -> list[str]:
    bad: list[str] = []
    if not run.status.startswith("done"):
        return [f"app did not finish: {run.status!r}"]
    missing = run.uninstrumented_workers()
    if missing:
        bad.append(f"workers without probes: {missing}")
    for r in run.realms.values():
        if len(r.env.get("probes_installed", [])) < 10:
            bad.append(f"realm {r.env.get('realm_url')}: probes not installed ({r.env.get('probes_installed')})")
        want = "emulated" if emulated else "real"
        if r.env.get("webgpu") != want:
            bad.append(f"realm {r.env.get('realm_url')}: webgpu {r.env.get('webgpu')}, expected {want}")
    if run.app == "no-device":
        if run.device_realms():
            bad.append("a device was reported by the page that never creates one")
        if len(run.realms) != 2:
            bad.append(f"expected the page and its blob: worker to report, got {len(run.realms)} realms")
        return bad
    rs = run.device_realms()
    if len(rs) != 1:
        return bad + [f"expected exactly one realm with a device, got {len(rs)}"]
    realm = rs[0]
    if run.app == "main-thread" and realm.env["realm_kind"] != "page":
        bad.append(f"main-thread app measured in a {realm.env['realm_kind']}")
    if run.app == "nested" and not realm.env["realm_url"].split("?")[0].endswith("/nested/inner.js"):
        bad.append(f"nested app measured in {realm.env['realm_url']}, expected inner.js")
    n = steps if run.app in COMPUTE else tokens
    if len(realm.steps) != n:
        bad.append(f"{len(realm.steps)} steps, expected {n} (one per resolved mapAsync)")
    if [s["step"] for s in realm.steps] != list(range(len(realm.steps))):
        bad.append("steps not numbered from 0")
    if run.app in COMPUTE:
        for s in realm.steps:
            c = s["counters"]
            for k, v in COMPUTE_PER_STEP.items():
                if c[k] != v:
                    bad.append(f"step {s['step']}: {k} {c[k]}, expected {v}")
            for k, v in COMPUTE_SETUP.items():
                want = v if s["step"] == 0 else 0
                if c[k] != want:
                    bad.append(f"step {s['step']}: {k} {c[k]}, expected {want}")
        if not emulated and run.result.get("values") != [8 * i + 7 for i in range(steps)]:
            bad.append(f"values read back {run.result.get('values')}, expected 8s+7")
        return bad
    # decoders: one bind group per dispatch in every step, one logits read-back per token;
    # step 0 holds session creation (pipelines) and the prefill
    bg, disp = run.counter("createBindGroup"), run.counter("dispatchWorkgroups")
    if bg != disp:
        bad.append(f"createBindGroup per step {bg} != dispatchWorkgroups {disp}")
    if run.counter("mapAsync") != [1] * len(bg):
        bad.append(f"mapAsync per step {run.counter('mapAsync')}, expected 1 each")
    first = realm.steps[0]["counters"] if realm.steps else {}
    if first.get("createComputePipeline", 0) + first.get("createComputePipelineAsync", 0) + first.get("createShaderModule", 0) == 0:
        bad.append("step 0 has no pipeline creation: the session was created before the probes")
    if len(set(bg[1:])) > 1:
        bad.append(f"decode steps differ: {bg}")
    if not emulated and run.result.get("tokens") != EXPECTED["tokens"][:tokens]:
        bad.append(f"tokens {run.result.get('tokens')} != onnxruntime CPU {EXPECTED['tokens'][:tokens]}")
    return bad


# --------------------------------------------------------------------------------------------
# Browsers and paths

def wait_done_playwright(page, timeout_s: float) -> str:
    page.wait_for_function("() => /^(done|failed)/.test(document.getElementById('status')?.textContent ?? '')",
                           timeout=timeout_s * 1000)
    return page.eval_on_selector("#status", "e => e.textContent")


def finish(page_eval, pump, end_step: bool = False) -> None:
    """Flush the page realm (ending its open step first when ``end_step``), then give workers'
    batched samples (≤100 ms) time to arrive."""
    try:
        if end_step:
            page_eval("globalThis.__webgpuHarness?.endStep()")
        page_eval("globalThis.__webgpuHarness?.flush()")
    except Exception:
        pass
    pump(0.6)


class ChromiumPaths:
    """One Chromium (Playwright, system Chromium) for every chromium:* path."""

    def __init__(self, headed: bool = False) -> None:
        from playwright.sync_api import sync_playwright

        from harness.drive.chromium import CHROMIUM_FLAGS

        self._pw = sync_playwright().start()
        self.browser = self._pw.chromium.launch(executable_path="/usr/bin/chromium", headless=not headed,
                                                args=CHROMIUM_FLAGS)
        self.version = self.browser.version

    def run(self, mechanism: str, app: str, base: str, core: InjectionCore, tokens: int, steps: int,
            timeout_s: float, end_step: bool = False) -> AppRun:
        ctx = self.browser.new_context()
        extra = None
        try:
            page = ctx.new_page()
            url = app_url(base, app, tokens, steps)
            proxy = None
            if mechanism == "cdp":
                from harness.drive.inject import ChromiumInjector

                extra = ChromiumInjector(core)
                extra.attach(self.browser, ctx)
            elif mechanism == "proxy":
                proxy = ReverseProxy(base, core).__enter__()
                url = proxy.url_for(url)
            elif mechanism == "route":
                from alternatives import attach_route

                extra = attach_route(ctx, core)
            elif mechanism == "autoattach":
                from alternatives import attach_autoattach

                extra = attach_autoattach(self.browser, ctx, page, core)
            elif mechanism != "none":
                raise ValueError(mechanism)
            t0 = time.monotonic()
            page.goto(url)
            status = wait_done_playwright(page, timeout_s)
            seconds = time.monotonic() - t0
            result = json.loads(page.eval_on_selector("#result", "e => e.textContent") or "{}")
            finish(page.evaluate, lambda s: page.wait_for_timeout(s * 1000), end_step)
            if proxy:
                proxy.__exit__(None, None, None)
            return AppRun(app, f"chromium:{mechanism}", status, result, list(core.samples), seconds)
        finally:
            if extra is not None and hasattr(extra, "detach"):
                extra.detach()
            ctx.close()

    def close(self) -> None:
        self.browser.close()
        self._pw.stop()


class WebKitPaths:
    """WebKitGTK through WebKitWebDriver (harness/browsers/webdriver.py), proxy path only."""

    def __init__(self) -> None:
        from harness.drive.webkit import WebKitGTKDriver

        driver = WebKitGTKDriver()
        for attempt in range(3):  # Xvfb sometimes exits at once here ("exited right after taking display")
            try:
                self.session = driver.launch(driver.locate())
                break
            except RuntimeError:
                if attempt == 2:
                    raise
                time.sleep(2)
        self.version = self.session.version

    def run(self, app: str, base: str, core: InjectionCore, tokens: int, steps: int, timeout_s: float) -> AppRun:
        with ReverseProxy(base, core) as proxy:
            t0 = time.monotonic()
            self.session.open(proxy.url_for(app_url(base, app, tokens, steps)))
            status = ""
            while time.monotonic() - t0 < timeout_s:
                status = self.session.evaluate("document.getElementById('status')?.textContent ?? ''") or ""
                if status.startswith(("done", "failed")):
                    break
                time.sleep(0.5)
            seconds = time.monotonic() - t0
            result = json.loads(self.session.evaluate("document.getElementById('result')?.textContent || '{}'") or "{}")
            finish(self.session.evaluate, time.sleep)
        return AppRun(app, "webkit:proxy", status, result, list(core.samples), seconds)

    def close(self) -> None:
        self.session.close()


# --------------------------------------------------------------------------------------------

def describe(run: AppRun) -> str:
    rs = run.device_realms()
    if not rs:
        return f"{run.path:20} {run.app:12} {run.status[:30]:30} realms={len(run.realms)} no device"
    r = rs[0]
    bg, disp = run.counter("createBindGroup"), run.counter("dispatchWorkgroups")
    return (f"{run.path:20} {run.app:12} {run.status[:30]:30} realms={len(run.realms)} "
            f"device in {r.env['realm_kind']}/{r.env.get('script_type') or '-'}: steps={len(r.steps)} "
            f"createBindGroup={bg} (total {sum(bg)}) dispatch total {sum(disp)} "
            f"step0 pipelines={r.steps[0]['counters']['createComputePipeline'] if r.steps else '-'} {run.seconds:.0f}s")


def prove(paths: list[str], apps: list[str], tokens: int, steps: int, isolated: bool, timeout_s: float) -> int:
    failures = 0
    runs: list[AppRun] = []
    with Served(create_app(isolated=isolated)) as srv:
        chromium = ChromiumPaths() if any(p.startswith("chromium:") for p in paths) else None
        webkit = WebKitPaths() if "webkit:proxy" in paths else None
        try:
            for path in paths:
                browser, mechanism = path.split(":")
                for app in apps:
                    core = InjectionCore(InjectConfig())
                    try:
                        if browser == "chromium":
                            run = chromium.run(mechanism, app, srv.url, core, tokens, steps, timeout_s)
                        else:
                            run = webkit.run(app, srv.url, core, tokens, steps, timeout_s)
                    except Exception as exc:  # an alternative may hang or break the app
                        run = AppRun(app, path, f"failed: {type(exc).__name__}: {str(exc).splitlines()[0]}", {},
                                     list(core.samples), 0.0)
                    runs.append(run)
                    bad = check(run, tokens, steps, emulated=browser == "webkit")
                    print(describe(run), flush=True)
                    for b in bad:
                        print(f"    {'FAIL' if path in CHOSEN else 'miss'}: {b}", flush=True)
                    if bad and path in CHOSEN:
                        failures += 1
        finally:
            if chromium:
                print(f"chromium {chromium.version}")
                chromium.close()
            if webkit:
                print(f"webkit {webkit.version}")
                webkit.close()
    # the decoders agree with each other on every path (same model, same ORT build)
    for path in paths:
        per_token = {r.app: r.counter("createBindGroup")[1:] for r in runs if r.path == path and r.app in DECODERS}
        if len({tuple(v) for v in per_token.values()}) > 1:
            print(f"{path}: decoders differ per token: {per_token}")
            failures += path in CHOSEN
    return failures


def overhead(tokens: int, rounds: int, isolated: bool, timeout_s: float, apps: list[str]) -> None:
    """Median ms per token (tokens 2.., the app's own clock) without and with injection (cdp),
    alternating in one Chromium; prints the ratio. Not a test: timing on a shared machine."""
    with Served(create_app(isolated=isolated)) as srv:
        chromium = ChromiumPaths()
        try:
            for app in apps:
                times: dict[str, list[float]] = {"none": [], "cdp": [], "proxy": []}
                for _ in range(rounds):
                    for mech in times:
                        run = chromium.run(mech, app, srv.url, InjectionCore(InjectConfig()), tokens, tokens, timeout_s)
                        ms = run.result.get("msPerToken") or run.result.get("msPerStep") or []
                        times[mech].append(statistics.median(ms[2:]) if len(ms) > 2 else float("nan"))
                base = statistics.median(times["none"])
                for mech in ("cdp", "proxy"):
                    m = statistics.median(times[mech])
                    print(f"{app}: median ms/token without injection {base:.2f}, with {mech} {m:.2f}: "
                          f"ratio {m / base:.3f} (rounds: none {[round(x, 1) for x in times['none']]}, "
                          f"{mech} {[round(x, 1) for x in times[mech]]}; Chromium {chromium.version}, SwiftShader)")
        finally:
            chromium.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--apps", default=",".join(APPS), help=f"comma-separated, of {', '.join(APPS)}")
    ap.add_argument("--paths", default=",".join(CHOSEN), help=f"of {', '.join(CHOSEN + ALTERNATIVES)}")
    ap.add_argument("--tokens", type=int, default=4)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--isolated", action="store_true", help="serve the apps with COOP/COEP")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per app")
    ap.add_argument("--overhead", action="store_true", help="measure injection overhead instead")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args(argv)
    apps = args.apps.split(",")
    paths = args.paths.split(",")
    bad = [a for a in apps if a not in APPS] + [p for p in paths if p not in CHOSEN + ALTERNATIVES]
    if bad:
        print(f"unknown: {', '.join(bad)} (apps: {', '.join(APPS)}; paths: {', '.join(CHOSEN + ALTERNATIVES)})")
        return 2
    if args.overhead:
        overhead(args.tokens, args.rounds, args.isolated, args.timeout, apps)
        return 0
    return 1 if prove(paths, apps, args.tokens, args.steps, args.isolated, args.timeout) else 0


if __name__ == "__main__":
    sys.exit(main())
