"""dispatch-overhead in real Chromium + WebGPU: each method-run is one step, and the probe's
counters per step must be exactly the method's submits, encoders, dispatches and bind groups."""

from __future__ import annotations

import json
import math
import re

import pandas as pd
import pytest

from conftest import CliResult, load_run, run_cli
from harness.native.bench import expected_result, fnv1a32_hex

pytestmark = pytest.mark.full   # browser runs of its own: make test-full

N = 256
ROUNDS = 4
CONFIGS = ["single-op", "sequential", "batched-1", "batched-16", "batched-64", "batched-all", "one-pass", "phases", "kernel"]


def browser_dispatch_run(tmp_path_factory):
    """dispatch-overhead, fresh + reused, N=256, 4 rounds, in Chromium; one run per pytest session
    (test_native.py compares its readbacks with this run's)."""
    d = tmp_path_factory.getbasetemp() / "dispatch-overhead-run"
    if (d / "summary.csv").exists():
        return load_run(CliResult(0, "", "", d))
    cli = run_cli("run", "--browser", "chromium", "--workload", "dispatch-overhead", "--tokens", str(ROUNDS),
                  "--param", f"n={N}", run_dir=d)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    return load_run(cli)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return browser_dispatch_run(tmp_path_factory)


def _steps(run, variant):
    return run.cell_steps(variant)


def _median_us(st, config):
    v = st[(st["extra_config"] == config) & (st["extra_round"] >= 1)]["extra_us_per_dispatch"]
    assert len(v) == ROUNDS - 1
    return float(v.median())


def test_cells_ok_one_step_per_method_and_round(run):
    s = run.summary
    assert set(s["variant"]) == {"fresh", "reused"}
    assert (s["status"] == "ok").all(), s[["cell", "status", "reason"]]
    assert (s["webgpu"] == "real").all()
    for variant in ("fresh", "reused"):
        st = _steps(run, variant)
        assert len(st) == ROUNDS * len(CONFIGS)
        assert list(st["extra_config"].iloc[:len(CONFIGS)]) == CONFIGS
        assert (st["extra_bind_groups"] == variant).all()


def test_counters_are_exactly_the_methods_calls(run):
    for variant in ("fresh", "reused"):
        st = _steps(run, variant)
        assert (st["dispatch_workgroups"] == st["extra_expected_dispatches"]).all()
        assert (st["submit"] == st["extra_expected_submits"]).all()
        assert (st["command_buffers_submitted"] == st["extra_expected_submits"]).all()
        assert (st["create_command_encoder"] == st["extra_expected_command_encoders"]).all()
        assert (st["create_bind_group"] == st["extra_expected_bind_groups"]).all()
        assert (st["map_async"] == st["extra_expected_map_async"]).all()
        by = st[st["extra_round"] == 0].set_index("extra_config")
        # submits (= command buffers) per method for N dispatches
        expected = {"single-op": N, "sequential": N, "batched-1": N, "batched-16": math.ceil(N / 16),
                    "batched-64": math.ceil(N / 64), "batched-all": 1, "one-pass": 1, "phases": N, "kernel": 1}
        for config, submits in expected.items():
            assert by.loc[config, "submit"] == submits, (variant, config)
            assert by.loc[config, "dispatch_workgroups"] == N
            assert by.loc[config, "create_bind_group"] == (N if variant == "fresh" else 0)
        assert by.loc["single-op", "map_async"] == 1 and by.loc["sequential", "map_async"] == 1


def test_every_readback_is_x0_plus_n_b(run):
    want = fnv1a32_hex(expected_result(64, N).tobytes())
    for variant in ("fresh", "reused"):
        st = _steps(run, variant)
        assert (st["extra_readback_ok"] == 1).all()
        assert set(st["logits_hash"]) == {want}
    assert set(run.summary["tokens_identical"]) == {"yes"}


def test_sequential_beats_single_op_and_one_pass_beats_sequential(run):
    for variant in ("fresh", "reused"):
        st = _steps(run, variant)
        single, seq, one = _median_us(st, "single-op"), _median_us(st, "sequential"), _median_us(st, "one-pass")
        assert seq < single, (variant, single, seq)
        assert one < seq, (variant, seq, one)


