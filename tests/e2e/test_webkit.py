"""WebKit leg: WebKitGTK (MiniBrowser under Xvfb via WebKitWebDriver) with emulated WebGPU,
compared with Chromium in one run; Safari's WebDriver path; the emulation's conformance with
real Chromium WebGPU."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import psutil
import pytest

from conftest import REPO, CliResult, load_run, run_cli


@pytest.fixture(scope="module")
def mixed_run(shared_decode):
    """decode-loop tiny, fresh + reuse, 24 tokens, in Chromium (real WebGPU) and WebKitGTK (emulated),
    --memory-budget 2048MB: the session's shared recording (tests/shared_run.py)."""
    return shared_decode


def _webkit(run, variant):
    s = run.steps
    return s[(s["browser"] == "webkit") & (s["variant"] == variant)].sort_values("step")


def test_webkit_cells_run_on_emulated_webgpu(mixed_run):
    s = mixed_run.summary
    wk = s[s["browser"] == "webkit"]
    assert len(wk) == 2 and (wk["status"] == "ok").all(), wk[["cell", "status", "reason"]]
    assert (wk["webgpu"] == "emulated").all()
    assert (wk["tokens_identical"] == "not comparable").all()
    assert re.match(r"^\d+\.\d+", str(wk["browser_version"].iloc[0]))
    assert (s[s["browser"] == "chromium"]["webgpu"] == "real").all()


def test_webkit_fresh_and_reuse_bind_group_counts(mixed_run):
    fresh, reuse = _webkit(mixed_run, "fresh"), _webkit(mixed_run, "reuse")
    assert len(fresh) == len(reuse) == 24
    assert (fresh["dispatch_workgroups"] > 0).all()
    assert (fresh["create_bind_group"] == fresh["dispatch_workgroups"]).all()
    assert (reuse.iloc[1:]["create_bind_group"] == 0).all()
    # the same workload makes the same calls in both engines
    chrome = mixed_run.steps[(mixed_run.steps["browser"] == "chromium") & (mixed_run.steps["variant"] == "fresh")]
    assert list(chrome.sort_values("step")["dispatch_workgroups"]) == list(fresh["dispatch_workgroups"])


def test_webkit_live_bind_groups_and_modeled_bytes(mixed_run):
    for variant in ("fresh", "reuse"):
        st = _webkit(mixed_run, variant)
        assert (st["bind_groups_live"] == st["bind_groups_created"] - st["bind_groups_collected"]).all()
        per = st["modeled_bytes_per_compute_bind_group"]
        assert (per == 16384).all()
        # the ledger charges every live native bind group one 16 KiB page (compute stage only)
        assert (st["modeled_native_bytes"] == st["native_bind_groups_live"] * per).all()
        assert st["modeled_native_bytes"].max() > 0
    reuse = _webkit(mixed_run, "reuse")
    assert reuse["native_bind_groups_live"].iloc[-1] == reuse["create_bind_group"].iloc[0]


def test_webkit_process_memory_is_sampled(mixed_run):
    m = mixed_run.memory
    wk_cells = set(mixed_run.summary[mixed_run.summary["browser"] == "webkit"]["cell"])
    wk = m[m["cell"].isin(wk_cells) & (m["source"] == "psutil")]
    assert "WebKitWebProcess" in set(wk["process_type"])
    assert (wk[wk["process_type"] == "WebKitWebProcess"]["rss_bytes"] > 10_000_000).all()
    s = mixed_run.summary
    assert (s[s["browser"] == "webkit"]["content_rss_bytes_max"] > 0).all()


def test_one_report_holds_both_engines(mixed_run):
    html = (mixed_run.dir / "report.html").read_text()
    data = json.loads(re.search(r'id="chart-data">(.*?)</script>', html, re.S).group(1).replace("<\\/", "</"))
    traces = data["live_bind_groups"]["data"]            # one panel per engine, provenance on hover
    assert {t["meta"]["engine"].split(" ")[0] for t in traces} == {"chromium", "webkit"}
    provenance = " ".join(t["meta"]["provenance"] for t in traces)
    assert "emulated WebGPU (modeled native memory)" in provenance
    assert "real WebGPU" in provenance


@pytest.mark.full
def test_webkit_without_emulation_is_skipped(tmp_path):
    r = run_cli("run", "--browser", "webkit", "--workload", "decode-loop", "--profile", "tiny", "--tokens", "2",
                "--variant", "fresh", "--webgpu", "real", "--allow-skipped", run_dir=tmp_path / "r")
    assert r.returncode == 0, r.stderr
    run = load_run(r)
    assert run.summary["status"].tolist() == ["skipped"]
    assert "navigator.gpu is undefined" in run.summary["reason"].iloc[0]


