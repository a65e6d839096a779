"""The tables a workload's summary row cannot hold, on real run folders recorded in Chromium
(tests/analysis/runs/, re-recorded by tests/analysis/record.py): one row per ort-run session
cycle and per lifecycle page load (cycles.csv, console, report), the sync-latency methods
(stats.csv, console, report), upload per size (never one median over sizes), an app's columns
per step, and the legend of the "same tokens" column. Every expected value is recomputed here
from steps.csv / memory.csv, independently of the code under test; nothing launches a browser."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from harness import pipeline
from harness.cli import common, printing
from harness.report import format as F

RUNS = Path(__file__).resolve().parent / "runs"


def _analyse(name: str, out: Path):
    a = pipeline.analyse(RUNS / name, out_dir=out)
    pipeline.write(a)
    with common.console.capture() as cap:
        printing.print_summary(a)
        printing.print_differences(a)
    return a, cap.get()


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """name → (analysis, console text, output folder) for the recordings used here, analysed once."""
    cache: dict[str, tuple] = {}

    def get(name: str):
        if name not in cache:
            out = tmp_path_factory.mktemp(name)
            a, text = _analyse(name, out)
            cache[name] = (a, text, out)
        return cache[name]
    return get


def section(out: Path, sid: str) -> str:
    """The HTML of report section ``sid``."""
    html = (out / "report.html").read_text(encoding="utf-8")
    m = re.search(rf'<section id="{sid}">(.*?)</section>', html, re.S)
    assert m, f"no section {sid}"
    return m.group(1)


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html.replace("<wbr>", "")))


def rounds_after(memory: pd.DataFrame, cell: str, step: int, ptype: str) -> float:
    """Median over sampling rounds (time_s) tagged with ``step`` of ``ptype``'s RSS summed over its pids."""
    m = memory[(memory["cell"] == cell) & (memory["source"] == "psutil") & (memory["token"] == step)
               & (memory["process_type"] == ptype)]
    return float(m.groupby("time_s")["rss_bytes"].sum().median())


# ----------------------------------------------------------------------------------------------
# ort-run: one row per session cycle


def test_ort_run_has_a_row_per_session_cycle_with_its_phase_times(run):
    a, console, out = run("chromium-ort-run")
    steps, memory = pd.read_csv(out / "steps.csv"), pd.read_csv(out / "memory.csv")
    cyc = pd.read_csv(out / "cycles.csv")
    assert cyc["cycle"].tolist() == [0, 1, 2]                        # --param sessions=3
    assert cyc["steps"].tolist() == [6, 6, 6]                        # create, first run, 3 steady, release (-n 4)
    for _, c in cyc.iterrows():
        s = steps[steps["extra_cycle"] == c["cycle"]]
        by = s.set_index("extra_phase")
        assert c["create_ms"] == pytest.approx(by.loc["create", "wall_ms"])
        assert c["first_run_ms"] == pytest.approx(by.loc["first-run", "wall_ms"])
        assert c["time_to_first_result_ms"] == pytest.approx(by.loc["first-run", "extra_time_to_first_result_ms"])
        assert c["release_ms"] == pytest.approx(by.loc["release", "wall_ms"])
        steady = s.loc[s["extra_phase"] == "steady", "wall_ms"]
        assert c["steady_runs"] == 3 and c["median_ms_per_steady_run"] == pytest.approx(steady.median())
        assert c["compute_pipelines_created"] == s["create_compute_pipeline"].sum() + s["create_compute_pipeline_async"].sum()
        # workloads/ort-run/README.md: the first run of *every* session creates its 6 pipelines again
        assert s.loc[s["extra_phase"] == "first-run", "create_compute_pipeline_async"].sum() \
            + s.loc[s["extra_phase"] == "first-run", "create_compute_pipeline"].sum() == 6
        assert c["buffers_created"] == s["create_buffer"].sum() and c["buffers_destroyed"] == s["buffer_destroy"].sum()
        assert c["bind_groups_created"] == s["create_bind_group"].sum() == 5 + 4 * 7  # create 5, each run 7
        assert c["buffer_bytes_live_after"] == 0                    # release destroyed every buffer's bytes
        # memory after the release step (its settle_ms): median over the rounds tagged with that step
        assert c["memory_rounds_after"] >= 1
        for ptype in ("renderer", "gpu-process"):
            assert c[f"rss_bytes_after_{ptype}"] == pytest.approx(rounds_after(memory, c["cell"], c["last_step"], ptype))
    # the summary's first result is cycle 0's own figure, said so; every cycle's is in the table
    row = a.tables.summary.iloc[0]
    assert row["time_to_first_result_ms"] == pytest.approx(cyc["time_to_first_result_ms"].iloc[0])
    assert row["cycles"] == 3
    assert "first result ms, cycle 0" in re.sub(r"\s*│\s*", " ", console) or "first result ms," in console
    assert "per session cycle" in console
    lines = [ln for ln in console.splitlines() if re.match(r"^│\s+[0-2]\s+│", ln)]
    assert len(lines) == 3
    for ln, (_, c) in zip(lines, cyc.iterrows()):
        cols = [x.strip() for x in ln.strip("│").split("│")]
        assert cols[0] == str(c["cycle"]) and cols[1] == F.number(c["time_to_first_result_ms"])
        assert cols[2] == F.number(c["create_ms"]) and cols[3] == F.number(c["first_run_ms"])
    html = section(out, "cycles")
    for _, c in cyc.iterrows():
        for col in ("time_to_first_result_ms", "create_ms", "first_run_ms", "median_ms_per_steady_run"):
            assert f"<td>{F.number(c[col])}</td>" in html
        assert f"<td>{F.mib(c['rss_bytes_after_renderer'])}</td>" in html
    later = cyc.loc[cyc["cycle"] >= 1, "time_to_first_result_ms"].median()
    assert f"ms to first result: cycle 0 <span class=\"num\">{F.number(cyc['time_to_first_result_ms'].iloc[0])}</span>" in html
    assert F.number(later) in text_of(html)


