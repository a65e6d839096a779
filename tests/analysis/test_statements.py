"""Every printed statement against the samples it rests on (issue 20: no statement on fewer
points than it claims, no within-run noise called significant, no partial measurement shown as
complete), on real run folders recorded from Chromium and WebKitGTK (tests/analysis/runs/,
tests/analysis/app-runs/; re-recorded by tests/analysis/record.py). No browser, nothing mocked:
run folder in, the console, report.html and summary.md out."""

from __future__ import annotations

import csv
import re
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from conftest import run_cli
from harness import pipeline

HERE = Path(__file__).resolve().parent
RUNS = HERE / "runs"
APP_RUNS = HERE / "app-runs"
NAMES = ("chromium-decode-loop", "webkit-decode-loop", "mixed-decode-loop", "chromium-gc-cadence",
         "chromium-bind-group-cache", "chromium-ort-run", "webkit-clean-destroy")


class _Text(HTMLParser):
    """report.html as text: one line per table row (cells joined by " | "), scripts left out."""

    def __init__(self):
        super().__init__()
        self.out, self.skip = [], 0

    def handle_starttag(self, tag, attrs):
        self.skip += tag in ("script", "style")
        if tag in ("tr", "p", "li", "h2", "h3", "div"):
            self.out.append("\n")
        elif tag in ("td", "th"):
            self.out.append(" | ")

    def handle_endtag(self, tag):
        self.skip -= tag in ("script", "style")

    def handle_data(self, data):
        if not self.skip:
            self.out.append(data.replace("\n", " "))


def html_text(path: Path) -> str:
    p = _Text()
    p.feed(path.read_text(encoding="utf-8"))
    return re.sub(r"[ \t]+", " ", "".join(p.out))


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    out = {}
    for name in NAMES:
        a = pipeline.analyse(RUNS / name, out_dir=tmp_path_factory.mktemp(name))
        pipeline.write(a)
        out[name] = a
    a = pipeline.analyse(APP_RUNS / "chromium-app-realms", out_dir=tmp_path_factory.mktemp("realms"))
    pipeline.write(a)
    out["chromium-app-realms"] = a
    return out


def _md(a) -> str:
    return (a.out_dir / "summary.md").read_text(encoding="utf-8")


def _findings(a) -> str:
    return "\n".join(f.text() for f in a.findings)


def _section(text: str, title: str) -> str:
    """The text of one report section, from its heading to the next section's."""
    start = text.index("\n" + title)
    nxt = re.search(r"\n(Remedies side by side|Memory: |Buffers created|Environment|Statistics:|Cells\n)",
                    text[start + 1:])
    return text[start:start + 1 + nxt.start()] if nxt else text[start:]


# 1. a budget not crossed reads "not reached (max X of Y)" everywhere --------------------------------
# ("not decided (max X of Y): too few RSS rounds …" where it rests on fewer than 3 RSS rounds)


def _not_passed(rounds) -> str:
    """The words of a budget not passed by a cell (or a variant: its fewest) of ``rounds`` RSS rounds."""
    return "not reached" if int(rounds) >= 3 else "not decided"


def test_a_budget_not_crossed_reads_not_reached_in_every_table(analysed):
    for name in ("chromium-decode-loop", "webkit-decode-loop"):
        a = analysed[name]
        s = a.tables.summary
        assert s["would_be_killed_at_token"].isna().all()
        budget = s["memory_budget_bytes"].iloc[0] / 1e6
        retention = _section(html_text(a.out_dir / "report.html"), "Bind group retention per engine")
        rows = [r for r in retention.splitlines() if r.startswith(" | ") and re.search(r"\.r\d+ \|", r)]
        assert len(rows) == len(s)
        for _, r in s.iterrows():
            row = next(x for x in rows if r["cell"] in x)
            said = (f"{_not_passed(r['content_rss_samples'])} (max {round(r['memory_budget_counted_bytes_max'] / 1e6):,} MB "
                    f"of {budget:,.0f} MB")
            assert said in row, row
            rounds = int(r["content_rss_samples"])                # how many RSS rounds the max rests on
            at = r["memory_budget_counted_token"]
            assert (f"{said} at token {int(at)}: " if pd.notna(at) else f"{said}: RSS sampled outside the tokens") in row, row
            assert f"(n={rounds} RSS round" in row, row
            assert "token 0" not in row, row
        for _, g in s.groupby("variant"):
            most = (f"{_not_passed(g['content_rss_samples'].min())} (max "
                    f"{round(g['memory_budget_counted_bytes_max'].max() / 1e6):,} MB of {budget:,.0f} MB")
            assert most in _findings(a) and most in _md(a), (most, _findings(a))
        assert "token 0" not in _md(a)


