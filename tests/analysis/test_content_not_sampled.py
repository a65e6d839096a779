"""A real run whose content process was not sampled in some cells (tests/analysis/kept-runs/
chromium-renderer-not-sampled: recorded before the fix of the reused process list, see its
COMMAND): the analysis says so and never states a partial every-process RSS as complete."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from harness import pipeline
from harness.process_types import CONTENT_PROCESS_TYPES

RUN = Path(__file__).resolve().parent / "kept-runs" / "chromium-renderer-not-sampled"


@pytest.fixture(scope="module")
def analysis(tmp_path_factory):
    out = tmp_path_factory.mktemp("not-sampled")
    a, _ = pipeline.analyse_and_write(RUN, out_dir=out)
    return a


def _psutil(a) -> pd.DataFrame:
    m = a.tables.memory
    return m[(m["source"] == "psutil") & (m["rss_bytes"] > 0)]


def test_cells_without_renderer_rows_are_named(analysis):
    ps = _psutil(analysis)
    without = sorted(c for c, rows in ps.groupby("cell") if not rows["process_type"].isin(CONTENT_PROCESS_TYPES).any())
    # what the recording holds: the repetition cells r1 have browser, GPU process... but no renderer
    assert without == ["chromium.decode-loop.fresh.tiny.r1", "chromium.decode-loop.reuse.tiny.r1"]
    assert set(ps.loc[ps["cell"].isin(without), "process_type"]) >= {"browser", "gpu-process"}
    notes = [n for n in analysis.measurement if "content process not sampled" in n]
    assert [c for c in without if any(f"`{c}`" in n for n in notes)] == without and len(notes) == len(without)
    rounds = ps[ps["cell"] == without[0]]["time_s"].nunique()
    assert f"in its {rounds} sampling rounds" in next(n for n in notes if without[0] in n)
    md = (analysis.out_dir / "summary.md").read_text()
    assert md.count("content process not sampled") == 2


def test_every_process_peak_comes_from_complete_cells_only(analysis):
    ps = _psutil(analysis)
    per_round = ps.groupby(["cell", "time_s"])["rss_bytes"].sum()
    for variant in ("fresh", "reuse"):
        g = next(g for k, g in analysis.stats.groups.items() if k.variant == variant)
        e = g.metrics["peak_rss_bytes_all"]
        assert e.n_reps == 1                                  # r1 lacks its renderer: not counted
        assert e.value == per_round[f"chromium.decode-loop.{variant}.tiny.r0"].max()
        partial = per_round[f"chromium.decode-loop.{variant}.tiny.r1"].max()
        assert e.value - partial > 100_000_000                # what the partial sum left out
        assert "rss_growth_bytes_per_token_all" not in g.metrics or g.metrics["rss_growth_bytes_per_token_all"].n_reps <= 1
    d = next(d for d in analysis.stats.differences if d.metric == "peak_rss_bytes_all")
    assert (d.reps_a, d.reps_b) == (1, 1) and not d.significant
    assert abs(d.rel) < 0.1                                   # complete against complete
    s = analysis.tables.summary.set_index("cell")
    assert s.loc["chromium.decode-loop.reuse.tiny.r1", "content_rss_bytes_max"] != s.loc[
        "chromium.decode-loop.reuse.tiny.r1", "content_rss_bytes_max"]  # NaN: not measured, never 0


def test_a_content_process_an_earlier_cell_ran_in_is_named(tmp_path):
    # WebKitGTK: one WebKitWebProcess served fresh and then reuse (tests/analysis/runs/webkit-decode-loop):
    # reuse's content RSS starts from what fresh left in it, and the notes say so; Chromium's cells
    # each have their own renderer (tests/analysis/runs/chromium-decode-loop): no such note
    a, _ = pipeline.analyse_and_write(Path(__file__).resolve().parent / "runs" / "webkit-decode-loop", out_dir=tmp_path / "wk")
    m = _psutil(a)
    m = m[m["process_type"] == "WebKitWebProcess"]
    pids = {c: set(g["pid"].astype(int)) for c, g in m.groupby("cell")}
    fresh, reuse = "webkit.decode-loop.fresh.tiny.r0", "webkit.decode-loop.reuse.tiny.r0"
    assert pids[fresh] == pids[reuse] and len(pids[reuse]) == 2
    said = [n for n in a.notes if "ran in before it" in n]
    assert said == [f"⚠ `{reuse}`: its content processes (WebKitWebProcess, pids "
                    f"{', '.join(map(str, sorted(pids[reuse], key=list(m.loc[m['cell'] == reuse, 'pid']).index)))}) "
                    f"are those `{fresh}` ran in before it: its content-process RSS, memory-budget reading and RSS "
                    "growth include what earlier cells left there"], said
    assert said[0] in (a.out_dir / "summary.md").read_text(encoding="utf-8")
    b, _ = pipeline.analyse_and_write(Path(__file__).resolve().parent / "runs" / "chromium-decode-loop", out_dir=tmp_path / "cr")
    assert not any("ran in before it" in n for n in b.notes)