# ----------------------------------------------------------------------------------------------
# lifecycle: one row per page load


def test_lifecycle_has_a_row_per_page_load(run):
    a, console, out = run("chromium-lifecycle")
    steps, memory = pd.read_csv(out / "steps.csv"), pd.read_csv(out / "memory.csv")
    cyc = pd.read_csv(out / "cycles.csv")
    for variant, types in (("reload", ["navigate", "reload", "reload"]), ("navigate", ["navigate"] * 3)):
        c = cyc[cyc["variant"] == variant].sort_values("cycle")
        assert c["page_load"].tolist() == [1, 2, 3] and c["navigation_type"].tolist() == types
        s = steps[steps["variant"] == variant].sort_values("step")
        assert c["wall_ms"].tolist() == pytest.approx(s["wall_ms"].tolist())
        assert c["device_ms"].tolist() == pytest.approx(s["extra_device_ms"].tolist())
        # --param dispatches=16: a new bind group per dispatch, plus the bench's two (README)
        assert (c["dispatches"] == 16).all() and (c["bind_groups_created"] == 18).all()
        assert (c["buffer_bytes_created"] >= 8 * 2**20).all()      # --param buffer_mb=8
        for _, r in c.iterrows():
            assert r["rss_bytes_after_gpu-process"] == pytest.approx(
                rounds_after(memory, r["cell"], r["last_step"], "gpu-process"))
    assert console.count("per page load (JS heap and RSS") == 2
    html = text_of(section(out, "cycles"))
    assert "reload · chromium" in html and "navigate · chromium" in html and "ms per page load: cycle 0" in html


# ----------------------------------------------------------------------------------------------
# sync latency: per method × pacing × thread, in stats.csv, console and report


def _samples(steps: pd.DataFrame, cell: str, method: str) -> np.ndarray:
    s = steps[(steps["cell"] == cell) & (steps["extra_config"] == method) & (steps["extra_round"] >= 1)]
    return np.array([float(x) for v in s.sort_values("step")["extra_sync_us_samples"] for x in str(v).split(",")])


def test_sync_latency_methods_have_their_own_table(run):
    a, console, out = run("chromium-sync-latency")
    steps = pd.read_csv(out / "steps.csv")
    stats = pd.read_csv(out / "stats.csv")
    sync = stats[stats["metric"].str.startswith("sync_us_")]
    # 2 pacings × 2 threads (a sweep: one group each) × 3 methods × (median, p10, p90, max)
    assert len(sync) == 2 * 2 * 3 * 4
    cells = {(c["sweep"]["pacing"], c["sweep"]["main_thread"]): c["cell"] for c in a.tables.manifest["cells"]}
    assert len(cells) == 4
    rows = a.workloads["sync-latency"]["rows"]
    assert len(rows) == 12
    report = section(out, "sync-latency")
    for (pacing, main), cell in cells.items():
        group = next(g.key.label for g in a.stats.groups.values() if cell in g.cells)
        for method in ("sync-empty", "sync-dispatch", "sync-map"):
            x = _samples(steps, cell, method)
            assert len(x) == 2 * 12                               # rounds 1 and 2 of -n 3, sync_iterations=12
            want = {"median": np.median(x), "p10": np.percentile(x, 10), "p90": np.percentile(x, 90), "max": x.max()}
            got = sync[(sync["group"] == group) & (sync["metric"] == f"sync_us_{method}")].set_index("stat")["value"]
            assert got.to_dict() == pytest.approx(want)
            r = next(r for r in rows if r["group"] == group and r["method"] == method)
            assert r["pacing"] == ("none" if pacing == "none" else "timeout 2 ms")
            assert r["thread"] == ("main" if main else "worker") and r["syncs"] == 24 and r["runs"] == 2
            assert r["median"].value == pytest.approx(want["median"]) and r["max"].value == pytest.approx(want["max"])
            # console: a row with the method, its pacing and thread, and the four statistics
            line = next(ln for ln in console.replace("\n│ ", "\n").splitlines()
                        if f" {method} " in ln and F.estimate(r["median"]) in ln)
            assert F.number(want["p10"]) in line and F.number(want["max"]) in line
            assert r["thread"] in line
            # report: the same numbers, in a row of their own
            m = re.search(rf'<tr data-group="{re.escape(group)}" data-method="{method}">(.*?)</tr>', report, re.S)
            assert m and F.estimate(r["median"]) in m.group(1) and F.number(want["max"]) in m.group(1)
    # the cells table no longer says n/a for a run of sync methods only
    cells_html = text_of(section(out, "cells"))
    assert "sync-map µs / sync, median" in cells_html and "[pacing=timeout,main_thread=true]" in cells_html


