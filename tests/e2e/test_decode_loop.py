"""decode-loop in real Chromium + WebGPU: counts measured by the injected probes."""

from __future__ import annotations

import json
import re



def test_cells_ran_on_real_webgpu(decode_run):
    s = decode_run.summary
    assert set(s["variant"]) == {"fresh", "reuse"}
    assert (s["status"] == "ok").all(), s[["cell", "status", "reason"]]
    assert (s["webgpu"] == "real").all()
    assert s["adapter"].str.len().min() > 0          # GPUAdapter.info recorded (SwiftShader here)
    assert s["browser_version"].str.match(r"^\d+\.").all()
    assert (s["steps_received"] == 24).all()


def test_fresh_creates_one_bind_group_per_dispatch_every_token(decode_run):
    st = decode_run.cell_steps("fresh")
    assert len(st) == 24
    assert (st["dispatch_workgroups"] > 0).all()
    assert (st["create_bind_group"] == st["dispatch_workgroups"]).all()
    # the workload's own count of what it dispatched agrees with the probe
    assert (st["extra_dispatches"] == st["dispatch_workgroups"]).all()
    row = decode_run.cell("fresh")
    assert row["bind_groups_per_token"] == row["dispatches_per_token"] > 0


def test_reuse_creates_no_bind_group_after_first_token(decode_run):
    st = decode_run.cell_steps("reuse")
    assert st.iloc[0]["create_bind_group"] > 0
    assert (st.iloc[1:]["create_bind_group"] == 0).all(), st[["step", "create_bind_group"]]
    assert (st["dispatch_workgroups"] == decode_run.cell_steps("fresh")["dispatch_workgroups"].values).all()
    assert decode_run.cell("reuse")["bind_groups_per_token"] == 0


