"""Memory classes, honest intervals and workload terms on the real recorded runs
(tests/analysis/runs/, re-recorded by tests/analysis/record.py) and, for the estimators'
coverage, on synthetic series whose truth is known. No browser, nothing mocked."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import numpy as np
import pytest

from harness import pipeline
from harness import stats as S
from harness.stats import memory as M
from harness.verdicts import budgets as B

RUNS = Path(__file__).resolve().parent / "runs"


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    out = {}
    for name in ("chromium-decode-loop", "webkit-decode-loop", "chromium-dispatch-overhead"):
        a = pipeline.analyse(RUNS / name, out_dir=tmp_path_factory.mktemp(name))
        pipeline.write(a)
        out[name] = a
    return out


def test_chromium_fresh_cells_are_bounded_and_reuse_is_flat(analysed):
    a = analysed["chromium-decode-loop"]
    fresh = [c for c in a.stats.cells if c.key.variant == "fresh"]
    assert len(fresh) == 2
    for c in fresh:
        mc = M.cell_classes(c)["bind_groups_live"]
        st = c.steps[c.steps["step"] >= 1]
        own = st.loc[st["bind_groups_collected"].diff() > 0, "step"].tolist()
        # a sawtooth: 42 more live bind groups per token; its own 2 collections each brought it back
        # to its first value: bounded, but 2 floors are too few for a floor slope (needs 3)
        assert mc.kind == "bounded", mc.reason
        assert mc.rate == 42 and mc.events == own and len(mc.floors) == 2 and all(v <= 42 for _, v in mc.floors)
        assert mc.floor_slope is None and "too few floors (n=2; needs 3)" in mc.reason
    # so the group states no growth slope, and says why
    g = next(g for g in a.stats.groups.values() if g.key.variant == "fresh")
    e = g.metrics["live_bind_groups_growth_per_token"]
    assert (e.value, e.ci_method, e.basis) == (None, "too few floors (n=2; needs 3)", "too-few")
    assert not [d for d in a.stats.differences if d.metric == "live_bind_groups_growth_per_token"]
    # reuse makes no bind group after token 0 and none is collected: flat, not "bounded"
    for c in (c for c in a.stats.cells if c.key.variant == "reuse"):
        mc = M.cell_classes(c)["bind_groups_live"]
        assert (mc.kind, mc.floor_slope, mc.max, mc.events) == ("flat", 0.0, 42, [])
    rows = list(csv.DictReader((a.out_dir / "memory_series.csv").open()))
    assert {(r["cell"].split(".")[2], r["class"]) for r in rows if r["series"] == "bind_groups_live"} == \
        {("fresh", "bounded"), ("reuse", "flat")}
    assert "Flat (nothing new kept, nothing collected): " in " ".join(f.text() for f in a.findings)


def test_floors_are_the_series_own_minima_and_need_three_for_a_slope():
    # mixed-decode-loop: Chromium fresh collects 4 times in 31 tokens: 4 floors, each the series'
    # own minimum after its own drop, a floor slope whose CI holds 0 (bounded, no growth claimed)
    a = pipeline.analyse(RUNS / "mixed-decode-loop")
    for c in (c for c in a.stats.cells if c.key.browser == "chromium" and c.key.variant == "fresh"):
        mem = M.memory_of(c)
        s, mc = mem.series["bind_groups_live"], mem.classes["bind_groups_live"]
        assert len(mc.floors) == 4 and mc.kind == "bounded"
        for (pos, value), start, end in zip(mc.floors, mc.events, mc.events[1:] + [np.inf]):
            stretch = s.y[(s.t >= start) & (s.t < end)]
            assert value == stretch.min() and start <= pos < end
        assert mc.floor_low <= 0 <= mc.floor_high
    g = next(g for g in a.stats.groups.values() if g.key.browser == "chromium" and g.key.variant == "fresh")
    e = g.metrics["live_bind_groups_growth_per_token"]
    assert e.basis == "floors" and e.ci_low <= 0 <= e.ci_high
    # RSS was sampled on a handful of tokens per cell: no slope, no class, and the findings say so
    for c in a.stats.cells:
        for name, mc in M.memory_of(c).classes.items():
            if name.startswith("rss_bytes_"):
                assert mc.points < M.MIN_POINTS and mc.kind == "too-few-samples" and mc.floor_slope is None
                assert mc.reason.startswith(f"too few samples (n={mc.points}; needs 10)")
    growth = g.metrics["rss_growth_bytes_per_token_renderer"]
    assert growth.value is None and growth.ci_method.startswith("too few samples (n=")
    text = " ".join(f.text() for f in a.findings)
    assert "No growth per token stated, too few points: RSS of all renderer processes (sum) (fresh too few samples (n=" in text
    assert "No class, too few samples (a class needs 10 positions): RSS of all renderer processes (sum, measured) (fresh n=" in text


def test_classes_of_a_leak_a_sawtooth_and_growth_without_collections():
    t = np.arange(1.0, 25.0)
    leak = 1_000_000 + 286_312 * t                          # nothing collected: every floor higher
    saw = 42 * (t % 6)                                      # collected every 6 tokens back to 0
    events = [6, 12, 18, 24]
    mc = M.classify("c", "buffer_bytes_live", "x", "bytes", t, leak, events)
    assert mc.kind == "retained-growth" and mc.floor_slope == 286_312 and mc.floor_low > 0
    assert M.classify("c", "bind_groups_live", "x", "bind groups", t, saw, events).kind == "bounded"
    grows = M.classify("c", "bind_groups_live", "x", "bind groups", t, 42 * t, [])
    assert grows.kind == "growing-until-collected" and grows.rate == 42 and grows.floor_slope is None
    # the floor rose over three collections and a fourth brought it back: freed later, not a leak
    back = np.where(t < 20, leak, 1_000_000.0)
    assert M.classify("c", "buffer_bytes_live", "x", "bytes", t, back, [5, 10, 15, 20]).kind == "growing-until-collected"


def test_projection_uses_the_given_budget_and_the_slope_it_names(analysed):
    a = analysed["webkit-decode-loop"]                      # recorded with --memory-budget 2GB
    rows = {r["row"]["variant"]: r for r in a.workloads["retention"]["rows"]}
    p = rows["fresh"]["projection"]
    assert p["budget_bytes"] == 2 * 10**9 and p["kind"] == "growing-until-collected"
    assert p["which"] == "rate between collections"
    series = next(r for r in a.workloads["memory"]["rows"]
                  if r["cell"] == rows["fresh"]["cell"] and r["series"] == "modeled_native_bytes")
    assert p["slope"] == series["rate_between_collections"] == 42 * 16384
    # growing with fewer than 3 floors: the one rule, nothing projected, and it says why
    assert len(series["floors"].split()) < 3
    assert p["tokens"] is None and series["projected_tokens_to_budget"] is None and series["projection_slope"] is None
    assert p["why"].startswith("not projected: growing until collected, ") and p["why"].endswith("floor(s) (needs 3)")
    assert series["projection_basis"] == p["why"]
    assert rows["reuse"]["projection"]["tokens"] is None and rows["reuse"]["projection"]["kind"] == "flat"
    assert rows["reuse"]["projection"]["why"] == "not projected: flat"
    html = (a.out_dir / "report.html").read_text(encoding="utf-8")
    assert "tokens to 2,000 MB" in html and "tokens to 2,048 MB" not in html


def test_a_single_repetition_gives_no_interval_and_no_significance_for_per_repetition_metrics(analysed, tmp_path):
    from conftest import run_cli

    a = analysed["webkit-decode-loop"]                      # one repetition per variant
    for g in a.stats.groups.values():
        for m, e in g.metrics.items():
            if e.kind == "cell":
                assert (e.ci_low, e.ci_high, e.ci_method) == (None, None, "n=1: no interval"), m
    cell_diffs = [d for d in a.stats.differences if S.metric_kind(d.metric) == "cell"]
    assert cell_diffs and all(d.significant is None and d.ci_method == "n=1: no interval" for d in cell_diffs)
    rows = list(csv.DictReader((a.out_dir / "differences.csv").open()))
    assert all(r["significant"] == "" for r in rows if r["metric"] in {d.metric for d in cell_diffs})
    src = tmp_path / "run"
    shutil.copytree(RUNS / "webkit-decode-loop", src)
    r = run_cli("report", str(src))
    assert r.returncode == 0, r.stderr
    for line in r.stdout.splitlines():
        if "live_bind_groups_max" in line or "peak_rss" in line:
            assert "(significant)" not in line, line


def test_block_bootstrap_respects_correlated_tokens():
    # AR(1) tokens (phi 0.7): a slow token is followed by slow ones. The median's true value is 0.
    iid_hits, block_hits = [], []
    for seed in range(150):
        rng = np.random.default_rng(seed)
        x = np.zeros(240)
        for i in range(1, 240):
            x[i] = 0.7 * x[i - 1] + rng.normal()
        lo, hi, how = S.bootstrap_ci(x, "median", seed=seed)
        iid_hits.append(lo <= 0 <= hi)
        blo, bhi, bhow = S.block_bootstrap_ci([x], "median", seed=seed)
        assert bhow == "block-bootstrap-percentile"
        block_hits.append(blo <= 0 <= bhi)
    # resampling single tokens as independent draws makes the interval too narrow
    assert np.mean(iid_hits) < 0.80 < np.mean(block_hits), (np.mean(iid_hits), np.mean(block_hits))


def test_dispatch_overhead_is_summarised_per_method_and_budgets_select_a_method(analysed):
    a = analysed["chromium-dispatch-overhead"]
    s = a.tables.summary
    st = a.tables.steps
    for _, row in s.iterrows():
        assert row["step_unit"] == "method × round"
        seq = st[(st["cell"] == row["cell"]) & (st["extra_config"] == "sequential") & (st["extra_round"] >= 1)]
        assert row["us_per_dispatch_sequential"] == pytest.approx(seq["extra_us_per_dispatch"].mean(), abs=1e-3)
        assert row["kernel_us_per_dispatch"] > 0
    run = a.stats
    results = B.evaluate(B.load(["dispatch-overhead/reused: us_per_dispatch_sequential <= 10 * fresh",
                                 "dispatch-overhead: us_per_dispatch_single-op >= 1"]), run)
    assert [r.status for r in results] == ["passed", "passed"]
    fresh = next(g for g in run.groups.values() if g.key.variant == "fresh")
    e = fresh.metrics["us_per_dispatch_single-op"]
    single = st[(st["variant"] == "fresh") & (st["extra_config"] == "single-op") & (st["extra_round"] >= 1)]
    assert e.value == pytest.approx(single["extra_us_per_dispatch"].median()) and e.n == len(single)


def test_console_names_cells_without_none_or_nan(analysed, tmp_path):
    from conftest import run_cli

    src = tmp_path / "run"
    shutil.copytree(RUNS / "chromium-dispatch-overhead", src)
    r = run_cli("report", str(src))
    assert r.returncode == 0, r.stderr
    assert "[None]" not in r.stdout and " nan" not in r.stdout and "None" not in r.stdout
    assert "µs per dispatch by method" in r.stdout and "µs per dispatch, sequential" in r.stdout


def test_pids_are_integers_and_rss_zero_is_not_a_sample(analysed):
    for a in analysed.values():
        m = a.tables.memory
        assert str(m["pid"].dtype) == "Int64"
        ps = m[m["source"] == "psutil"]
        assert len(ps) and (ps["rss_bytes"] > 0).all() and ps["pid"].notna().all()
        text = (a.out_dir / "memory.csv").read_text()
        assert ".0," not in "".join(line.split(",")[3] + "," for line in text.splitlines()[1:])


def test_gc_versus_latency_and_collection_marks_on_the_latency_chart(analysed):
    import json
    import re

    a = analysed["chromium-decode-loop"]
    n = a.workloads["memory"]
    fresh = next(g for g in n["gc_latency"] if "/fresh@" in g["group"])
    events = {c: e["natural"] + e["forced"] for c, e in n["events"].items() if ".fresh." in c}
    st = a.tables.steps
    tokens = st[(st["variant"] == "fresh") & (st["step"] >= 1)]
    hit = [t in events[c] for c, t in zip(tokens["cell"], tokens["step"])]
    assert fresh["n_event"] == sum(hit) > 0 and fresh["n_rest"] == len(hit) - sum(hit)
    assert fresh["event_median"] == pytest.approx(tokens.loc[hit, "wall_ms"].median())
    # 4 tokens with a collection: too few for an interval, said, and nothing called significant
    assert fresh["n_event"] == 4 and (fresh["low"], fresh["high"], fresh["significant"]) == (None, None, None)
    assert fresh["ci_method"] == "too few samples (n=4; needs 10 on each side)"
    html = (a.out_dir / "report.html").read_text(encoding="utf-8")
    data = json.loads(re.search(r'id="chart-data">(.*?)</script>', html, re.S).group(1).replace("<\\/", "</"))
    marks = [t for t in data["ms_per_token"]["data"] if (t.get("meta") or {}).get("marks") == "natural"]
    assert {m["meta"]["cell"] for m in marks} == {c for c, e in events.items() if e}
    for m in marks:
        assert m["x"] == [t for t in n["events"][m["meta"]["cell"]]["natural"] if t in set(st.loc[st["cell"] == m["meta"]["cell"], "step"])]
    assert '<section id="memory">' in html and "GC vs latency" in html
