"""``--browser dawn``: the workloads on native Dawn in Node (npm ``webgpu``, dawn.node) on
Chromium's SwiftShader ICD here — the same worker bootstrap, probes and workload code as in the
browser, so the counts must equal Chromium's; and the offline runner (no server) of
harness/native/dawn.py writing the same run folder. H200 figures are in benchmarks/results/."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from conftest import REPO, run_cli
from harness import tables
from harness.drive.base import BrowserNotFound
from harness.drive.dawn import LABEL, locate_dawn


def _dawn_missing() -> str | None:
    try:
        locate_dawn()
    except BrowserNotFound as exc:
        return str(exc)
    return None


@pytest.fixture(scope="module")
def dawn_here() -> None:
    """Set-up (scripts/setup.sh: npm ci) brings Node and the pinned `webgpu` package, and
    Chromium's SwiftShader ICD is the adapter: a missing one is a failure, not a skip."""
    missing = _dawn_missing()
    assert missing is None, f"Dawn cannot run here: {missing}"


needs_dawn = pytest.mark.usefixtures("dawn_here")


def _env_samples(run_dir) -> dict[str, dict]:
    out = {}
    for line in (run_dir / "samples.jsonl").read_text().splitlines():
        s = json.loads(line)
        if s.get("kind") == "env":
            out.setdefault(s["cell"], s)
    return out


