"""``webgpu-harness app URL`` on the real test apps of tests/apps/ (served unmodified by
tests/apps/server.py), in Chromium through both injection paths and in WebKitGTK through the
proxy on emulated WebGPU. Every count is exact and counted from step 0: the injected probes saw
each app's first WebGPU call. One `app` run per browser covers every app (shared fixtures).

Measured values (tests/apps/README.md): the decoders (Transformers.js in a module worker,
onnxruntime-web in a classic and in a ``blob:`` worker, same model and onnxruntime-web build)
create one bind group per dispatch, 29 per token in Chromium — what ``run -w ort-decode -p tiny``
measures — and 27 on WebKitGTK's emulated WebGPU; the compute apps 3 per step.
"""

from __future__ import annotations

import json
import sys

import pandas as pd
import pytest

from conftest import REPO, load_run, run_cli

sys.path.insert(0, str(REPO / "tests" / "apps"))
from server import Served, create_app  # noqa: E402

pytestmark = pytest.mark.full   # browser runs of its own: make test-full

N = 4  # tokens of the decoders, steps of the compute apps
DECODERS = {"transformers": ("worker", "module"), "ort-classic": ("worker", "classic"), "ort-blob": ("worker", "classic")}
COMPUTE = {"main-thread": ("page", ""), "nested": ("worker", "classic"), "eager-module": ("worker", "module"),
           "eager-blob": ("worker", "classic")}
#: tests/apps/shared/compute.js: calls per step (steps.csv columns), and setup calls in step 0 only
COMPUTE_PER_STEP = {"create_bind_group": 3, "dispatch_workgroups": 3, "submit": 1, "command_buffers_submitted": 1,
                    "write_buffer": 1, "write_buffer_bytes": 256, "create_command_encoder": 1, "map_async": 1}
COMPUTE_SETUP = {"create_buffer": 3, "create_shader_module": 1, "create_compute_pipeline": 1}


@pytest.fixture(scope="module")
def apps():
    with Served(create_app()) as srv:
        yield srv.url


def urls(base: str, names) -> list[str]:
    return [f"{base}/{n}/?tokens={N}&steps={N}" for n in names]


def app_run(tmp_path_factory, name: str, *args: str):
    d = tmp_path_factory.mktemp(name) / "run"
    return run_cli("app", *args, run_dir=d, timeout=1500)


@pytest.fixture(scope="module")
def chromium(apps, tmp_path_factory):
    """Every decoder and compute app, Chromium, --inject cdp,proxy: one browser, 14 cells."""
    r = app_run(tmp_path_factory, "chromium", *urls(apps, [*DECODERS, *COMPUTE]), "-b", "chromium",
                "--inject", "cdp,proxy", "--steps", str(N), "--start-timeout", "240", "--idle", "120")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return load_run(r)


@pytest.fixture(scope="module")
def webkit(apps, tmp_path_factory):
    """Every decoder and compute app, WebKitGTK (proxy, emulated WebGPU): one browser, 7 cells."""
    r = app_run(tmp_path_factory, "webkit", *urls(apps, [*DECODERS, *COMPUTE]), "-b", "webkit",
                "--steps", str(N), "--start-timeout", "240", "--idle", "120")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return load_run(r)


@pytest.fixture(scope="module")
def ort_decode(tmp_path_factory):
    """The same model and onnxruntime-web build through the harness's own page."""
    d = tmp_path_factory.mktemp("ort-decode") / "run"
    r = run_cli("run", "-b", "chromium", "-w", "ort-decode", "-p", "tiny", "-v", "default", "-n", str(N), run_dir=d)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return load_run(r)


def cells(run, app: str) -> dict[str, dict]:
    """inject path → manifest cell of ``app``."""
    return {c["profile"]: c for c in run.manifest["cells"] if c["variant"] == app}


def steps_of(run, cell: str) -> pd.DataFrame:
    return run.steps[run.steps["cell"] == cell].sort_values("step")


def check_decoder(run, cell: dict, emulated: bool) -> list[int]:
    """Asserts what every decoder cell must show; returns its bind groups per step."""
    s = steps_of(run, cell["cell"])
    assert cell["status"] == "ok", cell["reason"]
    assert s["step"].tolist() == list(range(N)), "steps numbered from 0, one per token"
    assert s["create_bind_group"].tolist() == s["dispatch_workgroups"].tolist(), "one bind group per dispatch"
    assert s["map_async"].tolist() == [1] * N, "one logits read-back per token"
    first = s.iloc[0]
    assert first["create_compute_pipeline"] + first["create_compute_pipeline_async"] + first["create_shader_module"] > 0, \
        "step 0 holds session creation: the probes were in before the library"
    assert cell["workers_not_instrumented"] == [] and cell["webgpu"] == ("emulated" if emulated else "real")
    assert cell["step_kind"] == "mapAsync" and cell["tokens"] == N
    return s["create_bind_group"].tolist()