@pytest.mark.full
def test_webkit_web_process_killed_keeps_samples_and_marks_failed(tmp_path):
    run_dir = tmp_path / "r"
    cmd = [sys.executable, "-m", "harness", "run", "--browser", "webkit", "--workload", "decode-loop",
           "--profile", "tiny", "--variant", "fresh", "--tokens", "250", "--output", str(run_dir)]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    samples = run_dir / "samples.jsonl"
    deadline = time.monotonic() + 120
    while not samples.exists() or samples.read_text().count('"kind":"step"') < 5:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.1)
    web = [p for p in psutil.Process(proc.pid).children(recursive=True) if p.name().startswith("WebKitWebProces")]
    assert web, "no WebKitWebProcess under the harness"
    for p in web:
        os.kill(p.pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, out + err
    run = load_run(CliResult(proc.returncode, out, err, run_dir))
    row = run.cell("fresh")
    assert row["status"] == "failed"
    assert row["steps_received"] >= 5 and len(run.steps) == row["steps_received"]
    assert "process" in row["reason"] or "WebDriver" in row["reason"]


def test_safari_capabilities():
    from harness.drive.safari import safari_options
    from harness.drive.webkit import webkitgtk_options

    caps = safari_options().to_capabilities()
    assert caps["browserName"] == "safari"
    assert caps.get("safari:automaticInspection") is False
    assert caps.get("safari:automaticProfiling") is False
    gtk = webkitgtk_options("/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser").to_capabilities()
    assert gtk["browserName"] == "MiniBrowser"
    assert gtk["webkitgtk:browserOptions"]["args"] == ["--automation"]
    assert gtk["webkitgtk:browserOptions"]["binary"].endswith("MiniBrowser")


CONFORMANCE_JS = """(async () => {
  const { runConformance } = await import('/web/emulation/conformance.js');
  const emu = await import('/web/emulation/webgpu-emulated.js');
  const real = await runConformance(navigator.gpu);
  const emulated = await runConformance(emu.createEmulatedGPU({}));
  return { real, emulated };
})()"""


@pytest.mark.full
def test_emulation_conforms_to_real_chromium_webgpu():
    from harness.drive.chromium import ChromiumDriver
    from harness.drive.doctor import evaluate_on_local_page

    _, out = evaluate_on_local_page(ChromiumDriver(), CONFORMANCE_JS)
    real = {c["name"]: c for c in out["real"]}
    emulated = {c["name"]: c for c in out["emulated"]}
    assert set(real) == set(emulated) and len(real) >= 10
    assert any("reject" in n or "invalid" in n or "mismatch" in n for n in real), list(real)
    bad = [n for n in real if not (real[n]["ok"] and emulated[n]["ok"])]
    assert not bad, {n: (real[n], emulated[n]) for n in bad}


@pytest.mark.full
def test_decode_loop_call_sequence_is_the_same_on_emulated_and_real(tmp_path):
    # the same workload in the same browser, once on real WebGPU and once on the emulation
    counts = {}
    for mode in ("real", "emulated"):
        r = run_cli("run", "--browser", "chromium", "--workload", "decode-loop", "--profile", "tiny",
                    "--tokens", "6", "--variant", "fresh", "--webgpu", mode, run_dir=tmp_path / mode)
        assert r.returncode == 0, r.stderr
        run = load_run(r)
        assert run.summary["webgpu"].tolist() == [mode]
        counts[mode] = run.steps[["create_bind_group", "dispatch_workgroups", "submit", "write_buffer",
                                  "map_async", "create_buffer"]].values.tolist()
    assert counts["real"] == counts["emulated"]


@pytest.mark.full
def test_webkit_prefers_a_playwright_webkit_build(tmp_path, monkeypatch):
    from harness.drive.webkit import WebKitGTKDriver

    build = tmp_path / "webkit-2215"
    build.mkdir()
    (build / "pw_run.sh").write_text("#!/bin/sh\n")
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path))
    located = WebKitGTKDriver().locate()
    assert located.driver == "playwright-webkit" and located.executable == str(build)
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path / "none"))
    assert WebKitGTKDriver().locate().driver == "selenium-webkitgtk"


@pytest.mark.full
def test_small_ort_session_runs_on_the_emulation_like_on_real_webgpu(tmp_path):
    # the same onnxruntime-web session (C++ EP) on real Chromium WebGPU and on the emulation
    per_token = {}
    for mode in ("real", "emulated"):
        r = run_cli("run", "--browser", "chromium", "--workload", "ort-decode", "--profile", "tiny", "--tokens", "4",
                    "--variant", "default", "--webgpu", mode, run_dir=tmp_path / mode)
        assert r.returncode == 0, r.stdout + r.stderr
        run = load_run(r)
        assert run.summary["status"].tolist() == ["ok"] and run.summary["webgpu"].tolist() == [mode]
        st = run.cell_steps("default")
        assert (st["create_bind_group"] == st["dispatch_workgroups"]).all()
        per_token[mode] = st["dispatch_workgroups"].iloc[1:].tolist()
    # Both complete with one bind group per dispatch. The counts need not match: ORT picks kernels
    # by the adapter's features and limits, and the emulation reports Safari's (shader-f16, WebKit's
    # Apple-GPU limits), SwiftShader its own (measured here: 29 vs 27 dispatches per token).
    assert all(n > 0 for n in per_token["real"] + per_token["emulated"])
    assert len(set(per_token["real"])) == 1 and len(set(per_token["emulated"])) == 1


@pytest.mark.full
def test_dispatch_overhead_is_skipped_on_emulated_webgpu(tmp_path):
    r = run_cli("run", "--browser", "webkit", "--workload", "dispatch-overhead", "--variant", "reused", "--tokens", "1",
                "--allow-skipped", run_dir=tmp_path / "r")
    assert r.returncode == 0, r.stdout + r.stderr
    row = load_run(r).summary.iloc[0]
    assert row["status"] == "skipped" and "emulated WebGPU executes no shaders" in row["reason"]
