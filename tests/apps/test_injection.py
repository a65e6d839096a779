"""Injection into unmodified apps under conditions the ``app`` command's tests
(tests/e2e/test_app.py: every app, both Chromium paths and WebKitGTK, exact counts from step 0)
do not set up: COOP/COEP with a strict CSP, a CSP that blocks every fetch, and the step triggers
other than mapAsync. Counts start at step 0 and are checked exactly against what each app does
(tests/apps/prove_injection.py ``check``)."""

from __future__ import annotations

import pytest

from harness.serve.injection import InjectConfig, InjectionCore
from prove_injection import ChromiumPaths, WebKitPaths, check
from server import Served, create_app

pytestmark = pytest.mark.full   # every injection path in real browsers: make test-full

TOKENS, STEPS = 3, 6
CSP = "script-src 'self'; worker-src 'self' blob:; connect-src 'self'"


@pytest.fixture(scope="module")
def apps():
    with Served(create_app()) as srv:
        yield srv.url


@pytest.fixture(scope="module")
def strict_apps():
    """The apps with COOP/COEP (cross-origin isolated) and a CSP without 'unsafe-inline'."""
    with Served(create_app(isolated=True, csp=CSP)) as srv:
        yield srv.url


@pytest.fixture(scope="module")
def chromium():
    c = ChromiumPaths()
    yield c
    c.close()


@pytest.fixture(scope="module")
def webkit():
    w = WebKitPaths()
    yield w
    w.close()


def chromium_run(chromium, path, app, base, config=None, end_step=False):
    core = InjectionCore(config or InjectConfig())
    return chromium.run(path, app, base, core, TOKENS, STEPS, 300, end_step=end_step)


@pytest.mark.parametrize("path", ["cdp", "proxy"])
@pytest.mark.parametrize("app", ["main-thread", "eager-module", "eager-blob"])
def test_coop_coep_and_a_strict_csp_keep_working(chromium, strict_apps, path, app):
    assert chromium_run(chromium, "none", app, strict_apps).status == "done"  # the app itself runs so
    run = chromium_run(chromium, path, app, strict_apps)
    assert check(run, TOKENS, STEPS, emulated=False) == []
    assert all(r.env["cross_origin_isolated"] for r in run.realms.values())


@pytest.mark.parametrize("step_on, steps", [("mapAsync:2", [6, 6, 6]), ("mark:compute-step", [3] * STEPS),
                                            ("console:^compute step \\d+ done$", [3] * STEPS)])
def test_step_triggers(chromium, apps, step_on, steps):
    run = chromium_run(chromium, "cdp", "main-thread", apps, InjectConfig(step_on=step_on))
    assert run.counter("createBindGroup") == steps
    assert {s["extra"]["step_on"] for s in run.device_realms()[0].steps} == {step_on}


def test_interval_steps_lose_no_call(chromium, apps):
    run = chromium_run(chromium, "cdp", "main-thread", apps, InjectConfig(step_on="interval:5"), end_step=True)
    bg = run.counter("createBindGroup")
    assert len(bg) >= 2 and sum(bg) == 3 * STEPS  # the harness ends the open step: nothing lost
    triggers = [s["extra"]["trigger"] for s in run.device_realms()[0].steps]
    assert triggers.count("harness") == 1 and set(triggers) == {"interval", "harness"}


def test_a_csp_that_blocks_every_fetch_still_reports_through_the_devtools_binding(chromium):
    # connect-src 'none': the sample POST is blocked in every realm. Chromium's path hands page
    # batches to a DevTools binding, and a blob: worker relays its batches to the page. (Workers
    # from URLs cannot announce themselves then: see web/inject/README.md.)
    csp = "script-src 'self'; worker-src 'self' blob:; connect-src 'none'"
    with Served(create_app(csp=csp)) as srv:
        for app in ("main-thread", "eager-blob"):
            run = chromium_run(chromium, "cdp", app, srv.url)
            assert check(run, TOKENS, STEPS, emulated=False) == [], app


@pytest.mark.parametrize("app", ["eager-module", "eager-blob"])
def test_webkit_keeps_coop_coep_and_a_strict_csp_working(webkit, strict_apps, app):
    # measured: WebKitGTK evaluates the bootstrap a cross-origin-isolated module worker imports
    # only when the bootstrap's response has COEP itself (harness/serve/injection.py handle)
    run = webkit.run(app, strict_apps, InjectionCore(InjectConfig()), TOKENS, STEPS, 120)
    assert check(run, TOKENS, STEPS, emulated=True) == []
    assert all(r.env["cross_origin_isolated"] for r in run.realms.values())
