"""What every surface says of a real 2-repetition run of chromium and webkit (tests/analysis/
kept-runs/chromium-webkit-repeat2, see its COMMAND), read through ``report`` in process: the
console, summary.md, report.html and stats.json say the same thing because one place decides it
(harness/stats/differences.py Difference.verdict / standing, harness/placement.py notes)."""

from __future__ import annotations

import html
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli import app

RUN = Path(__file__).resolve().parents[1] / "analysis" / "kept-runs" / "chromium-webkit-repeat2"
HOLM = "not significant after Holm's correction over 6 (p=0.021 > 0.0167)"
EMULATED = "emulated WebGPU: its times are the emulation's JavaScript, not a GPU's: not compared"


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    d = shutil.copytree(RUN, tmp_path_factory.mktemp("r2") / "run")
    r = CliRunner().invoke(app, ["report", str(d)])
    assert r.exit_code == 0, r.stdout
    return d, r.stdout


def _diff_rows(d: Path) -> list[dict]:
    import csv

    return list(csv.DictReader((d / "differences.csv").open()))


def test_holm_withdrawn_time_difference_names_holm_and_both_intervals(reported):
    d, out = reported
    row = next(r for r in _diff_rows(d) if r["metric"] == "ms_per_token" and r["a"].startswith("chromium"))
    # measured: bootstrap [-0.5426, -0.2375], Welch across repetitions [-0.6379, -0.1471], p=0.021
    assert float(row["diff_high"]) < 0 and float(row["reps_high"]) < 0 and row["significant"] == "False"
    assert float(row["p_value"]) == pytest.approx(0.021, abs=5e-4) and row["evidence"].endswith(HOLM)
    line = next(x for x in out.splitlines() if "chromium/decode-loop/reuse" in x and "ms_per_token" in x)
    assert line.endswith(f"(within-run; across 2 + 2 repetitions: [-0.6379, -0.1471]) ({HOLM})"), line
    stats = json.loads((d / "stats.json").read_text())
    text = next(f["text"] for f in stats["findings"] if f["kind"] == "time_per_token" and "chromium" in f["scope"])
    assert f"(both CIs exclude 0; {HOLM})" in text and "includes 0" not in text, text
    md = (d / "summary.md").read_text()
    assert f"(both CIs exclude 0; {HOLM})" in md
    assert f"| ms_per_token | -0.4075 ms [-0.5426, -0.2375] (-6.1% [-8.1%, -3.6%]) (within-run; across 2 + 2 repetitions: " \
           f"[-0.6379, -0.1471]) ({HOLM}) |" in md
    assert HOLM in html.unescape((d / "report.html").read_text())


def test_emulated_times_are_labelled_not_compared_on_every_surface(reported):
    d, out = reported
    row = next(r for r in _diff_rows(d) if r["metric"] == "ms_per_token" and r["a"].startswith("webkit"))
    assert row["evidence"] == EMULATED and row["significant"] == "" and row["reps_low"] != ""
    line = next(x for x in out.splitlines() if "webkit/decode-loop/reuse" in x and "ms_per_token" in x)
    assert line.endswith(f"({EMULATED})"), line
    md = (d / "summary.md").read_text()
    md_row = next(x for x in md.splitlines() if x.startswith("| webkit/decode-loop/reuse@tiny") and "| ms_per_token |" in x)
    assert md_row.endswith(f"({EMULATED}) |"), md_row
    # 2 repetitions a side already: what is missing is a GPU, not repetitions
    assert "--repeat 2 or more" not in md and "--repeat 2 or more" not in out