@pytest.fixture(scope="module")
def chromium_and_dawn(tmp_path_factory):
    """decode-loop at its default profile (ort-field-1.7b), fresh + reuse, 6 tokens, in Chromium
    and on Dawn, one run."""
    d = tmp_path_factory.mktemp("dawn") / "run"
    r = run_cli("run", "--browser", "chromium,dawn", "--workload", "decode-loop", "--tokens", "6", run_dir=d, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return tables.build(d), d


@pytest.mark.full
@needs_dawn
def test_dawn_decode_loop_counts_and_tokens_equal_chromiums(chromium_and_dawn):
    t, d = chromium_and_dawn
    s = t.summary.set_index("cell")
    assert (s["status"] == "ok").all(), s[["status", "reason"]]
    for variant, bind_groups in (("fresh", 319), ("reuse", 0)):
        dawn, chromium = s.loc[f"dawn.decode-loop.{variant}.ort-field-1.7b.r0"], s.loc[f"chromium.decode-loop.{variant}.ort-field-1.7b.r0"]
        assert dawn["bind_groups_per_token"] == chromium["bind_groups_per_token"] == bind_groups
        assert dawn["dispatches_per_token"] == chromium["dispatches_per_token"] == 319
        assert dawn["submits_per_token"] == chromium["submits_per_token"]
        assert dawn["tokens_identical"] == "yes"
        steps = t.steps
        tok = {b: steps[steps["cell"] == f"{b}.decode-loop.{variant}.ort-field-1.7b.r0"].sort_values("step")["token"].tolist()
               for b in ("dawn", "chromium")}
        assert len(tok["dawn"]) == 6 and tok["dawn"] == tok["chromium"]


@pytest.mark.full
@needs_dawn
def test_dawn_cells_are_labelled_not_a_browser(chromium_and_dawn):
    t, d = chromium_and_dawn
    manifest = json.loads((d / "manifest.json").read_text())
    b = manifest["browsers"]["dawn"]
    assert b["engine"] == LABEL and LABEL in b["notes"] and b["adapter"]["architecture"] == "swiftshader"
    cells = [c for c in manifest["cells"] if c["browser"] == "dawn"]
    assert cells and all(c["driver"] == "node-dawn" and c["adapter"] == "google swiftshader" for c in cells)
    assert all(c["browser_version"].startswith("webgpu 0.6.2 (Dawn) · Node v") for c in cells)
    envs = _env_samples(d)
    assert all(envs[c["cell"]]["engine"] == LABEL and envs[c["cell"]]["thread"] == "node" for c in cells)
    html = (d / "report.html").read_text()
    assert f"dawn ({LABEL})" in html and "chromium " in html
    # the Node process is sampled as the browser's processes are
    mem = pd.read_csv(d / "memory.csv")
    assert (mem[mem["cell"].str.startswith("dawn.")]["process_type"] == "node").any()


@pytest.mark.full
@needs_dawn
def test_dawn_dispatch_overhead_produces_every_method(tmp_path):
    d = tmp_path / "run"
    r = run_cli("run", "--browser", "dawn", "--workload", "dispatch-overhead", "--tokens", "2", "--param", "n=16",
                run_dir=d, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    t = tables.build(d)
    assert set(t.summary["variant"]) == {"fresh", "reused"} and (t.summary["status"] == "ok").all()
    st = t.steps
    assert set(st["extra_method"]) == {"single-op", "sequential", "batched", "one-pass", "phases", "kernel"}
    assert {"batched-1", "batched-16", "batched-all"} <= set(st["extra_config"])
    assert (st["dispatch_workgroups"] == st["extra_expected_dispatches"]).all()
    assert (st["create_bind_group"] == st["extra_expected_bind_groups"]).all()
    for m in ("single-op", "sequential", "batched-16", "one-pass", "phases"):
        assert (t.summary[f"us_per_dispatch_{m}"] > 0).all(), m
    assert t.summary["kernel_us_per_dispatch"].notna().all()  # SwiftShader offers timestamp-query


@pytest.mark.full
@needs_dawn
def test_dawn_without_an_adapter_or_node_is_skipped_with_the_reason(tmp_path):
    env = {**os.environ, "VK_ICD_FILENAMES": str(tmp_path / "no-such-icd.json"), "COLUMNS": "200"}
    r = subprocess.run([sys.executable, "-m", "harness", "run", "-b", "dawn", "-w", "decode-loop", "-p", "tiny",
                        "-n", "2", "--allow-skipped", "-o", str(tmp_path / "a")], cwd=REPO, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    cells = json.loads((tmp_path / "a" / "manifest.json").read_text())["cells"]
    assert [c["status"] for c in cells] == ["skipped", "skipped"]
    assert all("no WebGPU adapter" in c["reason"] and "no-such-icd.json" in c["reason"] and LABEL in c["reason"]
               for c in cells)
    r = run_cli("run", "-b", "dawn", "-w", "decode-loop", "-p", "tiny", "-n", "2", "--browser-path",
                str(tmp_path / "no-node"), run_dir=tmp_path / "b")
    assert r.returncode == 1, r.stdout[-2000:] + r.stderr[-2000:]  # every cell skipped, no --allow-skipped
    cells = json.loads((tmp_path / "b" / "manifest.json").read_text())["cells"]
    assert all(c["status"] == "skipped" and "no such file" in c["reason"] for c in cells)


@pytest.mark.full
@needs_dawn
def test_dawn_offline_writes_a_run_folder_the_harness_reads(tmp_path):
    """No run server (the GPU machine's path): samples straight to samples.jsonl."""
    from harness.native.dawn import Selection, run_offline

    d = tmp_path / "offline"
    cells = run_offline(d, [Selection("decode-loop", variants=["fresh", "reuse"], profile="tiny", tokens=4),
                            Selection("dispatch-overhead", variants=["reused"], tokens=2, params={"n": 16})], ["test"])
    assert [c["status"] for c in cells] == ["ok", "ok", "ok"], cells
    r = run_cli("report", str(d))
    assert r.returncode == 0, r.stdout + r.stderr
    t = tables.build(d)
    s = t.summary.set_index("variant")
    assert s.loc["fresh", "bind_groups_per_token"] == 42 and s.loc["reuse", "bind_groups_per_token"] == 0  # tiny: 2 × 19 + 4
    assert s.loc["fresh", "tokens_identical"] == "yes"
    lines = [json.loads(x) for x in (d / "samples.jsonl").read_text().splitlines()]
    assert [x["seq"] for x in lines] == list(range(1, len(lines) + 1))  # one sequence across host and runner
    assert {x["kind"] for x in lines} >= {"env", "step", "done", "cell_status"}
    assert all("src" in x and "n" in x for x in lines if x["kind"] == "step")


@pytest.mark.full
@needs_dawn
def test_dawn_offline_runs_on_the_standard_library_alone(tmp_path):
    """The GPU machine has none of our Python packages (benchmarks/dawn_gpu.py runs with its
    python3): the offline runner, started with ``-S`` (no site-packages: no pydantic, pandas,
    platformdirs), still runs a decode-loop cell on Dawn and writes a folder ``report`` reads.
    (An import of pydantic_core at the top of harness/store/runfolder.py once broke it there.)"""
    from harness.drive.dawn import find_node, find_package

    node, _ = find_node(None)
    package, _, _ = find_package()
    d = tmp_path / "stdlib-only"
    script = ("import sys, json; sys.path.insert(0, sys.argv[1]); from harness.native.dawn import Selection, run_offline; "
              "cells = run_offline(__import__('pathlib').Path(sys.argv[2]), [Selection('decode-loop', variants=['fresh'], "
              "profile='tiny', tokens=3)], ['test'], node=sys.argv[3], package_dir=sys.argv[4]); "
              "print(json.dumps([c['status'] for c in cells])); "
              "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'pydantic_core', 'pandas', 'numpy', 'platformdirs')))")
    r = subprocess.run([sys.executable, "-S", "-c", script, str(REPO), str(d), node, str(package)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    statuses, modules = r.stdout.strip().splitlines()[-2:]
    assert json.loads(statuses) == ["ok"] and modules == "[]", r.stdout
    rep = run_cli("report", str(d))
    assert rep.returncode == 0, rep.stdout + rep.stderr
    assert tables.build(d).summary.iloc[0]["bind_groups_per_token"] == 42  # tiny: 2 × 19 + 4


def test_offline_cell_config_is_the_runners(tmp_path):
    """harness/native/dawn.py builds the worker's config without pydantic: it must equal the run
    server's for the same cell (no Node needed)."""
    from harness.drive.runner import cell_config
    from harness.native.dawn import Selection, cell_config as offline_config, plan_cells
    from harness.plan import RunPlan, resolve_workloads

    for workload, variants, profile, params in (("decode-loop", ["fused"], "qwen2.5-0.5b", {"max_pending_dispatches": 8}),
                                                 ("dispatch-overhead", ["fresh"], None, {"n": 32}),
                                                 ("gc-retention", ["js-churn"], None, {})):
        wls, vs, profiles = resolve_workloads([workload], variants, profile)
        plan = RunPlan(["dawn"], wls, vs, profiles, tokens=5, params=dict(params), workload_params={workload: params})
        cell = plan.cells()[0]
        (offline_cell, manifest), = plan_cells([Selection(workload, variants, profile, params, tokens=5)])
        assert offline_cell["cell"] == cell.cell
        assert offline_config(offline_cell, manifest) == cell_config(cell, wls[0], plan)


@pytest.mark.full
@needs_dawn
def test_dawn_runs_onnxruntime_webs_webgpu_ep(tmp_path):
    """ort-decode (tiny) with onnxruntime-web's WebGPU EP on Dawn in Node: the CPU reference's
    tokens (expected.json), one bind group per dispatch. Needs the host's writeBuffer copy
    (ORT writes from its SharedArrayBuffer heap) and ORT's web-worker path (web/dawn/host.js)."""
    d = tmp_path / "run"
    r = run_cli("run", "-b", "dawn", "-w", "ort-decode", "-p", "tiny", "-v", "default", "-n", "3",
                "--step-timeout-s", "900", run_dir=d, timeout=1500)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    t = tables.build(d)
    expected = json.loads((REPO / "workloads/ort-decode/models/tiny/expected.json").read_text())["tokens"]
    assert t.steps.sort_values("step")["token"].tolist() == expected[:3]
    row = t.summary.iloc[0]
    assert row["bind_groups_per_token"] == row["dispatches_per_token"] > 0
    assert "onnxruntime-web" in row["engine"]


@pytest.mark.full  # no browser, but the analysis of ~80 recorded cells takes a minute or more here
def test_merged_folder_shows_dawn_wgpu_and_chromium_on_one_page(tmp_path):
    """The committed run folders (benchmarks/results/: native Dawn and wgpu-native on an H200,
    Chromium and native Dawn on SwiftShader here) merged into one: one report with every engine,
    each labelled. Asserts labels and presence only; the H200 figures are in benchmarks/results/."""
    results = REPO / "benchmarks" / "results"
    out = tmp_path / "merged"
    r = run_cli("merge", str(results / "swiftshader-chromium-dawn-20261201"), str(results / "dawn-h200-20261201"),
                str(results / "native-h200-20261130"), "-o", str(out), "--label", "swiftshader", "--label", "dawn-h200",
                "--label", "wgpu-h200", timeout=1200)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    t = tables.build(out)
    do = t.summary[t.summary["workload"] == "dispatch-overhead"]
    assert set(zip(do["machine"], do["browser"])) == {("swiftshader", "chromium"), ("swiftshader", "dawn"),
                                                     ("dawn-h200", "dawn"), ("wgpu-h200", "native-wgpu")}
    from harness.stats.workloads import dispatch_overhead as D

    methods = D.numbers(t)["methods"]  # the report's "Dispatch overhead" table: every engine's rows
    assert {m["row"]["machine"] for m in methods} == {"swiftshader", "dawn-h200", "wgpu-h200"}
    html = (out / "report.html").read_text()
    for text in (f"dawn-h200: dawn ({LABEL})", "wgpu-h200: native-wgpu (native wgpu-native (Python), not a browser)",
                 "swiftshader: chromium ", f"swiftshader: dawn ({LABEL})", "nvidia-h200"):
        assert text in html, text
