"""Each memory statement matches its samples, on a real run whose statements did not (tests/analysis/
kept-runs/default-suite-chromium-webkit: `make run` on Chromium and WebKitGTK, see its COMMAND) and
on the recorded runs: one class and one growth estimate per cell × series, the same in the findings,
stats.csv, the Memory section and memory_series.csv; verbs and "includes 0" that follow the
interval; collection events and falls counted apart; a max from few samples saying so. No browser,
nothing mocked: the recorded samples are analysed and the files written from them are read back."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from harness import pipeline
from harness.report.finding import quantity
from harness.report.memory_findings import trend_word

HERE = Path(__file__).resolve().parent
RUN = HERE / "kept-runs" / "default-suite-chromium-webkit"
FRESH, REUSE = "chromium.decode-loop.fresh.ort-field-1.7b.r0", "chromium.decode-loop.reuse.ort-field-1.7b.r0"
WK_FRESH = "webkit.decode-loop.fresh.ort-field-1.7b.r0"
RECORDED = ["chromium-decode-loop", "mixed-decode-loop", "webkit-gc-retention", "webkit-decode-loop"]


@pytest.fixture(scope="module")
def analysis(tmp_path_factory):
    a, _ = pipeline.analyse_and_write(RUN, out_dir=tmp_path_factory.mktemp("default-suite"))
    return a


def _series_csv(a) -> dict[tuple[str, str], dict]:
    with (a.out_dir / "memory_series.csv").open(encoding="utf-8") as fh:
        return {(r["cell"], r["series"]): r for r in csv.DictReader(fh)}


def _stats_csv(a) -> dict[tuple[str, str], dict]:
    with (a.out_dir / "stats.csv").open(encoding="utf-8") as fh:
        return {(r["group"], r["metric"]): r for r in csv.DictReader(fh)}


def test_a_js_heap_sawtooth_is_not_called_flat(analysis):
    rows = _series_csv(analysis)
    heap = rows[(FRESH, "js_heap_bytes")]
    # the samples: 1,629,652 B first, 3,106,060 B max, 1,390,060 B last, collected every 2-4 tokens
    assert (float(heap["first"]), float(heap["max"]), float(heap["last"])) == (1_629_652, 3_106_060, 1_390_060)
    assert heap["class"] == "growing-until-collected", heap["reason"]
    assert len(heap["falls"].split()) == 16 and heap["collection_events"] == ""   # the heap has no collected counter
    assert "never rose" not in heap["reason"] and "brought it back to 1.33 MiB" in heap["reason"]
    # the classification of memory_series.csv is the one the findings and the Memory section print
    said = next(f.text() for f in analysis.findings if f.text().startswith("Worker JS heap used"))
    # with what each class rests on (positions and falls: memory_series.csv points, falls; the heap
    # has no collection counter) and the rate between drops of the growing one
    assert said == ("Worker JS heap used (CDP, measured): fresh growing until collected, rising 519 KiB/token between "
                    "drops (n=48 positions, 16 falls); reuse bounded (n=54 positions, 19 falls).")
    assert not any("worker JS heap" in f.text() for f in analysis.findings if f.text().startswith("Flat"))
    html = (analysis.out_dir / "report.html").read_text(encoding="utf-8")
    assert re.search(r"worker JS heap used \(CDP, measured\)</td><td class=\"l\">growing-until-collected", html)


@pytest.mark.parametrize("name", RECORDED)
def test_flat_only_where_the_samples_are_flat(name, tmp_path):
    a, _ = pipeline.analyse_and_write(HERE / "runs" / name, out_dir=tmp_path)
    flat = [r for r in _series_csv(a).values() if r["class"] == "flat"]
    assert flat
    for r in flat:
        assert r["events"] == "" and r["falls"] == "", r
        if "never rose above its first value" in r["reason"]:
            assert float(r["max"]) <= float(r["first"]), r


def test_interval_words_follow_the_interval_and_bytes_use_the_formatter(analysis):
    rows = _series_csv(analysis)
    browser = rows[(FRESH, "rss_bytes_browser")]
    # -138 KiB/token [-140, -136]: floors that fall, never "95% CI includes 0"
    assert (float(browser["floor_ci_low"]), float(browser["floor_ci_high"])) == (-143_360, -139_264)
    assert "floor slope -138 KiB/token [-140 KiB/token, -136 KiB/token], floors fall; max 208 MiB" in browser["reason"]
    for r in rows.values():
        assert not re.search(r"\de[+-]\d", r["reason"]), r["reason"]        # no 1.413e+05, 2.182e+08
        if "95% CI includes 0" in r["reason"] and r["floor_ci_low"]:
            assert float(r["floor_ci_low"]) <= 0 <= float(r["floor_ci_high"]), r
        if "floors fall" in r["reason"]:
            assert float(r["floor_ci_high"]) < 0, r


def test_a_verb_per_variant_from_its_own_interval(analysis):
    gpu = next(f for f in analysis.findings if f.text().startswith("RSS of every gpu-process (sum)"))
    assert gpu.text() == ("RSS of every gpu-process (sum), growth per token: fresh no trend stated 35.6 KiB/token "
                          "[-145 KiB/token, 120 KiB/token] (95% CI includes 0); reuse no trend stated -163 KiB/token "
                          "[-562 KiB/token, -33.3 KiB/token] (1 repetition: within-run only).")  # it said "falls"
    checked = 0
    for f in analysis.findings:
        if f.kind != "memory_growth":
            continue
        for k, part in enumerate(f.parts):
            if isinstance(part, str) or k == 0:
                continue
            before = f.parts[k - 1]
            if "series" in (part.basis or "").split("+"):  # < 3 floors: written as a rate, no verb before it
                assert not before.endswith(("rises ", "falls ")) and "between collections" in quantity(part), (before, part)
                continue
            if trend_word(part) in ("rises", "falls") and (part.n_reps or 0) >= 2:
                assert before.endswith(trend_word(part) + " "), (before, part)
                checked += 1
            elif trend_word(part) in ("rises", "falls"):  # one repetition: an interval within one run, no verb
                assert before.endswith("no trend stated ") and f.parts[k + 1] == " (1 repetition: within-run only)"
                checked += 1
            assert not (before.endswith("rises ") and part.value <= 0), (before, part)
            assert not (before.endswith("falls ") and part.value >= 0), (before, part)
    assert checked == 2   # renderer and GPU process reuse fall (WebKit's modeled bytes: 1 floor, a rate between collections)


def test_one_estimate_per_cell_and_series_in_every_file(analysis):
    rows, stats = _series_csv(analysis), _stats_csv(analysis)
    pairs = [("rss_growth_bytes_per_token_gpu-process", "rss_bytes_gpu-process"),
             ("js_heap_growth_bytes_per_token", "js_heap_bytes"),
             ("rss_growth_bytes_per_token_renderer", "rss_bytes_renderer"),
             ("live_bind_groups_growth_per_token", "bind_groups_live")]
    checked = 0
    for key, g in analysis.stats.groups.items():
        if len(g.cells) != 1:
            continue
        for metric, series in pairs:
            e, r = g.metrics.get(metric), rows.get((g.cells[0], series))
            if e is None or r is None or e.value is None:
                continue
            # one repetition: the group's estimate is the cell's, to the last digit, in every file
            assert (e.value, e.ci_low, e.ci_high) == (float(r["growth_per_token"]), float(r["growth_ci_low"]),
                                                      float(r["growth_ci_high"])), (key.label, metric)
            s = stats[(key.label, metric)]
            assert (float(s["value"]), float(s["ci_low"]), float(s["ci_high"])) == (e.value, e.ci_low, e.ci_high)
            checked += 1
    assert checked >= 6
    reuse = rows[(REUSE, "rss_bytes_gpu-process")]
    assert (float(reuse["growth_per_token"]), float(reuse["growth_ci_low"]), float(reuse["growth_ci_high"])) == (
        pytest.approx(-167_045.57, abs=0.01), pytest.approx(-575_618.72, abs=0.01), pytest.approx(-34_133.33, abs=0.01))
    fresh = rows[(FRESH, "rss_bytes_gpu-process")]
    # it never rose above its first value but fell 3 times: its real floor slope, not 0 [0, 0]
    assert fresh["growth_basis"] == "floors" and float(fresh["floor_slope"]) == float(fresh["growth_per_token"]) != 0


def test_repetitions_pooled_are_said_where_they_are(tmp_path):
    a, _ = pipeline.analyse_and_write(HERE / "runs" / "mixed-decode-loop", out_dir=tmp_path)
    growth = [f.text() for f in a.findings if f.kind == "memory_growth" and "growth per token:" in f.text()]
    assert growth and all("(pooled over 2 repetitions)" in t for t in growth)


def test_collection_events_and_falls_counted_once_and_apart(analysis):
    rows = _series_csv(analysis)
    ret = {r["cell"]: r for r in analysis.workloads["retention"]["rows"]}
    # steps.csv: WebKit collected 16 bind groups in the warm-up step and 8,278 at step 25
    wk = ret[WK_FRESH]
    assert (wk["gc_events"], wk["gc_events_warmup"], wk["per_event_median"], wk["per_event_max"]) == (1, 1, 8278, 8278)
    assert len(rows[(WK_FRESH, "bind_groups_live")]["collection_events"].split()) == wk["gc_events"]
    cr = ret[FRESH]
    bg = rows[(FRESH, "bind_groups_live")]
    assert (cr["gc_events"], cr["gc_events_warmup"]) == (25, 1)
    assert len(bg["collection_events"].split()) == 25 and len(bg["falls"].split()) == 23
    assert (cr["per_event_min"], cr["per_event_median"], cr["per_event_max"]) == (318, 957, 1295)
    html = (analysis.out_dir / "report.html").read_text(encoding="utf-8")
    assert "<td>25 (+1 in the warm-up)</td>\n<td>957 (318–1,295)</td>" in html
    assert "<td>1 (+1 in the warm-up)</td>\n<td>8,278</td>" in html


def test_a_max_from_fewer_than_3_samples_says_how_many(analysis):
    s = analysis.tables.summary.set_index("cell")
    assert s.loc[WK_FRESH, "content_rss_samples"] == 1 and s.loc[FRESH, "content_rss_samples"] == 24
    assert round(s.loc[WK_FRESH, "content_rss_bytes_max"] / 2**20, 1) == 315.4
    html = (analysis.out_dir / "report.html").read_text(encoding="utf-8")
    assert html.count("315.4 (n=1)") == 2           # the cells table and the retention table
    assert "167.3 (n=" not in html                   # Chromium's max rests on 24 rounds


def test_emulated_native_bytes_fall_where_the_emulation_released_collected_bind_groups(tmp_path):
    """WebKitGTK's emulated WebGPU frees a bind group's modeled native bytes when its wrapper is
    collected (web/worker.js: native_bind_groups_released += bindGroupsCollected): the series'
    falls are collections, never "no collection seen" (a statement checker found it said so)."""
    run = HERE / "kept-runs" / "chromium-webkit-repeat2"
    a, _ = pipeline.analyse_and_write(run, out_dir=tmp_path / "out")
    steps = a.tables.steps
    released = {}
    for cell, g in steps[steps["cell"].str.startswith("webkit.decode-loop.fresh")].groupby("cell"):
        r = g.sort_values("step")["native_bind_groups_released"].astype(float)
        released[cell] = [int(s) for s, d in zip(g.sort_values("step")["step"], r.diff().fillna(r)) if d > 0]
    assert released and all(released.values()), released      # the emulation did release bind groups
    rows = _series_csv(a)
    for cell, steps_released in released.items():
        row = rows[(cell, "modeled_native_bytes")]
        assert row["collection_events"], row                   # linked to the series
    text = (a.out_dir / "summary.md").read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.startswith("- Modeled native bytes of bind groups"))
    # one floor per repetition: growing, whether collections free it not known; collections were seen
    assert "fresh growing by" in line and "no collection seen" not in line, line


def test_the_html_findings_name_the_variants_their_text_names(tmp_path):
    """report.html's findings end as stats.json's do: "(variant: reuse)" where the sentence does
    not name the variants it covers (the HTML had dropped it, so a flat and a bounded class of
    the same series read as contradicting each other)."""
    a, _ = pipeline.analyse_and_write(HERE / "kept-runs" / "chromium-webkit-repeat2", out_dir=tmp_path / "out")
    notes = [f.covers_note() for f in a.findings if f.covers_note()]
    assert len(notes) >= 2, notes
    html = (a.out_dir / "report.html").read_text(encoding="utf-8")
    items = re.findall(r'<li data-kind="[a-z_]+">(.*?)</li>', html, flags=re.S)
    for f in a.findings:
        if f.covers_note():
            assert f.text().endswith(f.covers_note())
            assert any(re.sub(r"<[^>]+>", "", li).rstrip().endswith(f.covers_note().strip()) or f.covers_note().strip() in li
                       for li in items), f.covers_note()
    assert sum(li.count("(variant") for li in items) >= len(notes)


@pytest.mark.parametrize("name", ["webkit-decode-loop", "chromium-bind-group-cache"])
def test_growing_until_collected_only_where_a_collection_took_the_rise_back(name, tmp_path):
    # memory_series.csv's class growing-until-collected covers two cases (harness/stats/floors.py):
    # floors that rose and a later drop that took them back, or a rise with fewer than 3 floors,
    # where no one knows whether collections free it; the findings name the first only
    a, _ = pipeline.analyse_and_write(HERE / "runs" / name, out_dir=tmp_path)
    rows = [r for r in _series_csv(a).values() if r["class"] == "growing-until-collected"
            and r["series"] == "bind_groups_live"]
    said = [f.text() for f in a.findings if f.text().startswith("Live GPUBindGroup wrappers (created − collected):")
            and "growing" in f.text()]
    assert rows and len(said) == len({r["group"] for r in rows})
    came_back = {r["group"] for r in rows if len(r["floors"].split()) >= 3}
    unknown = {r["group"]: len(r["floors"].split()) for r in rows if len(r["floors"].split()) < 3}
    # bind-group-cache evict: its floor rose to 64 over 4 drops, then came back to 42
    assert sum("growing until collected, rising " in t and "not known" not in t for t in said) == len(came_back), said
    for floors in unknown.values():  # one floor or two: whether collections free it is not known
        assert any("until collected" not in t and " growing by " in t
                   and f"whether collections bring it back is not known ({floors} floor" in t for t in said), said
    assert len(said) == len(came_back) + len(unknown)


def test_bounded_needs_floors_that_do_not_rise_and_falls_are_counted_apart_from_collections(tmp_path):
    # bind-group-cache: the buffer bytes' 2 floors sit above the first value and each higher
    # (1,305,128 B at step 7, then 1,317,416 / 1,318,440 B: the KV cache's 1,024 B a token): a rise
    # too short to fit, not "collections bring them back"
    a, _ = pipeline.analyse_and_write(HERE / "runs" / "chromium-bind-group-cache", out_dir=tmp_path / "cache")
    rows = _series_csv(a)
    for variant in ("evict", "never"):
        r = rows[(f"chromium.decode-loop.reuse.tiny.bind_group_cache-{variant}.r0", "buffer_bytes_live")]
        floors = [float(f.split(":")[1]) for f in r["floors"].split()]
        assert len(floors) == 2 and float(r["first"]) < floors[0] < floors[1], r
        assert r["class"] == "growing-until-collected", r
    text = [f.text() for f in a.findings if f.kind == "memory_classes"]
    assert not any(t.startswith("Bounded") and "buffer bytes not destroyed" in t for t in text), text
    # its falls are collections (buffer_bytes_collected rose at both): no "(no collection seen)"
    steps = a.tables.steps
    for variant, at in (("evict", [7, 19]), ("never", [7, 20])):
        s = steps[steps["cell"] == f"chromium.decode-loop.reuse.tiny.bind_group_cache-{variant}.r0"]
        rose = s.loc[s["buffer_bytes_collected"].diff() > 0, "step"].tolist()
        assert rose == at and rows[(s["cell"].iloc[0], "buffer_bytes_live")]["collection_events"] == " ".join(map(str, at))
    assert sum(t.startswith("Buffer bytes not destroyed") and "not known (2 floors; needs 3)" in t
               and "(n=23 positions, 2 falls, 2 collection events, 2 forced collections)" in t
               and "no collection seen" not in t for t in text) == 2, text
    # never: the bind groups never fell; the 2 forced collections freed none: no "drops" to be between
    never = rows[("chromium.decode-loop.reuse.tiny.bind_group_cache-never.r0", "bind_groups_live")]
    assert (never["falls"], never["collection_events"], never["forced_events"]) == ("", "", "7 20")
    said = next(t for t in text if t.startswith("Live GPUBindGroup wrappers") and "bind_group_cache=never" in t)
    assert "(n=23 positions, 0 falls, 2 forced collections)" in said and "between drops" not in said, said
    md = (a.out_dir / "summary.md").read_text(encoding="utf-8")
    assert "rose 8 bind groups/token and never fell" in md and "**rose" not in md and "**18 KiB/token**" not in md
    # ort-run: 7 steps in which wrappers were collected, 5 in which the count fell
    b, _ = pipeline.analyse_and_write(HERE / "runs" / "chromium-ort-run", out_dir=tmp_path / "ort")
    r = _series_csv(b)[("chromium.ort-run.default.conv-tiny.r0", "bind_groups_live")]
    assert (len(r["falls"].split()), len(r["collection_events"].split())) == (5, 7)
    assert any("live GPUBindGroup wrappers (created − collected) (n=17 positions, 5 falls, 7 collection events)" in f.text()
               for f in b.findings), [f.text() for f in b.findings]
    # its buffer bytes fell at destroy() (buffer_bytes_collected 0 throughout): not "collections bring them back"
    st = b.tables.steps
    assert (st["buffer_bytes_collected"].fillna(0) == 0).all()
    said = [f.text() for f in b.findings if "buffer bytes not destroyed" in f.text()]
    assert said and all(t.startswith("Bounded (falls with no collection of them bring them back: destroy()") for t in said), said