# ----------------------------------------------------------------------------------------------
# upload: per size, never pooled


def test_upload_tables_are_per_size(run):
    a, console, out = run("chromium-upload")
    steps = pd.read_csv(out / "steps.csv")
    summary = pd.read_csv(out / "summary.csv").set_index("variant")
    up = section(out, "upload")
    for variant in ("write-buffer", "mapped-at-creation"):
        for size, label in ((256, "256 B"), (4194304, "4 MiB")):
            s = steps[(steps["variant"] == variant) & (steps["extra_size_bytes"] == size) & (steps["extra_round"] >= 1)]
            assert len(s) == 3                                     # rounds 1..3 of -n 4
            med = s["wall_ms"].median()
            assert summary.loc[variant, f"median_ms_per_upload_{size}"] == pytest.approx(med)
            row = next(r for r in a.workloads["upload"]["rows"] if r["row"]["variant"] == variant and r["size_bytes"] == size)
            assert row["median_ms"] == pytest.approx(med) and row["uploads"] == 3 and row["verified"] == 3
            assert row["buffers_per_upload"] == (0 if variant == "write-buffer" else 1)   # README's signature
            assert re.search(rf"<td>{label}</td><td>3</td><td>{re.escape(F.number(med))}</td>", up)
    heads = [h.strip() for h in re.findall(r"┃([^┃\n]+)", console)]
    assert "ms/upload 256 B" in heads and "ms/upload 4 MiB" in heads and "ms/upload" not in heads
    # no difference of medians over both sizes: each compares one size's uploads (a sweep point of
    # the list parameter, harness/stats: never pooled)
    lines = [x for x in console.splitlines() if "ms per upload" in x]
    assert lines and all(x.count("[size_bytes=") == 2 for x in lines), lines
    cells = text_of(section(out, "cells"))
    assert "median ms / upload of 256 B" in cells and "median ms / upload of 4 MiB" in cells
    assert "median ms / token" not in cells and "bytes identical" in cells


# ----------------------------------------------------------------------------------------------
# an app's steps are steps; "same tokens" is explained


def test_app_tables_say_per_step(run):
    a, console, out = run("chromium-app")
    heads = [h.strip() for h in re.findall(r"┃([^┃\n]+)", console)]
    assert {"bind groups/step", "dispatches/step", "ms/step"} <= set(heads)
    assert not [h for h in heads if "tok" in h]
    row = a.tables.summary.iloc[0]
    assert row["bind_groups_per_token"] == 3                   # tests/apps/shared/compute.js: 3 per step
    cells = text_of(section(out, "cells"))
    assert "createBindGroup / step" in cells and "median ms / step" in cells and "/ token" not in cells
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "<h2>Per step: bind groups and latency</h2>" in html and "Per token" not in html
    assert '"title":{"text":"step"}' in html                   # the charts' x axis


def test_same_tokens_column_is_explained(run):
    a, console, out = run("chromium-decode-loop")
    assert "same tokens" in console
    legend = next(ln for ln in console.splitlines() if "same tokens / outputs / bytes:" in ln)
    assert "yes =" in legend and "no =" in legend and "n/a =" in legend and "not comparable" in legend
    cells = text_of(section(out, "cells"))
    assert "tokens identical" in cells and "… identical (the console's same tokens" in cells
    assert "yes when every step's token id and output hash" in cells


def test_steps_without_tokens_compare_equal_across_variants():
    """ort-run's create/release steps carry no token or hash: two variants with the same runs are
    "yes", not "no" (NaN never equals NaN), and a changed hash is still "no"."""
    import pandas as pd

    from harness import tables as T

    t = T.build(RUNS / "chromium-ort-run")
    steps, summary = t.steps, t.summary
    assert steps["token"].isna().any()                         # the recording has steps without a token
    other = steps.assign(cell=steps["cell"] + "-b", variant="bind-group-cache")
    two = summary.iloc[[0, 0]].reset_index(drop=True)
    two.loc[1, ["cell", "variant"]] = [summary.iloc[0]["cell"] + "-b", "bind-group-cache"]
    assert T._tokens_identical(two, pd.concat([steps, other])) == ["yes", "yes"]
    changed = other.copy()
    changed.loc[changed["logits_hash"].notna().idxmax(), "logits_hash"] = "not-the-same"
    assert T._tokens_identical(two, pd.concat([steps, changed])) == ["yes", "no"]
