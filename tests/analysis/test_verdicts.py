"""Statements that are true of what was measured (issue 20, items 2, 3, 5, 6), on real run
folders recorded from Chromium and WebKitGTK (tests/analysis/runs/, re-recorded by
tests/analysis/record.py). No browser, nothing mocked: run folder in, numbers and files out."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from harness import pipeline
from harness.stats import memory as M

RUNS = Path(__file__).resolve().parent / "runs"


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    out = {}
    for name in ("chromium-decode-loop", "webkit-clean-destroy", "chromium-upload-sizes", "chromium-bind-group-cache"):
        a = pipeline.analyse(RUNS / name, out_dir=tmp_path_factory.mktemp(name))
        pipeline.write(a)
        out[name] = a
    return out


def _text(a) -> str:
    return " ".join(f.text() for f in a.findings)


def test_a_budget_not_crossed_says_not_reached_with_the_most_it_counted(analysed):
    a = analysed["chromium-decode-loop"]                     # recorded with --memory-budget 400MB
    s = a.tables.summary
    assert s["would_be_killed_at_token"].isna().all()
    counted = s["memory_budget_counted_bytes_max"]
    assert (counted > 0).all() and (counted < 400e6).all()
    for variant, rows in s.groupby("variant"):
        # 1 or 2 RSS rounds behind each: not passed where sampled, too few to say it never was
        word = "not reached" if rows["content_rss_samples"].min() >= 3 else "not decided"
        said = f"{variant} {word} (max {rows['memory_budget_counted_bytes_max'].max() / 1e6:,.0f} MB of 400 MB"
        assert said in _text(a), _text(a)
    for name in ("summary.md", "report.html"):
        text = (a.out_dir / name).read_text(encoding="utf-8")
        assert "not decided (max " in text and "would be killed at token 0" not in text and "bounded: bounded" not in text
    # nothing is projected from a series the budget does not count (RSS of every process, the GPU process)
    for r in a.workloads["memory"]["rows"]:
        if not M.budgeted(r["series"]):
            assert r["projected_tokens_to_budget"] is None and r["projection_basis"] in (
                "not what a memory budget counts", "no --memory-budget given"), r


def test_a_variant_that_destroys_every_buffer_is_never_retained_growth(analysed):
    for name, variant in (("webkit-clean-destroy", "fresh"), ("chromium-upload-sizes", "mapped-at-creation")):
        a = analysed[name]
        cell = next(c for c in a.stats.cells if c.key.variant == variant)
        st = cell.steps[cell.steps["step"] >= 1]
        # every buffer it creates after the first step is destroyed in the same step (probe counts)
        assert (st["create_buffer"] > 0).all() and (st["buffer_destroy"] == st["create_buffer"]).all()
        assert (st["buffers_destroyed"].diff().dropna() == st["create_buffer"].iloc[1:]).all()
        mem = M.memory_of(cell)
        held = mem.classes["buffers_not_destroyed"]
        assert held.kind == "flat" and held.max == held.first, held.reason   # no buffer memory kept
        assert mem.classes["buffer_bytes_live"].kind == "flat"
        wrappers = mem.classes["buffers_live"]                     # wrappers the GC has not reached yet
        assert wrappers.max > wrappers.first and wrappers.kind != "retained-growth", wrappers.reason
        rows = [r for r in csv.DictReader((a.out_dir / "memory_series.csv").open()) if r["cell"] == cell.cell]
        assert not [r for r in rows if r["class"] == "retained-growth" and "buffer" in r["series"]]
        assert "retained growth" not in _text(a)
        assert "GPUBuffers not destroyed (created − destroyed − collected before destroy)" in _text(a)


def test_destroyed_wrappers_whose_floors_rise_are_not_gpu_memory():
    # the rule behind it, on the recorded WebKitGTK series: give the wrappers rising floors (a JS
    # reference kept to each destroyed GPUBuffer) while the buffers not destroyed stay flat
    a = pipeline.analyse(RUNS / "webkit-clean-destroy")
    cell = a.stats.cells[0]
    s = M.memory_of(cell).series
    t = s["buffers_live"].t
    kept = M.classify(cell.cell, "buffers_live", "wrappers", "buffers", t, 100 + 42 * t, events=[6, 12, 18])
    held = M.classify(cell.cell, "buffers_not_destroyed", "held", "buffers", s["buffers_not_destroyed"].t,
                      s["buffers_not_destroyed"].y)
    assert kept.kind == "retained-growth" and held.kind == "flat"
    classes = {"buffers_live": kept, "buffers_not_destroyed": held}
    M._destroyed_wrappers(classes)
    assert classes["buffers_live"].kind == "retained-wrappers" and "not GPU memory" in classes["buffers_live"].reason


def test_a_list_parameter_is_never_pooled_in_a_headline(analysed):
    a = analysed["chromium-upload-sizes"]                    # --param sizes=256,4194304
    whole = [g for g in a.stats.groups.values() if not g.key.part]
    parts = [g for g in a.stats.groups.values() if g.key.part]
    assert {g.key.part for g in parts} == {"size_bytes=256", "size_bytes=4194304"}
    assert all("ms_per_token" not in g.metrics for g in whole)          # no pooled time
    st = a.tables.steps
    for g in parts:
        size = int(g.key.part.split("=")[1])
        rows = st[(st["variant"] == g.key.variant) & (st["extra_size_bytes"] == size) & (st["step"] >= 1)]
        assert g.metrics["ms_per_token"].value == pytest.approx(rows["wall_ms"].median())
        assert g.metrics["ms_per_token"].n == len(rows)
    small = {g.key.variant: g.metrics["ms_per_token"].value for g in parts if g.key.part == "size_bytes=256"}
    large = {g.key.variant: g.metrics["ms_per_token"].value for g in parts if g.key.part == "size_bytes=4194304"}
    assert all(large[v] > small[v] for v in small)                       # what pooling hid
    # variants are compared within one size only, and every finding names the size it speaks of
    for d in (d for d in a.stats.differences if d.metric == "ms_per_token"):
        assert d.a.rsplit("[", 1)[1] == d.b.rsplit("[", 1)[1]
    time = [f for f in a.findings if f.kind == "time_per_token"]
    assert {f.scope.rsplit(", steps with ", 1)[1] for f in time} == {"size_bytes=256", "size_bytes=4194304"}


def test_a_bind_group_cache_that_never_evicts_is_named(analysed):
    a = analysed["chromium-bind-group-cache"]               # reuse, KV buffers re-created: evict / never
    rows = a.workloads["memory"]["bind_group_cache"]["rows"]
    assert [r["group"] for r in rows] == ["chromium/decode-loop/reuse@tiny[bind_group_cache=never]"]
    r = rows[0]
    never = next(c for c in a.stats.cells if "never" in c.cell)
    st = never.steps[never.steps["step"] >= 1]
    assert r["created_per_token"] == st["create_bind_group"].median() <= 0.25 * st["dispatch_workgroups"].median()
    assert r["growth_per_token"] == pytest.approx(st["create_bind_group"].median())   # every one kept
    assert st["bind_groups_collected"].iloc[-1] == 0 and r["collected"] == 0 and r["collections"] >= 1
    assert r["verdict"] == "unbounded"
    (f,) = [f for f in a.findings if f.kind == "unbounded_cache"]
    assert "a bind group cache that never evicts" in f.text() and f.scope.startswith("chromium")
    assert [n.value for n in f.numbers] == [r["created_per_token"], r["dispatches_per_token"], r["growth_per_token"]]
    # the evicting cache creates as many but its collections take them back: no such finding
    evict = next(g for g in a.stats.groups.values() if "evict" in g.key.label)
    assert evict.metrics["bind_groups_per_token"].value == r["created_per_token"]
    assert M.memory_of(next(c for c in a.stats.cells if "evict" in c.cell)).classes["bind_groups_live"].kind != \
        "retained-growth"


def test_two_runs_of_the_same_code_at_one_repetition_differ_in_nothing_significant(tmp_path):
    a = pipeline.analyse(RUNS / "aa-chromium-2", baseline=RUNS / "aa-chromium-1", out_dir=tmp_path)
    pipeline.write(a)
    diffs = {d.metric: d for d in a.comparison.differences}
    t = diffs["ms_per_token"]
    # the within-run interval is there, and says what it is; no "significant" from it
    assert t.diff_low is not None and t.significant is None and t.evidence == "1 repetition: within-run only"
    assert diffs["cpu_ms_per_token"].significant is None
    assert not [d for d in diffs.values() if d.significant]
    # zero-width intervals are never significant (counts are exact: equal here, not significant)
    for d in diffs.values():
        if d.diff_low is not None and d.diff_low == d.diff_high:
            assert d.significant is not True
    doc = json.loads((tmp_path / "compare.json").read_text())
    assert doc["significant"] == 0
    md = (tmp_path / "summary.md").read_text()
    assert "ms_per_token" in md and "(1 repetition: within-run only)" in md and "**+" not in md.split("### Differences")[1]
    html = (tmp_path / "compare.html").read_text(encoding="utf-8")
    assert "0 significant differences" in html


def test_the_console_of_compare_says_within_run_only(tmp_path):
    from conftest import run_cli

    r = run_cli("compare", str(RUNS / "aa-chromium-1"), str(RUNS / "aa-chromium-2"), "-o", str(tmp_path / "c"))
    assert r.returncode == 0, r.stderr
    assert "no significant differences" in r.stdout
    line = next(x for x in r.stdout.splitlines() if "ms_per_token" in x)
    assert "significant" not in line.replace("no significant", "")


def test_three_repetitions_a_side_are_judged_across_repetitions():
    a = pipeline.analyse(RUNS / "mixed-decode-loop")         # 2 repetitions per variant and engine
    diffs = [d for d in a.stats.differences if d.metric == "ms_per_token"]
    assert {d.a.split("/")[0] for d in diffs} == {"chromium", "webkit"}
    for d in diffs:
        if d.a.startswith("webkit"):  # emulated WebGPU: the emulation's JavaScript times, never compared
            assert d.significant is None and d.evidence.startswith("emulated WebGPU"), d
            continue
        assert d.evidence.startswith("2 + 2 repetitions, Welch's t over per-repetition medians")
        ea = a.stats.groups[next(k for k in a.stats.groups if k.label == d.a)].metrics["ms_per_token"]
        eb = a.stats.groups[next(k for k in a.stats.groups if k.label == d.b)].metrics["ms_per_token"]
        assert len(ea.per_rep) == len(eb.per_rep) == 2
        from scipy import stats as sps

        ci = sps.ttest_ind(eb.per_rep, ea.per_rep, equal_var=False).confidence_interval(0.95)
        assert (d.reps_low, d.reps_high) == pytest.approx((ci.low, ci.high))
        # Welch's interval decides, then Holm's correction over the run's measured differences may withdraw it
        holm_withdrew = "not significant after Holm's correction" in d.evidence
        assert d.significant == (bool(ci.low > 0 or ci.high < 0) and not holm_withdrew)
        assert np.isfinite(d.diff_low)                     # the within-run interval is still given


@pytest.mark.parametrize("name", sorted(p.name for p in RUNS.iterdir() if (p / "manifest.json").exists()))
def test_no_recorded_run_calls_within_run_noise_or_a_zero_width_interval_significant(name):
    from harness.stats.differences import EXACT_SAME, EXACT_WORDS
    from harness.stats.metrics import deterministic, metric_kind

    a = pipeline.analyse(RUNS / name)
    for d in a.stats.differences:
        if d.diff_low is not None and d.diff_low == d.diff_high and d.ci_method != "exact":
            assert d.significant is not True, d
        measured = not deterministic(d.metric) or metric_kind(d.metric) == "slope"
        if measured and min(d.reps_a, d.reps_b) < 2:
            assert d.significant is None and d.evidence, d
        if d.metric.startswith(("peak_rss_bytes_", "rss_growth_bytes_per_token_")):
            assert d.significant is None   # one browser's processes: the repetitions share them
        if d.significant is not None:
            # an exact count difference (the same on every step of each side) is stated as such,
            # never as "significant": it has a zero-width interval
            # (a difference of 0 there: "no difference", measured, not a test that found none)
            words = (EXACT_WORDS if d.diff else EXACT_SAME,) if d.ci_method == "exact" else ("significant", "not significant")
            assert d.evidence and d.verdict.startswith(words), d
    diffs = {(d.a, d.b, d.metric): d for d in a.stats.differences}
    for f in (f for f in a.findings if f.kind == "time_per_token"):
        for n in f.numbers:   # a time difference is stated with numbers only when it is significant
            assert diffs[(n.ref["a"], n.ref["b"], n.ref["metric"])].significant is True, f.text()