def test_a_cell_whose_content_process_was_sampled_only_in_the_warm_up_says_so(reported):
    import pandas as pd

    d, out = reported
    s = pd.read_csv(d / "summary.csv").set_index("cell")
    cell = "chromium.decode-loop.reuse.tiny.r0"
    # recorded: its renderer's last sampling round fell in warm-up step 0, none after
    assert s.loc[cell, "content_rss_samples"] == 0 and s.loc[cell, "content_rss_bytes_max"] == 164409344
    assert (s.drop(cell)["content_rss_samples"] > 0).all()  # every other cell has in-step samples
    note = f"{cell}: content process not sampled after the warm-up"
    assert sum(note in x for x in out.splitlines()) == 1
    assert (d / "summary.md").read_text().count(f"`{cell}`: content process not sampled after the warm-up") == 1
    page = html.unescape((d / "report.html").read_text())
    assert note.replace(cell, f"<code>{cell}</code>") in page or f"{cell}</code>: content process not sampled after the warm-up" in page \
        or note in page
    assert "156.8 (n=0: warm-up only)" in page  # the cells table (the retention table is memory.j2's)
    budget = next(x for x in out.splitlines() if "chromium decode-loop/reuse [tiny]:" in x and "memory budget" in x)
    assert budget.endswith("not decided (max 164 MB of 2,048 MB: RSS sampled outside the tokens (n=0 RSS rounds on them)): "
                           "its content-process RSS rests on no in-step sample (content process not sampled after the warm-up)"), budget
    others = [x for x in out.splitlines() if "memory budget" in x and x is not budget]
    assert len(others) == 8 and sum("no in-step sample" in x for x in others) == 1
    # the variant's sentence (findings, summary.md): its max came from r1 (1 RSS round), and it
    # names r0's none too, not only the rounds of the repetition whose max it quotes
    line = next(x for x in (d / "summary.md").read_text().splitlines()
                if x.startswith("- Memory budget") and "max 165 MB of 2,048 MB at token 1 of r1" in x)
    assert ("reuse not decided (max 165 MB of 2,048 MB at token 1 of r1: RSS sampled there (RSS rounds: n=0 in r0, "
            "n=1 in r1)): its content-process RSS rests on no in-step sample in r0") in line, line
    assert "fresh not decided (max 165 MB of 2,048 MB at token 20 of r0: RSS sampled there (RSS rounds: n=2 in r0, " \
           "n=2 in r1)): too few RSS rounds in r0, r1 to say it was never passed between them (needs 3 in each " \
           "repetition)" in line, line


def test_memory_class_sentences_cover_only_their_variants_and_give_n_per_variant(reported):
    import pandas as pd

    d, _ = reported
    ms = pd.read_csv(d / "memory_series.csv")
    live = ms[(ms["series"] == "bind_groups_live") & ms["group"].str.startswith("chromium")]
    # recorded: fresh bounded in its repetitions, reuse flat (constant 42)
    assert set(live.loc[live["group"].str.contains("/reuse@"), "class"]) == {"flat"}
    assert "bounded" in set(live.loc[live["group"].str.contains("/fresh@"), "class"])
    stats = json.loads((d / "stats.json").read_text())
    chromium = [f for f in stats["findings"] if f["kind"] == "memory_classes" and f["scope"].startswith("chromium")]
    bounded = [f for f in chromium if f["text"].startswith("Bounded") and "GPUBindGroup" in f["text"]]
    assert [f["covers"] for f in bounded] == [["fresh"]] and bounded[0]["text"].endswith("(variant: fresh)")
    flat_live = [f for f in chromium if f["text"].startswith("Flat") and "live GPUBindGroup" in f["text"]]
    assert [f["covers"] for f in flat_live] == [["reuse"]]
    few = next(f["text"] for f in chromium if f["text"].startswith("No class, too few samples"))
    heap = ms[(ms["series"] == "js_heap_bytes") & ms["group"].str.startswith("chromium")]
    per = {v: ", ".join(str(int(p)) for p in heap.loc[heap["group"].str.contains(f"/{v}@"), "points"])
           for v in ("fresh", "reuse")}
    assert per == {"fresh": "3, 4", "reuse": "1, 2"}
    assert "worker JS heap used (CDP, measured) (fresh n=3 and 4 tokens in its 2 repetitions; reuse n=1 and 2 tokens in its 2 repetitions)" in few, few


def test_gc_versus_latency_follows_the_runs_rule_for_times(reported):
    from harness import pipeline

    d, _ = reported
    a = pipeline.analyse(d)
    rows = {g["group"]: g for g in a.workloads["memory"]["gc_latency"]}
    fresh = rows["chromium/decode-loop/fresh@tiny"]
    # recorded: the pooled token bootstrap excludes 0 ([0.172, 2.86] ms), which once read "significant"
    assert fresh["low"] > 0 and fresh["reps"] == 2 and fresh["reps_low"] < 0 < fresh["reps_high"]
    assert fresh["significant"] is False and fresh["p_value"] > 0.05 / 7
    assert fresh["verdict"].startswith("not significant (2 repetitions, Welch's t over per-repetition medians; "
                                       "Bonferroni with the run's 6 measured differences: p=")
    assert fresh["verdict"].endswith("google swiftshader: CPU adapter (SwiftShader) — not GPU times")
    webkit = rows["webkit/decode-loop/fresh@tiny"]
    assert webkit["significant"] is None and "not compared" in webkit["verdict"]
    page = html.unescape((d / "report.html").read_text())
    table = page[page.index("<h3>GC vs latency</h3>"):]
    table = table[:table.index("</table>")]
    assert "<td>significant</td>" not in table and fresh["verdict"] in table