def test_the_console_says_a_budget_not_crossed_in_the_same_words(analysed, tmp_path):
    import shutil

    a = analysed["chromium-decode-loop"]
    src = tmp_path / "run"
    shutil.copytree(RUNS / "chromium-decode-loop", src)
    r = run_cli("report", str(src))
    assert r.returncode == 0, r.stderr
    lines = [x for x in r.stdout.splitlines() if ": memory budget 400 MB: " in x]
    assert len(lines) == len(a.tables.summary)
    for _, row in a.tables.summary.iterrows():
        said = f"{_not_passed(row['content_rss_samples'])} (max {round(row['memory_budget_counted_bytes_max'] / 1e6):,} MB of 400 MB"
        rounds = f"(n={int(row['content_rss_samples'])} RSS round"  # how many RSS rounds it rests on
        # a cell sampled only in the warm-up (content_rss_samples 0) says so after the same words
        tail = ": its content-process RSS rests on no in-step sample (content process not sampled after the warm-up)"
        assert sum(said in x and rounds in x and (x.endswith(tail) or row["content_rss_samples"] != 0)
                   for x in lines) >= 1, (said, lines)


# 3. live counts are measured values: significance only across 2+ repetitions a side --------------------

LIVE = ("live_bind_groups_max", "live_buffers_max", "live_buffer_bytes_max", "modeled_native_bytes_max")


