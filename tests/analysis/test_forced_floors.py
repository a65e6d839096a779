"""Forced collections (``--gc-checkpoints``) and what the memory analysis says of them, on runs
recorded by a checker on this machine (tests/analysis/kept-runs/chk-*: COMMAND says how):

- chk-b: Chromium, decode-loop fresh leaking every call, 40 tokens, a forced collection every 5
  tokens: the worker waited at each, so each collection falls between step ``token`` and
  ``token + 1``; GPUBuffer wrappers are never collected nor destroyed, so their floors at the
  forced collections rise by exactly what one token creates.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from harness import pipeline

KEPT = Path(__file__).resolve().parent / "kept-runs"


def _samples(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "samples.jsonl").read_text().splitlines() if x.strip()]


def _series(out: Path) -> dict[str, dict]:
    with (out / "memory_series.csv").open() as f:
        return {r["series"]: r for r in csv.DictReader(f)}


@pytest.fixture(scope="module")
def chk_b(tmp_path_factory):
    out = tmp_path_factory.mktemp("chk-b")
    analysis, _ = pipeline.analyse_and_write(KEPT / "chk-b", out_dir=out)
    return _samples(KEPT / "chk-b"), analysis, out


def test_every_waited_forced_collection_is_a_floor(chk_b):
    samples, analysis, out = chk_b
    steps = {s["step"]: s for s in samples if s.get("kind") == "step"}
    gc = [s for s in samples if s.get("kind") == "gc_checkpoint" and s["forced"]]
    assert [g["token"] for g in gc] == [4, 9, 14, 19, 24, 29, 34, 39]
    assert all(g["done_token"] == g["token"] for g in gc)       # the worker waited at each
    # the collection falls before the next step: every one with a step after it is placed there
    placed = [g["token"] + 1 for g in gc if g["token"] + 1 in steps]
    assert placed == [5, 10, 15, 20, 25, 30, 35]
    row = _series(out)["buffers_live"]
    assert row["forced_events"].split() == [str(t) for t in placed]
    floors = {int(a): float(b) for a, b in (p.split(":") for p in row["floors"].split())}
    assert floors == {t: float(steps[t]["live"]["buffers_live"]) for t in placed}
    per_token = {steps[t + 1]["live"]["buffers_created"] - steps[t]["live"]["buffers_created"] for t in range(1, 39)}
    assert per_token == {39}                                    # 39 buffers created per token, none collected
    assert row["class"] == "retained-growth"
    assert float(row["floor_slope"]) == pytest.approx(39.0)
    assert float(row["floor_ci_low"]) > 0
    by_bytes = _series(out)["buffer_bytes_live"]
    step_bytes = steps[10]["live"]["buffer_bytes_live"] - steps[9]["live"]["buffer_bytes_live"]
    assert by_bytes["class"] == "retained-growth"
    assert float(by_bytes["floor_slope"]) == pytest.approx(step_bytes)   # 286,312 B (280 KiB) a token
    text = " ".join(f.text() for f in analysis.findings if f.kind == "memory_classes")
    assert "fresh retained growth, floor slope 39 [" in text
    assert "280 KiB/token" in text
    assert "whether collections would bring it back is not known" not in row["reason"]


# chk-c: WebKitGTK, ort-run, 60 tokens (emulated WebGPU): modeled native bytes of bind groups
# rise every step and nothing is ever collected; 31 GPUBuffers live until session.release.
@pytest.fixture(scope="module")
def chk_c(tmp_path_factory):
    out = tmp_path_factory.mktemp("chk-c")
    analysis, _ = pipeline.analyse_and_write(KEPT / "chk-c", out_dir=out)
    return _samples(KEPT / "chk-c"), analysis, out


def test_no_projection_without_three_floors(chk_c):
    samples, _, out = chk_c
    steps = {s["step"]: s for s in samples if s.get("kind") == "step"}
    assert max(s["live"]["bind_groups_collected"] for s in steps.values()) == 0   # nothing ever collected
    row = _series(out)["modeled_native_bytes"]
    assert row["class"] == "growing-until-collected" and row["floors"] == ""
    assert float(row["growth_per_token"]) == 112 * 1024                           # it does rise 112 KiB a step
    assert row["projected_tokens_to_budget"] == "" and row["projection_slope"] == ""
    assert row["projection_basis"] == "not projected: growing until collected, 0 floor(s) (needs 3)"
    html = (out / "report.html").read_text()
    assert "(rate between collections)</td>" not in html
    assert "not projected: growing until collected, 0 floor(s) (needs 3)" in html


def test_a_fall_by_destroy_at_the_end_is_flat_not_bounded(chk_c):
    samples, analysis, out = chk_c
    steps = {s["step"]: s for s in samples if s.get("kind") == "step"}
    last = max(steps)
    held = {steps[t]["live"]["buffers_not_destroyed"] for t in range(1, last)}
    assert held == {31} and steps[last]["live"]["buffers_not_destroyed"] == 0      # 31 until the release
    destroyed = steps[last]["counters"]["bufferDestroy"]
    assert destroyed == 31 and steps[last]["live"]["buffers_collected"] == 0
    rows = _series(out)
    for name in ("buffers_not_destroyed", "buffer_bytes_live", "modeled_buffer_bytes"):
        r = rows[name]
        assert r["class"] == "flat" and r["falls"] == str(last) and r["collection_events"] == "", r
        assert f"until its last position, where it fell to 0" in r["reason"]
        assert f"(destroy() of {destroyed} buffers at that step, no collection)" in r["reason"]
    text = " ".join(f.text() for f in analysis.findings if f.kind == "memory_classes")
    assert "Bounded (collections bring them back)" not in text


def test_a_rise_with_no_collection_is_not_a_rate_between_collections(chk_c):
    samples, analysis, out = chk_c
    steps = [s for s in samples if s.get("kind") == "step"]
    assert {s["live"]["bind_groups_collected"] for s in steps} == {0}
    rise = {b["live"]["bind_groups_live"] - a["live"]["bind_groups_live"] for a, b in zip(steps[1:-1], steps[2:-1])}
    assert rise == {7}                                                          # 7 bind groups a step, none freed
    assert "rose 7 bind groups/step and never fell" in (out / "summary.md").read_text()
    text = " ".join(f.text() for f in analysis.findings)
    assert "between collections (0 floors" not in text
    assert "rose 112 KiB/step and never fell" in text
    assert _series(out)["bind_groups_live"]["reason"].startswith("no collection seen in 61 positions while it rose 7;")


def test_the_budget_max_says_where_its_rss_came_from(chk_c):
    _, analysis, out = chk_c
    import pandas as pd
    s = pd.read_csv(out / "summary.csv").iloc[0]
    m = pd.read_csv(out / "memory.csv")
    content = m[(m["process_type"] == "WebKitWebProcess") & m["token"].notna()]
    placed = sorted(content["token"].astype(int).unique())
    assert placed == [56, 61] and int(s["content_rss_samples"]) == 2          # RSS rounds placed on a step
    at, rss_at = int(s["memory_budget_counted_token"]), int(s["memory_budget_rss_token"])
    assert rss_at == max(t for t in placed if t <= at) and rss_at < at       # carried forward to the max's step
    steps = pd.read_csv(out / "steps.csv").set_index("step")
    rss = content[content["token"] == rss_at]["rss_bytes"].max()             # the largest single content process
    modeled = steps.loc[at, "modeled_native_bytes"] + max(
        steps.loc[at, "modeled_buffer_bytes"] - steps.loc[at, "buffer_contents_js_bytes"], 0)
    assert float(s["memory_budget_counted_bytes_max"]) == pytest.approx(rss + modeled)
    said = f"at step {at}: RSS carried forward from step {rss_at} (n=2 RSS rounds)"
    assert said in " ".join(f.text() for f in analysis.findings if f.kind == "memory_budget")


@pytest.fixture(scope="module")
def chk_e(tmp_path_factory):
    out = tmp_path_factory.mktemp("chk-e")
    analysis, _ = pipeline.analyse_and_write(KEPT / "chk-e", out_dir=out)
    return _samples(KEPT / "chk-e"), analysis, out


def test_rss_is_bounded_by_falls_and_named_as_a_sum(chk_e):
    samples, analysis, out = chk_e
    import pandas as pd
    rows = pd.read_csv(out / "memory_series.csv")
    chromium = rows[rows["cell"].str.startswith("chromium.")]
    gpu = chromium[chromium["series"] == "rss_bytes_gpu-process"]
    assert set(gpu["class"]) == {"bounded"} and gpu["collection_events"].isna().all()   # no collected counter
    reuse = gpu[gpu["cell"].str.contains(".reuse.")].iloc[0]
    assert reuse["floor_ci_high"] < 0 and len(reuse["floors"].split()) >= 3              # its floors fall
    classes = [f.text() for f in analysis.findings if f.kind == "memory_classes"]
    bounded = [t for t in classes if t.startswith("Bounded (collections bring them back)")]
    assert bounded and not any("RSS" in t for t in bounded)
    assert any(t.startswith("Bounded (falls bring them back") and "RSS of every gpu-process (sum" in t
               for t in classes)
    # the renderer RSS a growth is said of is the sum of every renderer process of the round
    m = pd.read_csv(out / "memory.csv")
    r = m[m["cell"].str.startswith("chromium.decode-loop.fresh") & (m["process_type"] == "renderer")]
    assert r.groupby("time_s")["pid"].nunique().max() == 3
    growth = " ".join(f.text() for f in analysis.findings if f.kind == "memory_growth")
    assert "RSS of all renderer processes (sum), growth per token" in growth
    assert "RSS of all WebKitWebProcess processes (sum)" in growth
    assert "Content process RSS (renderer)" not in growth and "content process RSS (renderer)" not in growth