def check_compute(run, cell: dict) -> None:
    s = steps_of(run, cell["cell"])
    assert cell["status"] == "ok", cell["reason"]
    assert len(s) == N
    for k, v in COMPUTE_PER_STEP.items():
        assert s[k].tolist() == [v] * N, k
    for k, v in COMPUTE_SETUP.items():
        assert s[k].tolist() == [v] + [0] * (N - 1), k
    assert cell["workers_not_instrumented"] == []


def test_chromium_decoders_one_bind_group_per_dispatch_as_ort_decode_measures(chromium, ort_decode):
    od = ort_decode.cell_steps("default")
    per_token = float(od[od["step"] > 0]["create_bind_group"].median())
    assert per_token == float(od[od["step"] > 0]["dispatch_workgroups"].median()) == 29
    seen = {}
    for app, (kind, script) in DECODERS.items():
        for path, cell in cells(chromium, app).items():
            bg = check_decoder(chromium, cell, emulated=False)
            assert (cell["realm_kind"], cell["script_type"]) == (kind, script), (app, path)
            assert abs(pd.Series(bg[1:]).median() - per_token) <= 0.02 * per_token, (app, path, bg)
            seen[(app, path)] = bg
    assert len(seen) == 6 and len({tuple(v) for v in seen.values()}) == 1, seen   # 39, then 29 per token
    blob = cells(chromium, "ort-blob")["cdp"]
    assert blob["realm_url"].startswith("blob:") and "ort-blob" in blob["app_url"]
    summary = chromium.summary.set_index("cell")
    for cell in (c for c in chromium.manifest["cells"] if c["variant"] in DECODERS):
        assert summary.loc[cell["cell"], "bind_groups_per_token"] == per_token


def test_chromium_compute_apps_counted_exactly_in_their_realm(chromium):
    for app, (kind, script) in COMPUTE.items():
        for path, cell in cells(chromium, app).items():
            check_compute(chromium, cell)
            assert (cell["realm_kind"], cell["script_type"]) == (kind, script), (app, path)
    nested = cells(chromium, "nested")["cdp"]
    assert nested["realm_url"].split("?")[0].endswith("/nested/inner.js")
    realms = {r["kind"]: r for r in nested["realms"]}
    assert len(nested["realms"]) == 3 and sum(r["device"] for r in nested["realms"]) == 1, nested["realms"]
    assert realms["page"]["steps"] == 0


def test_webkit_proxy_on_emulated_webgpu(webkit):
    per_app = {}
    for app in DECODERS:
        (cell,) = cells(webkit, app).values()
        assert cell["profile"] == "proxy"
        per_app[app] = check_decoder(webkit, cell, emulated=True)
    # the emulation's features and limits make onnxruntime-web pick other kernels than on
    # SwiftShader: 27 per token here (tests/apps/README.md), the same for every decoder
    assert len({tuple(v) for v in per_app.values()}) == 1 and per_app["transformers"][1:] == [27] * (N - 1), per_app
    for app in COMPUTE:
        (cell,) = cells(webkit, app).values()
        check_compute(webkit, cell)
    s = webkit.summary
    assert (s["webgpu"] == "emulated").all() and (s["modeled_native_bytes_max"] > 0).all()
    assert (s["tokens_identical"] == "not comparable").all()


def test_unreachable_404_and_no_device_are_reasons_not_crashes(apps, tmp_path_factory):
    import socket

    with socket.socket() as sock:   # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    r = app_run(tmp_path_factory, "bad", f"gone={dead}", f"{apps}/no-such-app/", f"{apps}/no-device/",
                "-b", "chromium", "--start-timeout", "5")
    assert r.returncode == 1, r.stdout[-2000:] + r.stderr[-2000:]
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("2 cell(s) failed"), r.stderr
    run = load_run(r)
    status = {c["variant"]: (c["status"], c["reason"]) for c in run.manifest["cells"]}
    assert status["gone"][0] == "failed" and "unreachable" in status["gone"][1]
    assert status["no-such-app"] == ("failed", f"the app at {apps}/no-such-app/ answered HTTP 404")
    assert status["no-device"][0] == "skipped" and status["no-device"][1].startswith("no WebGPU device")
    nd = cells(run, "no-device")["cdp"]
    assert len(nd["realms"]) == 2 and not any(r["device"] for r in nd["realms"])  # page + its blob: worker