def test_phases_are_timed_per_call_and_fit_inside_the_run(run):
    for variant in ("fresh", "reused"):
        st = _steps(run, variant)
        ph = st[st["extra_config"] == "phases"]
        cols = [c for c in ph.columns if c.startswith("extra_phase_")]
        assert len(cols) == 9
        assert (ph[cols] >= 0).all().all()
        assert (ph["extra_phase_submit_us"] > 0).all()
        # each phase delta lies inside the instrumented run's wall time
        assert (ph["extra_phases_sum_us"] <= ph["extra_us_per_dispatch"] + 1e-6).all()
        cbg = ph["extra_phase_create_bind_group_us"]
        assert (cbg > 0).all() if variant == "fresh" else (cbg == 0).all()


def test_timer_resolution_and_kernel_only_time_are_recorded(run):
    samples = [json.loads(x) for x in (run.dir / "samples.jsonl").read_text().splitlines()]
    envs = [s for s in samples if s["kind"] == "env"]
    assert len(envs) == 2
    for e in envs:
        assert e["cross_origin_isolated"] is True
        assert 0 < e["timer_resolution_us"] <= 100
        assert "timestamp-query" in e["features"]          # SwiftShader offers it here
    done = [s["result"] for s in samples if s["kind"] == "done"]
    for r in done:
        assert r["kernel_only"]["available"] is True and r["kernel_only"]["us_per_dispatch_median"] > 0
        assert r["overestimation_factor"] > 1
    kern = run.steps[run.steps["extra_config"] == "kernel"]
    assert (kern["extra_kernel_us_per_dispatch"] > 0).all()


def test_report_section_table_and_phase_chart(run):
    html = (run.dir / "report.html").read_text()
    assert 'id="dispatch-overhead"' in html and "Dispatch overhead" in html
    assert "overestimation" in html and "SwiftShader" in html and "not GPU times" in html
    data = json.loads(re.search(r'<script type="application/json" id="chart-data">(.*?)</script>', html, re.S)
                      .group(1).replace("<\\/", "</"))
    bars = [t for t in data["dispatch_phases"]["data"] if t["type"] == "bar"]
    assert [t["meta"]["phase"] for t in bars] == ["create_command_encoder", "begin_compute_pass", "create_bind_group",
                                                   "set_pipeline", "set_bind_group", "dispatch_workgroups", "end",
                                                   "finish", "submit"]
    assert data["dispatch_phases"]["layout"]["barmode"] == "stack"
    assert all(len(t["y"]) == 2 for t in bars)
    st = run.steps
    fresh_submit = st[(st["variant"] == "fresh") & (st["extra_config"] == "phases") & (st["extra_round"] >= 1)]
    cells = bars[-1]["meta"]["cells"]
    i = cells.index(run.cell("fresh")["cell"])
    assert bars[-1]["y"][i] == pytest.approx(fresh_submit["extra_phase_submit_us"].mean())
    assert "dispatch_methods" in data


@pytest.mark.parametrize("param, text", [("n=0", "n=0: must be an integer from 1 to 65536"),
                                          ("batch_sizes=16,-4", "batch_sizes=-4: must be an integer from 1 to 65536")])
def test_bad_param_fails_the_cell_with_its_message(param, text, tmp_path):
    r = run_cli("run", "--browser", "chromium", "--workload", "dispatch-overhead", "--variant", "fresh",
                "--tokens", "1", "--param", param, run_dir=tmp_path / "r")
    assert r.returncode == 1, r.stdout + r.stderr
    s = pd.read_csv(tmp_path / "r" / "summary.csv", keep_default_na=False)
    assert (s["status"] == "failed").all()
    assert text in s["reason"].iloc[0]


def test_kernel_only_is_na_with_reason_without_timestamps(tmp_path):
    r = run_cli("run", "--browser", "chromium", "--workload", "dispatch-overhead", "--variant", "fresh", "--tokens", "1",
                "--param", "n=8", "--param", "timestamp_query=off", "--param", "methods=sequential,kernel",
                run_dir=tmp_path / "r")
    assert r.returncode == 0, r.stdout + r.stderr
    run = load_run(r)
    assert list(run.steps["extra_config"]) == ["sequential"]
    done = [json.loads(x) for x in (tmp_path / "r" / "samples.jsonl").read_text().splitlines() if '"done"' in x]
    k = done[0]["result"]["kernel_only"]
    assert k["available"] is False and "timestamp_query=off" in k["reason"]
    html = (tmp_path / "r" / "report.html").read_text()
    assert "n/a: timestamp queries disabled" in html
