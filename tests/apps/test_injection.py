"""Injection into unmodified apps, end to end in real browsers: every test app through the
chosen Chromium path (init script + CDP Fetch interception), the reverse proxy in Chromium, and
the proxy in WebKitGTK with emulated WebGPU. Counts start at step 0 and are checked exactly
against what each app does (tests/apps/prove_injection.py ``check``)."""

from __future__ import annotations

import pytest

from conftest import load_run, run_cli
from harness.serve.injection import InjectConfig, InjectionCore
from prove_injection import ChromiumPaths, WebKitPaths, check
from server import Served, create_app

TOKENS, STEPS = 3, 6
COMPUTE_APPS = ("main-thread", "nested", "eager-module", "eager-blob")
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
@pytest.mark.parametrize("app", COMPUTE_APPS)
def test_chromium_sees_every_call_of_compute_apps_from_step_0(chromium, apps, path, app):
    run = chromium_run(chromium, path, app, apps)
    assert check(run, TOKENS, STEPS, emulated=False) == []
    assert run.counter("createBindGroup") == [3] * STEPS


@pytest.mark.parametrize("app", COMPUTE_APPS)
def test_webkit_proxy_sees_every_call_on_emulated_webgpu(webkit, apps, app):
    run = webkit.run(app, apps, InjectionCore(InjectConfig()), TOKENS, STEPS, 120)
    assert check(run, TOKENS, STEPS, emulated=True) == []
    assert all(r.env["shared_array_buffer"] is False for r in run.realms.values())  # WebKitGTK 2.50


def test_decoders_one_bind_group_per_dispatch_equal_across_paths_and_to_ort_decode(chromium, webkit, apps, tmp_path):
    per_token = {}
    for path, app in [("cdp", "transformers"), ("proxy", "transformers"), ("cdp", "ort-classic"), ("proxy", "ort-blob")]:
        run = chromium_run(chromium, path, app, apps)
        assert check(run, TOKENS, STEPS, emulated=False) == [], (path, app)
        per_token[(path, app)] = run.counter("createBindGroup")
    # the same model and onnxruntime-web build through the harness's own page
    r = run_cli("run", "--browser", "chromium", "--workload", "ort-decode", "--profile", "tiny",
                "--tokens", str(TOKENS), "--variant", "default", run_dir=tmp_path / "run")
    assert r.returncode == 0, r.stdout + r.stderr
    steps = load_run(r).cell_steps("default")
    ort_decode = steps["create_bind_group"].tolist()
    assert ort_decode[1:] == steps["dispatch_workgroups"].tolist()[1:]
    for key, counts in per_token.items():
        assert counts == per_token[("cdp", "transformers")], key
        assert abs(counts[-1] - ort_decode[-1]) <= 0.02 * ort_decode[-1], (key, counts, ort_decode)
    # WebKitGTK, emulated WebGPU: one bind group per dispatch too (the emulation's features and
    # limits make ORT pick other kernels, so the count differs from Chromium's)
    wk = webkit.run("transformers", apps, InjectionCore(InjectConfig()), TOKENS, STEPS, 300)
    assert check(wk, TOKENS, STEPS, emulated=True) == []


@pytest.mark.parametrize("path", ["cdp", "proxy"])
def test_no_device_page_reports_no_device(chromium, apps, path):
    run = chromium_run(chromium, path, "no-device", apps)
    assert check(run, TOKENS, STEPS, emulated=False) == []
    assert not run.device_realms() and len(run.realms) == 2
    assert {r.env["webgpu"] for r in run.realms.values()} == {"real"}  # WebGPU there, never used


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