def test_page_actions_in_order_then_a_script_with_the_playwright_page(apps, tmp_path_factory, tmp_path):
    seen = tmp_path / "seen.json"
    script = tmp_path / "drive.py"
    script.write_text("import json\n\ndef drive(page):\n"
                      f"    json.dump({{'type': type(page).__name__, 'status': page.inner_text('#status')}}, "
                      f"open({str(seen)!r}, 'w'))\n")
    # the form starts at 2 steps: 4 steps measured only if --fill ran before --click
    r = app_run(tmp_path_factory, "actions", f"{apps}/interactive/", "-b", "chromium", "--wait-for", "#ready",
                "--fill", "#steps=4", "--click", "text=Run", "--wait-for", "text=done", "--script", str(script),
                "--idle", "3")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    run = load_run(r)
    (cell,) = run.manifest["cells"]
    assert cell["tokens"] == 4 and cell["realm_kind"] == "page" and cell["app_title"] == "Interactive WebGPU compute (test app)"
    assert steps_of(run, cell["cell"])["create_bind_group"].tolist() == [3, 3, 3, 3]
    assert run.manifest["parameters"]["actions"] == ["--wait-for '#ready'", "--fill '#steps=4'", "--click 'text=Run'",
                                                     "--wait-for 'text=done'"]
    assert json.loads(seen.read_text()) == {"type": "Page", "status": "done"}


def test_webkit_actions_and_script_get_the_selenium_driver(apps, tmp_path_factory, tmp_path):
    seen = tmp_path / "seen.txt"
    script = tmp_path / "drive.py"
    script.write_text(f"def drive(driver):\n    open({str(seen)!r}, 'w').write(type(driver).__name__)\n")
    r = app_run(tmp_path_factory, "wk-actions", f"{apps}/interactive/", "-b", "webkit", "--wait-for", "#ready",
                "--fill", "#steps=3", "--click", "text=Run", "--wait-for", "text=done", "--script", str(script),
                "--idle", "3")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    run = load_run(r)
    (cell,) = run.manifest["cells"]
    assert cell["tokens"] == 3 and cell["webgpu"] == "emulated"
    assert steps_of(run, cell["cell"])["create_bind_group"].tolist() == [3, 3, 3]
    assert seen.read_text() == "WebDriver"


@pytest.mark.parametrize("args, reason", [
    (["--wait-for", "#never", "--action-timeout", "3"], "--wait-for '#never': '#never' never became visible within 3 s"),
    (["--click", "text=Nowhere", "--action-timeout", "3"], "--click 'text=Nowhere': 'text=Nowhere' never appeared within 3 s"),
    (["--script", "RAISES"], "--script boom.py raised ValueError: the app has no such button"),
])
def test_actions_that_fail_fail_the_cell_and_keep_the_samples(apps, tmp_path_factory, tmp_path, args, reason):
    script = tmp_path / "boom.py"
    # the script raises once the app is done, so its steps were sent before the cell fails (raising
    # at once raced the first step on a loaded machine: 0 steps kept)
    script.write_text("def drive(page):\n    page.wait_for_selector('text=done', timeout=60000)\n"
                      "    raise ValueError('the app has no such button')\n")
    args = [str(script) if a == "RAISES" else a for a in args]
    # main-thread computes as it loads: its steps arrive before the action fails, and are kept
    r = app_run(tmp_path_factory, "fail", f"{apps}/main-thread/?steps=200", "-b", "chromium", *args)
    assert r.returncode == 1, r.stdout[-2000:] + r.stderr[-2000:]
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and reason in lines[0], r.stderr
    run = load_run(r)
    (cell,) = run.manifest["cells"]
    assert cell["status"] == "failed" and cell["reason"].startswith(reason)
    kept = int(cell["reason"].rsplit("; ", 1)[1].split()[0])
    assert kept > 0 and len(steps_of(run, cell["cell"])) == kept, cell["reason"]


def test_idle_auto_ends_a_fast_app_about_5_s_after_its_last_step_and_counts_the_samples_after_it(apps, tmp_path_factory):
    # no --steps, no --idle: the compute app's steps take milliseconds, so --idle auto waits its
    # 5 s floor (the old fixed default waited 30 s, ~120 sampling rounds after the last step)
    r = app_run(tmp_path_factory, "idle-auto", f"{apps}/main-thread/?steps={N}", "-b", "chromium")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    run = load_run(r)
    assert run.manifest["parameters"]["idle_s"] is None
    (cell,) = run.manifest["cells"]
    steps = steps_of(run, cell["cell"])
    assert len(steps) == N and steps["create_bind_group"].tolist() == [3] * N
    mem = run.memory[(run.memory["cell"] == cell["cell"]) & (run.memory["source"] == "psutil")]
    rounds = mem.groupby("time_s")["after_last_step"].first().astype(bool)
    after = mem.loc[mem["after_last_step"].astype(bool), "time_s"]
    waited = after.max() - steps["end_s"].max()
    assert 5 <= waited < 15, waited          # 5 s idle, the flush, one sampling period, a loaded machine
    said = (f"`{cell['cell']}`: {int(rounds.sum())} of {len(rounds)} memory sampling rounds were taken after the last "
            f"step ({N - 1}) ended")
    assert said in (run.dir / "summary.md").read_text()