def test_submits_follow_ort_batching_of_16_dispatches(decode_run):
    st = decode_run.cell_steps("fresh").iloc[1:]
    # ORT submits every 16 dispatches (max_num_pending_dispatches) plus the readback copy's submit
    expected_min = -(-st["dispatch_workgroups"] // 16)
    assert (st["submit"] >= expected_min).all()
    assert (st["submit"] <= expected_min + 2).all()
    assert (st["map_async"] == 1).all()


def test_tokens_and_logits_identical_across_variants(decode_run):
    f, r = decode_run.cell_steps("fresh"), decode_run.cell_steps("reuse")
    assert list(f["token"]) == list(r["token"])
    assert list(f["logits_hash"]) == list(r["logits_hash"])
    assert f["logits_hash"].nunique() > 1            # logits really change token to token
    assert set(decode_run.summary["tokens_identical"]) == {"yes"}


def test_kernels_match_cpu_reference(decode_run):
    # verify=true: the workload recomputed every token on the CPU (workloads/decode-loop/reference.js)
    for variant in ("fresh", "reuse"):
        err = decode_run.cell_steps(variant)["extra_max_abs_logit_err"]
        assert err.notna().all() and (err < 1e-3).all(), err.describe()


def test_live_bind_groups_are_created_minus_collected(decode_run):
    for variant in ("fresh", "reuse"):
        st = decode_run.cell_steps(variant)
        assert (st["bind_groups_live"] == st["bind_groups_created"] - st["bind_groups_collected"]).all()
        assert st["bind_groups_created"].is_monotonic_increasing
        assert st["bind_groups_collected"].is_monotonic_increasing
        # created counts every createBindGroup the probe saw: setup (before step 0) + per-step calls
        created_in_steps = st["create_bind_group"].cumsum()
        setup = st["bind_groups_created"].iloc[0] - st["create_bind_group"].iloc[0]
        assert setup >= 0
        assert (st["bind_groups_created"] == created_in_steps + setup).all()
    fresh = decode_run.cell_steps("fresh")
    assert fresh["bind_groups_created"].iloc[-1] >= 24 * fresh["dispatch_workgroups"].iloc[-1]


def test_memory_sampled_per_chrome_process_type(decode_run):
    m = decode_run.memory
    ps = m[m["source"] == "psutil"]
    assert {"browser", "renderer", "gpu-process"} <= set(ps["process_type"])
    assert (ps["rss_bytes"] > 1_000_000).all()
    assert ps["uss_bytes"].notna().any()
    for variant in ("fresh", "reuse"):
        cell = decode_run.cell(variant)["cell"]
        assert len(ps[ps["cell"] == cell]) > 0
        assert cell and decode_run.cell(variant)["peak_rss_bytes_gpu-process"] > 0


def test_every_cell_samples_its_own_renderer_and_the_gpu_process(decode_run):
    # reuse runs second in the browser fresh ran in, in a new context, for under 2 s: a process
    # list kept from fresh's cell once left it with no renderer row at all (peak_rss_bytes_all
    # then read reuse 38% below fresh)
    ps = decode_run.memory[decode_run.memory["source"] == "psutil"]
    renderers = {}
    for variant in ("fresh", "reuse"):
        cell = ps[ps["cell"] == decode_run.cell(variant)["cell"]]
        rounds = cell.groupby("time_s")["process_type"].agg(set)
        assert len(rounds) >= 2, cell
        # every sampling round has the page's renderer and the GPU process, each with real RSS
        assert all({"renderer", "gpu-process"} <= r for r in rounds), rounds
        assert (cell.loc[cell["process_type"] == "renderer", "rss_bytes"] > 10_000_000).all()
        renderers[variant] = set(cell.loc[cell["process_type"] == "renderer", "pid"])
        assert decode_run.cell(variant)["peak_rss_bytes_renderer"] > 10_000_000
        assert decode_run.cell(variant)["content_rss_bytes_max"] > 10_000_000
    # a new context, a new renderer: neither cell sampled the other's
    assert renderers["fresh"].isdisjoint(renderers["reuse"]), renderers
    # never "not sampled" at all; a quick cell may have had its rounds only inside warm-up step 0,
    # which summary.md says as such ("not sampled after the warm-up")
    md = (decode_run.dir / "summary.md").read_text()
    assert md.count("content process not sampled") == md.count("content process not sampled after the warm-up"), md


def test_report_has_chart_data_for_every_variant(decode_run):
    html = (decode_run.dir / "report.html").read_text()
    data = json.loads(re.search(r'<script type="application/json" id="chart-data">(.*?)</script>', html, re.S)
                      .group(1).replace("<\\/", "</"))
    assert {"bind_groups_per_token", "live_bind_groups", "ms_per_token"} <= set(data)
    for cid, chart in data.items():
        variants = {t["meta"]["variant"] for t in chart["data"] if "variant" in (t.get("meta") or {})}
        if not cid.startswith("engines_"):  # RSS per token only where the sampler caught that token
            assert variants == {"fresh", "reuse"}, (cid, variants)
    fresh = next(t for t in data["bind_groups_per_token"]["data"] if t["meta"]["variant"] == "fresh")
    assert fresh["y"] == decode_run.cell_steps("fresh")["create_bind_group"].tolist()
    assert "swiftshader" in html.lower() or decode_run.summary["adapter"].iloc[0] in html
    assert "Plotly.newPlot" in html and "<script src=" not in html   # self-contained


def test_manifest_records_environment(decode_run):
    m = decode_run.manifest
    for key in ("harness_version", "git_commit", "created", "os", "cpu", "parameters", "browsers", "cells"):
        assert key in m
    assert m["browsers"]["chromium"]["version"] == decode_run.summary["browser_version"].iloc[0]
    assert m["parameters"]["tokens"] == 24


def test_progress_through_a_pipe_is_a_line_per_cell_start_and_end(shared_decode):
    # the recording's stdout is a pipe (CI logs, make run | tee): rich drew its bars only once
    # every cell had ended, so a run printed nothing until then (harness/cli/progress.py)
    out = shared_decode.cli.stdout.splitlines()
    cells = shared_decode.manifest["cells"]
    n = len(cells)
    for i, c in enumerate(cells, 1):
        label = f"{c['browser']} decode-loop/{c['variant']} [tiny]"
        started = [x for x in out if x.startswith(f"[{i}/{n}] {label}: started")]
        ended = [x for x in out if x.startswith(f"[{i}/{n}] {label}: ok: 24 of 24 steps in ")]
        assert started and ended, "\n".join(out[:30])
        assert out.index(started[0]) < out.index(ended[0])
    analysing = [k for k, x in enumerate(out) if x.startswith("analysing ")]
    last_end = max(k for k, x in enumerate(out) if ": ok: 24 of 24 steps" in x)
    assert analysing and analysing[0] > last_end       # said before the seconds of analysis
    assert not any(x.startswith("cells ") for x in out)  # no bars drawn into the log (rich's "cells ━━ 4/4")
