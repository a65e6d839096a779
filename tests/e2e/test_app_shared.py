"""``webgpu-harness app`` in ``make test``: the session's shared recording (tests/shared_run.py)
of two unmodified test apps — Transformers.js decoding in a module worker, a WebGPU compute page —
in Chromium through both injection paths (cdp, proxy) and in WebKitGTK through the proxy on
emulated WebGPU, checked as test_app.py checks every app (``make test-full`` runs all of them).
"""

from __future__ import annotations

import json

import pandas as pd

from shared_run import APP_STEPS
from test_app import COMPUTE, DECODERS, N, cells, check_compute, check_decoder


def test_the_shared_apps_are_measured_like_every_app(shared_app, shared_ort):
    assert APP_STEPS == N
    od = shared_ort.cell_steps("default")
    per_token = float(od[od["step"] > 0]["create_bind_group"].median())
    assert per_token == float(od[od["step"] > 0]["dispatch_workgroups"].median()) == 29
    paths = cells(shared_app, "transformers")
    assert set(paths) == {"cdp", "proxy"}
    seen = []
    for path, cell in paths.items():
        bg = check_decoder(shared_app, cell, emulated=False)
        assert (cell["realm_kind"], cell["script_type"]) == DECODERS["transformers"], path
        assert abs(pd.Series(bg[1:]).median() - per_token) <= 0.02 * per_token, (path, bg)
        seen.append(tuple(bg))
    assert len(set(seen)) == 1, seen          # both injection paths see the same calls, from step 0
    for path, cell in cells(shared_app, "main-thread").items():
        check_compute(shared_app, cell)
        assert (cell["realm_kind"], cell["script_type"]) == COMPUTE["main-thread"], path


def test_the_shared_apps_on_webkit_proxy_and_emulated_webgpu(shared_app_webkit):
    run = shared_app_webkit
    (cell,) = cells(run, "transformers").values()
    assert cell["profile"] == "proxy"
    # the emulation's features and limits make onnxruntime-web pick other kernels than on
    # SwiftShader: 27 per token here (tests/apps/README.md)
    assert check_decoder(run, cell, emulated=True)[1:] == [27] * (N - 1)
    (cell,) = cells(run, "main-thread").values()
    check_compute(run, cell)
    s = run.summary
    assert (s["webgpu"] == "emulated").all() and (s["modeled_native_bytes_max"] > 0).all()
    assert (s["tokens_identical"] == "not comparable").all()


def test_report_rows_carry_the_app_and_memory_per_process_and_growth(shared_app):
    s = shared_app.summary
    assert set(s["app_title"]) >= {"Transformers.js text generation (test app)",
                                   "WebGPU compute on the main thread (test app)"}
    assert (s["step_kind"] == "mapAsync").all() and s["app_url"].str.startswith("http://127.0.0.1").all()
    row = s[s["cell"] == "chromium.app.transformers.cdp.r0"].iloc[0]
    assert row["measured_realm"].startswith("worker (module) http://127.0.0.1") and row["peak_rss_bytes_renderer"] > 0
    html = (shared_app.dir / "report.html").read_text()
    assert "Transformers.js text generation (test app)" in html and "steps on mapAsync" in html
    stats = json.loads((shared_app.dir / "stats.json").read_text())
    g = next(g for g in stats["groups"] if g["group"] == "chromium/app/transformers@cdp")
    for metric in ("bind_groups_per_token", "live_bind_groups_max", "peak_rss_bytes_renderer", "peak_rss_bytes_all",
                   "js_heap_bytes_max"):
        assert g["metrics"][metric]["value"] is not None, metric
    # a growth slope needs 10 positions (harness/stats): a 4-step cell has none, and says why
    growth = g["metrics"]["live_bind_groups_growth_per_token"]
    assert growth["value"] is None and growth["ci_method"].startswith("too few samples (n="), growth
    assert g["metrics"]["bind_groups_per_token"]["value"] == 29
    # the worker's JS heap came from the app's own worker (CDP), memory from every process type
    mem = shared_app.memory[shared_app.memory["cell"] == "chromium.app.transformers.cdp.r0"]
    assert {"renderer", "gpu-process", "browser", "worker"} <= set(mem["process_type"])
