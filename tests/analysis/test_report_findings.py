"""Findings, the engines side by side, series reduction and the run index, on the real run
folders recorded from Chromium and WebKitGTK (tests/analysis/runs/). No browser, nothing mocked:
run folder in, numbers and files out. (The pages themselves in Chromium: tests/e2e/test_report_pages.py.)"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from harness import pipeline
from harness.report import index, reduce
from harness.report import findings as FD
from harness.report import format as F

RUNS = Path(__file__).resolve().parent / "runs"


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    out = {}
    for name in ("chromium-decode-loop", "webkit-gc-retention", "chromium-dispatch-overhead", "chromium-sync-latency"):
        a = pipeline.analyse(RUNS / name, out_dir=tmp_path_factory.mktemp(name))
        pipeline.write(a)
        out[name] = a
    return out


def _of(a, kind):
    return [f for f in a.findings if f.kind == kind]


def test_bind_group_finding_states_the_counts_and_the_reduction(analysed):
    a = analysed["chromium-decode-loop"]
    (f,) = _of(a, "bind_groups")
    nums = f.numbers
    assert [n.value for n in nums] == [42, 0, -1.0]           # fresh, reuse, reuse vs fresh
    assert nums[2].unit == "relative" and nums[2].ref["field"] == "rel"
    assert f.text() == "createBindGroup calls per token: fresh 42; reuse 0 (-100.0% vs fresh)."
    assert f.scope.startswith("chromium 156 · google swiftshader · real WebGPU — decode-loop@tiny")


def test_time_is_flagged_as_a_cpu_adapter_and_said_only_when_significant(analysed):
    a = analysed["chromium-decode-loop"]
    (f,) = _of(a, "time_per_token")
    d = next(d for d in a.stats.differences if d.metric == "ms_per_token")
    assert d.significant is False and f.numbers == []          # not significant: no number claimed
    assert "No significant difference" in f.text() and any("not GPU times" in x for x in f.flags)


def test_every_finding_number_is_in_stats_json(analysed):
    for a in analysed.values():
        doc = json.loads((a.out_dir / "stats.json").read_text())
        groups = {g["group"]: g["metrics"] for g in doc["groups"]}
        diffs = {(d["a"], d["b"], d["metric"]): d for d in doc["differences"]}
        assert [f["text"] for f in doc["findings"]] == [f.text() for f in a.findings]
        for f in doc["findings"]:
            for n in f["numbers"]:
                ref = n["ref"]
                if "group" in ref and "projection_bytes" not in ref:
                    assert groups[ref["group"]][ref["metric"]]["value"] == n["value"]
                elif "field" in ref and "a" in ref:
                    assert diffs[(ref["a"], ref["b"], ref["metric"])][ref["field"]] == n["value"]


def test_gc_retention_and_dispatch_overhead_are_said_in_their_own_terms(analysed):
    gc = analysed["webkit-gc-retention"]
    (f,) = _of(gc, "gc_collections")
    confs = {c["variant"]: c for c in gc.workloads["gc-retention"]["confs"]}
    assert [n.value for n in f.numbers] == [confs[v]["mean"]["events"] for v in ("minimal", "js-churn", "force-gc")]
    do = analysed["chromium-dispatch-overhead"]
    assert not _of(do, "time_per_token") and not _of(do, "bind_groups")   # its steps are not tokens
    methods = {m["cell"]: m for m in do.workloads["dispatch-overhead"]["methods"]}
    for f in _of(do, "dispatch_overhead"):
        m = methods[f.numbers[0].ref["cell"]]
        assert f.numbers[0].value == m["per"]["single-op"][0] and f.numbers[-1].value == m["factor"][0]
        assert "per dispatch: single-op" in f.text() and " µs" in f.text() and "single-op ÷ sequential" in f.text()
        assert any("not GPU times" in x for x in f.flags)
        # its intervals are t over the rounds of one cell: the sentence says how many, and within-run
        assert f"(mean over {m['per']['single-op'][3]} rounds after warm-up; 1 repetition: within-run only)" in f.text()


def test_sync_latency_is_said_per_configuration_and_no_sentence_is_empty(analysed):
    # a run of sync methods only (--param methods=sync-empty,sync-dispatch,sync-map, pacing ×
    # main_thread swept) said "Wall time per dispatch:  (mean over rounds after warm-up)." four
    # times, no number in it, and nothing of its syncs
    a = analysed["chromium-sync-latency"]
    assert _of(a, "dispatch_overhead") == []
    found = _of(a, "sync_latency")
    rows = a.workloads["sync-latency"]["rows"]
    assert len(found) == len({r["group"] for r in rows}) == 4
    for f in found:
        mine = [r for r in rows if r["group"] == f.numbers[0].ref["group"]]
        assert [n.value for n in f.numbers] == [r["median"].value for r in mine]
        assert [n.ci_low for n in f.numbers] == [r["median"].ci_low for r in mine]
        assert f"(pacing {mine[0]['pacing']}, {mine[0]['thread']} thread)" in f.text()
        assert "(n=24 syncs in 2 rounds each; 1 repetition: within-run only)" in f.text()   # 2 × 12 syncs, one cell
        for r in mine:  # the spread beside each median (sync-dispatch's waits fall in two clusters)
            assert f"{r['method']} " in f.text() and f"(p10–p90: {F.number(r['p10'].value)}–{F.number(r['p90'].value)} µs)" in f.text()
        assert any("not GPU times" in x for x in f.flags)
    assert len({f.scope for f in found}) == 4            # each names its sweep point
    assert all(f.text().endswith(" (variant: fresh)") for f in found)   # and its variant (fresh or reused bind groups)
    for f in a.findings:
        assert f.numbers, f.text()                       # every sentence says a number


def test_summary_md_opens_with_the_same_findings(analysed):
    for a in analysed.values():
        md = (a.out_dir / "summary.md").read_text()
        assert md.index("### Findings") < md.index("### Per configuration")
        for f in a.findings:
            assert f.text().replace("|", "/") in md.replace("**", "")


def test_engines_growth_table_is_the_statistics_estimates(analysed):
    a = analysed["webkit-gc-retention"]
    n = a.engines
    assert n["engines"] == ["webkit 2.50.6"]
    views = {v["id"]: v for v in n["settings"][0]["views"]}
    assert {"live_bind_groups", "modeled_native", "content_rss"} <= set(views)
    groups = {g.key.label: g for g in a.stats.groups.values()}
    for row in views["live_bind_groups"]["growth"]:
        q = row["cells"]["webkit 2.50.6"]
        assert q.value == groups[q.ref["group"]].metrics["live_bind_groups_growth_per_token"].value
    minimal = next(t for t in views["live_bind_groups"]["panels"][0]["traces"] if t["variant"] == "minimal")
    st = a.tables.steps[a.tables.steps["variant"] == "minimal"].sort_values("step")
    assert list(minimal["y"]) == st["bind_groups_live"].tolist()   # every token, token 0 included


def test_long_series_are_reduced_keeping_extremes_and_ends():
    x = np.arange(5000)
    y = np.sin(x / 50.0) * 100
    y[1234], y[4321] = 1e4, -1e4                      # a GC pause, a collection drop
    rx, ry = reduce.series(x, y, 600)
    assert len(rx) <= 600 and rx[0] == 0 and rx[-1] == 4999
    assert 1e4 in ry and -1e4 in ry
    assert reduce.series([0, 1, 2], [5, 6, 7], 600) == ([0, 1, 2], [5, 6, 7])
    bx, lo, hi = reduce.envelope(x, y - 1, y + 1, 100)
    assert len(bx) == 100 and min(lo) == -1e4 - 1 and max(hi) == 1e4 + 1


def test_index_lists_runs_and_copes_with_partial_and_broken_folders(tmp_path):
    root = tmp_path / "reports"
    for name in ("webkit-decode-loop", "webkit-decode-loop-again"):
        d = root / "runs" / name
        shutil.copytree(RUNS / "webkit-decode-loop", d)
    again = root / "runs" / "webkit-decode-loop-again" / "manifest.json"
    m = json.loads(again.read_text())
    m["created"] = "2099-01-01T00:00:00+00:00"
    again.write_text(json.dumps(m))
    for name in ("webkit-decode-loop", "webkit-decode-loop-again"):
        pipeline.write(pipeline.analyse(root / "runs" / name))
    (root / "runs" / "partial").mkdir()
    shutil.copy(RUNS / "webkit-decode-loop" / "manifest.json", root / "runs" / "partial")
    (root / "runs" / "broken").mkdir()
    (root / "runs" / "broken" / "manifest.json").write_text("{not json")
    (root / "runs" / "empty").mkdir()
    runs, comps = index.build(root / "runs", root / "compare")
    by = {e.name: e for e in runs}
    assert runs[0].name == "webkit-decode-loop-again"                      # newest first
    assert by["partial"].problem.startswith("not analysed (no stats.json)") and by["partial"].statuses == {"ok": 2}
    assert "unreadable" in by["broken"].problem and "unreadable" in by["empty"].problem
    fresh = next(c for c in by["webkit-decode-loop"].configs if c["group"].endswith("/fresh@tiny"))
    stats = json.loads((root / "runs" / "webkit-decode-loop" / "stats.json").read_text())
    g = next(g for g in stats["groups"] if g["group"] == fresh["group"])
    assert fresh["headline"]["createBindGroup / token"] == g["metrics"]["bind_groups_per_token"]
    charts = index.trend_charts(runs)
    trace = next(t for t in charts["trend_0"]["data"] if t["meta"]["group"] == fresh["group"])
    assert trace["meta"]["runs"] == ["webkit-decode-loop", "webkit-decode-loop-again"] and trace["y"] == [42, 42]
    html = index.write(root / "index.html", root / "runs", root / "compare").read_text()
    assert 'href="runs/webkit-decode-loop/report.html"' in html and "partial" in html and comps == []
    # outside the default places a run's index is the one in the folder holding it, never above
    runs_dir = (root / "runs").resolve()
    assert index.target_for(root / "runs" / "partial") == (runs_dir, runs_dir, runs_dir / "index.html")
    there = tmp_path.resolve()
    assert index.target_for(tmp_path / "elsewhere") == (there, there, there / "index.html")
    # there, only folders holding a manifest are runs, and those holding a compare.json comparisons
    (root / "runs" / "notes").mkdir()
    runs_there, comps_there = index.build(runs_dir, runs_dir)
    assert "notes" not in {e.name for e in runs_there} and "partial" in {e.name for e in runs_there}
    assert "empty" not in {e.name for e in runs_there} and comps_there == []
    assert index.ours(root / "index.html") and index.ours(root / "none.html")
    (root / "mine.html").write_text("<html><title>my page</title></html>")
    assert not index.ours(root / "mine.html")


def test_the_chart_library_is_embedded_once_and_is_the_basic_bundle_when_installed(analysed):
    bundle = pipeline.chart_bundle()
    assert bundle is not None, "plotly.js-basic-dist-min is not installed (npm ci, or webgpu-harness setup)"
    for a in analysed.values():
        html = (a.out_dir / "report.html").read_text(encoding="utf-8")
        assert html.count('<script type="text/plain" id="plotly-js">') == 1 and html.count("plotly.js (basic") == 1
        assert len(html.encode()) < 2 * 2**20          # the full bundle alone is 4.8 MB


def test_memory_classes_of_the_statistics_become_a_finding(analysed):
    a = analysed["webkit-gc-retention"]
    rows = (a.workloads.get("memory") or {}).get("rows") or []
    assert rows
    found = _of(a, "memory_classes")
    assert found
    for f in found:
        for n in f.numbers:
            row = next(r for r in rows if r["cell"] == n.ref["cell"] and r["series"] == n.ref["series"])
            assert row["class"] == "retained-growth" and row["floor_slope"] == n.value


def test_methods_say_how_a_difference_was_decided_holm_included(tmp_path):
    # stats.json's methods.significance said "the interval excludes 0" for counts and Welch's t
    # for measured quantities, but nothing of the Holm correction that decided verdicts such as
    # this run's live_bind_groups_max (2 + 2 repetitions: "not significant after Holm's correction")
    a = pipeline.analyse(RUNS / "mixed-decode-loop", out_dir=tmp_path)
    pipeline.write(a)
    doc = json.loads((tmp_path / "stats.json").read_text())
    held = [d for d in doc["differences"] if "Holm's correction over" in (d["evidence"] or "")]
    assert held and all(d["p_value"] is not None and d["ci_method"] == "welch-t" for d in held)
    text = doc["methods"]["significance"]
    assert "Holm's step-down procedure" in text and "Welch's t" in text
    assert "counts of live objects" in text                    # measured, as README says