def _differences(a) -> list[dict]:
    with open(a.out_dir / "differences.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_live_counts_are_never_significant_without_two_repetitions_a_side(analysed):
    seen = 0
    for name in ("chromium-decode-loop", "webkit-decode-loop", "mixed-decode-loop"):
        for d in _differences(analysed[name]):
            if d["metric"] not in LIVE:
                continue
            seen += 1
            assert d["ci_method"] != "exact" and d["evidence"] != "exact", d
            if min(int(d["reps_a"]), int(d["reps_b"])) < 2:
                assert d["significant"] == "" and d["evidence"].startswith("1 repetition: within-run only"), d
            elif d["significant"] == "True":
                assert "Welch's t" in d["evidence"] and float(d["diff_low"]) < float(d["diff_high"]), d
    assert seen >= 10
    # chromium decode-loop, 2 repetitions a side, each repetition's peak the same (295 fresh, 42 reuse):
    # GC timing could differ next run; no spread, no interval, not decided
    d = next(d for d in _differences(analysed["chromium-decode-loop"]) if d["metric"] == "live_bind_groups_max")
    assert (float(d["a_value"]), float(d["b_value"])) == (295.0, 42.0)
    assert d["significant"] == "" and d["evidence"] == "2 + 2 repetitions: no spread between them, no interval"
    bold = [x for x in _md(analysed["chromium-decode-loop"]).splitlines() if "| live_bind_groups_max | **" in x]
    assert bold == []  # summary.md's differences: bold = significant
    # mixed decode-loop: spread between repetitions, so Welch's t decides (then Holm's correction over the
    # run's measured differences); bold exactly where that says significant
    mixed = [d for d in _differences(analysed["mixed-decode-loop"]) if d["metric"] == "live_bind_groups_max"]
    assert mixed and all("Welch's t" in d["evidence"] for d in mixed)
    bold = [x for x in _md(analysed["mixed-decode-loop"]).splitlines() if "| live_bind_groups_max | **" in x]
    assert len(bold) == sum(d["significant"] == "True" for d in mixed)


# 4. an interval printed and the words beside it agree ---------------------------------------------------


def test_difference_intervals_and_evidence_words_agree(analysed):
    rows = [d for name in ("chromium-decode-loop", "webkit-decode-loop", "mixed-decode-loop", "chromium-gc-cadence")
            for d in _differences(analysed[name])]
    assert len(rows) > 40
    for d in rows:
        empty = d["diff_low"] == "" and d["diff_high"] == ""
        assert empty == ("no interval" in d["evidence"]), d
        if empty:
            assert d["rel_low"] == d["rel_high"] == "" and d["significant"] == "", d
    # the slope the checker caught: 0 [-0.76, +0.76] beside "no interval" — now its within-run interval is named so
    d = next(d for d in _differences(analysed["mixed-decode-loop"])
             if d["metric"] == "live_buffers_growth_per_token" and d["a"].startswith("chromium"))
    assert d["diff_low"] != "" and d["evidence"].endswith("within-run interval only, not decided"), d


# 2. one projection of what the budget counts, from floors, named; nothing where the data cannot carry one


def test_the_budget_projection_is_of_what_the_budget_counts_and_says_when_the_data_cannot_carry_one(analysed):
    a = analysed["webkit-decode-loop"]                       # emulated WebGPU, GC rarely runs: 1 drop
    rows = {r["row"]["variant"]: r for r in a.workloads["retention"]["rows"]}
    fresh = rows["fresh"]
    p = fresh["budget_projection"]
    s = a.tables.summary.set_index("cell")
    assert p["cell"] == fresh["cell"] and p["token"] is None
    assert s.loc[fresh["cell"], "memory_budget_counted_bytes_last"] <= s.loc[fresh["cell"], "memory_budget_counted_bytes_max"]
    series = {r["series"]: r for r in a.workloads["memory"]["rows"] if r["cell"] == fresh["cell"]}
    floors = len(series["modeled_native_bytes"]["floors"].split())
    assert floors < 3 and f"growing until collected, {floors} floor(s) (needs 3)" in p["why"]
    retention = _section(html_text(a.out_dir / "report.html"), "Bind group retention per engine")
    row = next(x for x in retention.splitlines() if fresh["cell"] + " |" in x)
    assert p["why"] in row and "near token" not in row
    for text in (_findings(a), _md(a)):                       # nothing projected where nothing can be
        assert "near token" not in text


def test_chromium_rss_with_too_few_samples_projects_nothing(analysed):
    a = analysed["chromium-decode-loop"]
    for r in a.workloads["retention"]["rows"]:
        p = r["budget_projection"]
        assert p["token"] is None and ("too few samples (n=" in p["why"] or "no samples placed" in p["why"]), p
    assert "near token" not in _findings(a)


# 5. a slope from fewer than 3 floors is a rate between collections, never a growth rate ---------------------


def test_a_slope_from_too_few_floors_reads_as_a_rate_between_collections(analysed):
    a = analysed["chromium-gc-cadence"]        # 40 tokens, 1 forced collection that freed none: 1 floor
    rows = {r["metric"]: r for r in csv.DictReader((a.out_dir / "stats.csv").open(encoding="utf-8"))}
    r = rows["live_bind_groups_growth_per_token"]
    assert (r["basis"], r["floors"], float(r["value"])) == ("series", "1", 8.0)   # 8 createBindGroup/token kept
    series = {x["series"]: x for x in csv.DictReader((a.out_dir / "memory_series.csv").open(encoding="utf-8"))}
    assert (series["bind_groups_live"]["forced_events"], series["bind_groups_live"]["falls"]) == ("30", "")
    said = "rose 8 bind groups/token and never fell"   # nothing between: the forced collection freed none
    assert said in _findings(a) and said in _md(a) and "between collections (1 floor" not in _findings(a)
    assert "grow rose" not in _findings(a) and "grow **8" not in _md(a)
    assert rows["rss_growth_bytes_per_token_renderer"]["basis"] == "too-few"
    # emulated WebKit, 1 collection in each repetition: the modeled bytes rose 42 × 16 KiB a token between them
    mixed = _findings(analysed["mixed-decode-loop"])
    assert ("Modeled native bytes of live bind groups (a model), growth per token: fresh rose 672 KiB/token between "
            "collections (1 floor; needs 3)") in mixed
    assert not re.search(r"(grows|rises|falls) rose", mixed)
    # a slope from enough floors stays a growth rate: every "floors" row names 3 floors or more
    for name in NAMES:
        for r in csv.DictReader((analysed[name].out_dir / "stats.csv").open(encoding="utf-8")):
            if r["basis"] == "floors":
                assert int(r["floors"]) >= 3, r


# 6. rates in the workload's step unit; n says what it counts ----------------------------------------------


def test_rates_of_workloads_whose_step_is_not_a_token_say_per_step(analysed):
    for name in ("chromium-ort-run", "chromium-app-realms"):
        a = analysed[name]
        unit = a.tables.summary["step_unit"].iloc[0]
        assert unit != "token"
        assert a.findings and all(f"(one step = one {unit})" in f.scope for f in a.findings)
        text = _findings(a)
        assert not re.search(r"\btokens?\b", text), text
        assert "createBindGroup calls per step: " in text
        assert "per-step values after 1 warm-up step" in _md(a)
    assert "per-token values after 1 warm-up token" in _md(analysed["chromium-decode-loop"])
    ort = _findings(analysed["chromium-ort-run"])
    assert "(1 repetition, no interval)" in ort and "(n=1, no interval)" not in ort
    for name in NAMES:                                      # n=1 of repetitions says so
        assert "n=1: no interval" not in _md(analysed[name])
    dec = _findings(analysed["chromium-decode-loop"])       # a decoder's rates stay per token
    assert "createBindGroup calls per token: " in dec and "per step" not in dec
    for name in NAMES:                                      # a count of positions names them
        text = _findings(analysed[name])
        assert not re.findall(r"\(n=\d+\)", text), name
    assert re.search(r"RSS of all renderer processes \(sum, measured\) \(fresh n=[\d, ]+ tokens?[^;]*; reuse n=[\d, ]+ tokens?",
                     _findings(analysed["chromium-decode-loop"]))  # n per variant (and repetition)


# 7. calls after the last measured step: of the counter the share is of -------------------------------------


def test_calls_after_the_last_measured_step_count_only_the_shared_counter(analysed):
    import json

    a = analysed["chromium-app-realms"]
    cell = "chromium.app.page-and-worker.cdp.r0"
    said = a.tables.summary.set_index("cell").loc[cell, "realms"]
    m = re.search(r"page \d+% \(\+(\d+) createBindGroup calls after the last measured step, on no step\)", said)
    assert m and said.endswith("of createBindGroup"), said
    # the page realm reports only open steps: its last one holds every createBindGroup it made (12)
    with open(APP_RUNS / "chromium-app-realms" / "samples.jsonl", encoding="utf-8") as f:
        page = [json.loads(x) for x in f if cell in x]
    realm = next(x["realm"] for x in page if x.get("kind") == "device" and
                 not any(y.get("kind") == "step" and y.get("realm") == x["realm"] for y in page))
    total = max(x["counters"].get("createBindGroup", 0) for x in page
                if x.get("kind") == "open_step" and x.get("realm") == realm)
    on_steps = int(a.tables.steps.query("cell == @cell")["realm_page_create_bind_group"].sum())
    assert (total, on_steps, int(m.group(1))) == (12, 11, 1)


# 8. every table says where its numbers came from: the console's "measured on" words ---------------------


def _measured_on(a) -> set[str]:
    from harness.stats.provenance import provenance

    return {provenance(r) for _, r in a.tables.summary.iterrows()}


def test_summary_md_and_the_report_name_where_each_configuration_was_measured(analysed):
    a = analysed["mixed-decode-loop"]
    sources = _measured_on(a)
    assert sources == {"chromium 156 · google swiftshader · real WebGPU",
                       "webkit 2.50.6 · webgpu-harness emulated · emulated WebGPU (modeled native memory)"}
    md = _md(a)
    assert "| configuration | measured on | reps |" in md
    rows = [x for x in md.splitlines() if x.startswith("| chromium/") or x.startswith("| webkit/")]
    table = [x for x in rows if x.count(" | ") > 5]        # the per-configuration table, not the differences
    assert len(table) == len(a.stats.groups)
    for x in table:
        browser = x[2:].split("/")[0]
        assert next(s for s in sources if s.startswith(browser)) in x, x
    stats = _section(html_text(a.out_dir / "report.html"), "Statistics: ")
    for s in sources:
        assert s in stats
    assert "measured: every value" in stats


def test_compare_names_where_a_and_b_were_measured(tmp_path):
    r = run_cli("compare", str(RUNS / "aa-chromium-1"), str(RUNS / "aa-chromium-2"), "-o", str(tmp_path / "c"))
    assert r.returncode == 0, r.stderr
    assert "  measured on: chromium 156 · google swiftshader · real WebGPU (A and B)" in r.stdout.splitlines()
    md = (tmp_path / "c" / "summary.md").read_text(encoding="utf-8")
    assert "- measured on: chromium 156 · google swiftshader · real WebGPU (A and B)" in md.splitlines()
    html = html_text(tmp_path / "c" / "compare.html")
    assert "A: 1 repetition(s) · measured on chromium 156 · google swiftshader · real WebGPU" in html


# 9. every finding names the variants it covers ---------------------------------------------------------------


def test_every_finding_names_the_variants_it_covers(analysed):
    for name in (*NAMES, "chromium-app-realms"):
        a = analysed[name]
        variants = set(a.tables.summary["variant"])
        md = _md(a)
        for f in a.findings:
            assert f.covers and set(c.split(" ")[0] for c in f.covers) <= variants, (name, f.kind, f.covers)
            text = f.text()
            for v in f.covers:
                assert re.search(rf"(?<![\w-]){re.escape(v)}(?![\w-])", text), (name, text)
            assert text.replace("|", "/") in md.replace("**", ""), (name, text)
    # a sentence that names none of them gets them after it
    mixed = [f.text() for f in analysed["mixed-decode-loop"].findings if f.kind == "memory_classes"]
    assert any(t.endswith("(variants: fresh, reuse)") for t in mixed), mixed


# 10. a JS heap not available is said on every surface ------------------------------------------------------


def test_a_js_heap_not_available_is_said_in_summary_md_the_report_and_the_console(analysed, tmp_path):
    import shutil

    a = analysed["webkit-clean-destroy"]
    s = a.tables.summary
    assert list(s["js_heap"]) == ["not available"] and s["js_heap_bytes_max"].isna().all()
    said = f"{s['cell'].iloc[0]}: JS heap not available (no DevTools protocol to read the worker's heap through)"
    assert said in _md(a).replace("`", "")
    assert said in html_text(a.out_dir / "report.html").replace("`", "")
    src = tmp_path / "run"
    shutil.copytree(RUNS / "webkit-clean-destroy", src)
    r = run_cli("report", str(src))
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("JS heap not available") == 1 and said in r.stdout
    for name in ("chromium-decode-loop", "mixed-decode-loop"):   # measured there (CDP): nothing said
        assert "JS heap not available" not in _md(analysed[name])


def test_an_interval_of_a_quantity_that_cannot_go_below_0_stays_at_or_above_it(tmp_path):
    # Welch's t interval of WebKit's live_bind_groups_max (reuse − fresh, 2 + 2 repetitions) read
    # "[−104.1%, −92.3%]": reuse below 0 bind groups. Counts, peaks and bytes are held to ≥ −a.
    a = pipeline.analyse(HERE / "kept-runs" / "chromium-webkit-repeat2", out_dir=tmp_path)
    pipeline.write(a)
    d = pd.read_csv(tmp_path / "differences.csv")
    welch = d[d["ci_method"] == "welch-t"]
    assert len(welch) >= 3
    assert (welch["rel_low"].dropna() >= -1).all(), welch[["metric", "rel_low"]]
    assert (welch["diff_low"] >= -welch["a_value"]).all()
    held = welch[welch["metric"] == "live_bind_groups_max"].iloc[0]
    assert held["rel_low"] == -1 and held["diff_low"] == -held["a_value"] and bool(held["significant"])


def test_summary_md_says_how_many_differences_its_table_leaves_out(tmp_path):
    # its Differences table shows the significant ones and ms_per_token; the rest were left out
    # without a word, as if not computed
    a = pipeline.analyse(RUNS / "mixed-decode-loop", out_dir=tmp_path)
    pipeline.write(a)
    d = pd.read_csv(tmp_path / "differences.csv")
    md = (tmp_path / "summary.md").read_text()
    table = md.split("### Differences", 1)[1].split("\n\n", 2)[1]
    rows = [x for x in table.splitlines() if x.startswith("| ") and not x.startswith(("| b |", "| --- |"))]
    left = len(d) - len(rows)
    shown = d[(d["significant"] == True) | (d["metric"] == "ms_per_token")]  # noqa: E712
    assert len(rows) == len(shown) and left > 0
    assert f"{left} more differences, none significant, are in `differences.csv`" in md
