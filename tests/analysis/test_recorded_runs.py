"""The analysing half on real run folders recorded from Chromium and WebKitGTK
(tests/analysis/runs/<name>/, each with its COMMAND; re-record with tests/analysis/record.py).
Nothing here launches a browser and nothing is mocked: run folder in, numbers and files out."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from harness import pipeline

RUNS = Path(__file__).resolve().parent / "runs"


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    """name → Analysis of each recorded run, written into a temporary folder."""
    out = {}
    for d in sorted(p for p in RUNS.iterdir() if (p / "manifest.json").exists()):
        a = pipeline.analyse(d, out_dir=tmp_path_factory.mktemp(d.name))
        pipeline.write(a)
        out[d.name] = a
    return out


def _group(a, variant):
    return next(g for g in a.stats.groups.values() if g.key.variant == variant)


def test_recordings_are_from_both_engines(analysed):
    engines = {(a.tables.summary["browser"].iloc[0], a.tables.summary["webgpu"].iloc[0]) for a in analysed.values()}
    assert {("chromium", "real"), ("webkit", "emulated")} <= engines
    for a in analysed.values():
        assert (a.tables.summary["status"] == "ok").all()


def test_decode_loop_counts_per_token(analysed):
    # decode-loop tiny: 2 layers × 19 + 4 = 42 dispatches per token, submitted 16 at a time
    for name in ("chromium-decode-loop", "webkit-decode-loop"):
        a = analysed[name]
        fresh, reuse = _group(a, "fresh"), _group(a, "reuse")
        assert fresh.metrics["bind_groups_per_token"].value == 42 and fresh.metrics["bind_groups_per_token"].ci_method == "exact"
        assert reuse.metrics["bind_groups_per_token"].value == 0
        assert fresh.metrics["dispatches_per_token"].value == reuse.metrics["dispatches_per_token"].value == 42
        assert fresh.metrics["submits_per_token"].value == 3
        d = next(d for d in a.stats.differences if d.metric == "bind_groups_per_token")
        assert (d.a, d.b, d.diff, d.significant) == (fresh.key.label, reuse.key.label, -42, True)


def test_repetitions_give_per_repetition_intervals_and_chart_bands(analysed):
    a = analysed["chromium-decode-loop"]
    fresh = _group(a, "fresh")
    assert len(fresh.cells) == 2
    e = fresh.metrics["peak_rss_bytes_renderer"]
    assert e.n_reps == 2 and e.ci_method == "t" and e.ci_low < e.value < e.ci_high
    bands = {b.group: b for b in a.bands["wall_ms"]}
    assert bands[fresh.key.label].n_reps == 2 and len(bands[fresh.key.label].x) == 16
    assert all(lo <= hi for lo, hi in zip(bands[fresh.key.label].low, bands[fresh.key.label].high))


def test_emulated_memory_is_the_modeled_bytes_of_live_native_bind_groups(analysed):
    a = analysed["webkit-decode-loop"]
    st = a.tables.steps
    assert (st["modeled_native_bytes"] == st["native_bind_groups_live"] * st["modeled_bytes_per_compute_bind_group"]).all()
    assert (st["modeled_bytes_per_compute_bind_group"] == 16384).all()  # one 16 KiB page (WebKit BindGroup.mm)
    rows = {r["row"]["variant"]: r for r in a.workloads["retention"]["rows"]}
    assert rows["fresh"]["emulated"] and rows["fresh"]["modeled_max"] == st.loc[st["variant"] == "fresh", "modeled_native_bytes"].max()
    assert rows["reuse"]["modeled_max"] == 42 * 16384 and rows["reuse"]["gc_events"] == 0
    assert a.workloads["retention"]["budget_bytes"] == 2 * 10**9


def test_gc_retention_figures_match_the_steps(analysed):
    from harness.stats.workloads import gc_retention as g

    a = analysed["webkit-gc-retention"]
    n = a.workloads["gc-retention"]
    by_variant = {c["variant"]: c for c in n["confs"]}
    assert set(by_variant) == {"minimal", "js-churn", "force-gc"}
    for variant, c in by_variant.items():
        st = a.tables.steps[a.tables.steps["variant"] == variant].sort_values("step")
        collected = st["bind_groups_collected"].astype(float)
        rose = collected.diff().fillna(collected.iloc[0])
        assert c["mean"]["live_max"] == st["bind_groups_live"].max()
        assert c["mean"]["live_end"] == st["bind_groups_live"].iloc[-1]
        assert c["mean"]["events"] == int((rose > 0).sum())
        assert c["mean"]["modeled_max"] == st["modeled_native_bytes"].max()
        assert c["mean"]["per_token"] == 317       # the field report's createBindGroup per token
    base = by_variant["minimal"]["mean"]["live_max"]
    assert by_variant["force-gc"]["ratio"] == pytest.approx(by_variant["force-gc"]["mean"]["live_max"] / base)
    assert [v["provenance"] for v in n["verdicts"]] == [by_variant["minimal"]["provenance"]]
    assert g.reported_text("force-gc").startswith("250–7,000")


def test_classify_rules():
    from harness.stats.workloads.gc_retention import classify

    def conf(live_max, late, ratio):
        return {"mean": {"live_max": live_max, "events_late": late}, "ratio": ratio}

    base = conf(10_000, 5, 1.0)
    assert classify(conf(25_000, 3, 2.5), base)[0] == "more"
    assert classify(conf(4_000, 9, 0.4), base)[0] == "less"
    assert classify(conf(18_000, 0, 1.8), base)[0] == "more"  # no collection in the second half
    assert classify(conf(12_000, 4, 1.2), base)[0] == "none"
    assert classify(conf(12_000, 4, None), None)[0] == "n/a"


def test_dispatch_overhead_numbers_follow_the_rounds(analysed):
    a = analysed["chromium-dispatch-overhead"]
    n = a.workloads["dispatch-overhead"]
    assert [m["row"]["variant"] for m in n["methods"]] == ["fresh", "reused"]
    assert {"single-op", "sequential", "one-pass", "phases"} <= set(n["configs"])
    st = a.tables.steps
    for m in n["methods"]:
        s = st[(st["cell"] == m["cell"]) & (st["extra_round"] >= 1)]
        single = s[s["extra_config"] == "single-op"].set_index("extra_round")["extra_us_per_dispatch"]
        seq = s[s["extra_config"] == "sequential"].set_index("extra_round")["extra_us_per_dispatch"]
        mean, lo, hi, k = m["factor"]
        assert k == 2 and mean == pytest.approx((single / seq).mean())   # rounds 1 and 2; round 0 is warm-up
        assert m["per"]["sequential"][0] == pytest.approx(seq.mean()) and m["per"]["sequential"][3] == 2
    assert len(n["phases"]) == 2 and all(p["sum"] > 0 for p in n["phases"])


def test_report_renders_what_the_analysis_computed(analysed):
    a = analysed["chromium-dispatch-overhead"]
    html = (a.out_dir / "report.html").read_text(encoding="utf-8")
    data = json.loads(re.search(r'id="chart-data">(.*?)</script>', html, re.S).group(1).replace("<\\/", "</"))
    assert {"dispatch_methods", "dispatch_phases"} <= set(data)
    bars = {t["meta"]["cell"]: t for t in data["dispatch_methods"]["data"]}
    for m in a.workloads["dispatch-overhead"]["methods"]:
        assert bars[m["cell"]]["y"][0] == pytest.approx(m["per"][bars[m["cell"]]["x"][0]][0])
    assert '<section id="dispatch-overhead">' in html and '<section id="statistics">' in html


def test_report_command_writes_every_file_and_is_deterministic(tmp_path):
    from conftest import run_cli

    src = tmp_path / "run"
    shutil.copytree(RUNS / "webkit-decode-loop", src)
    r1 = run_cli("report", str(src))
    r2 = run_cli("report", str(src), "--output", str(tmp_path / "again"))
    assert r1.returncode == 0 and r2.returncode == 0, r1.stderr + r2.stderr
    for name in pipeline.RUN_FILES:
        assert (src / name).exists(), name
    for name in ("stats.json", "stats.csv", "summary.csv", "steps.csv", "differences.csv", "junit.xml", "summary.md"):
        assert (src / name).read_bytes() == (tmp_path / "again" / name).read_bytes(), name
    s = pd.read_csv(src / "summary.csv")
    assert s["bind_groups_per_token"].tolist() == [42.0, 0.0]


@pytest.mark.parametrize("args, words", [
    (["/nonexistent/run"], "is not a run folder (no such folder)"),
    (["{tmp}"], "no manifest.json"),
    (["{tmp}/afile"], "is not a run folder (a file, not a folder)"),  # said "(no such folder)"
    (["{tmp}/gone"], "is not a run folder (a link to a path that does not exist)"),  # said "(not a folder)"
])
def test_report_of_a_folder_that_is_not_a_run_is_one_line_exit_2(args, words, tmp_path):
    from conftest import run_cli

    (tmp_path / "afile").write_text("{}")
    (tmp_path / "gone").symlink_to(tmp_path / "no-such-run")
    r = run_cli("report", *[a.format(tmp=tmp_path) for a in args])
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert r.returncode == 2 and len(lines) == 1 and words in lines[0], r.stderr
