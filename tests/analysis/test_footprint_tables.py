"""Tables from macOS-shaped memory samples. No Mac run is recorded (none was made here), so this
takes the recorded WebKitGTK run (tests/analysis/runs/webkit-decode-loop, real samples) and
writes its process samples the way the probe writes them on macOS (harness/probe/
process_memory.py: ``source: footprint`` with ``footprint_bytes``, no USS), with the footprint
set to the recorded RSS plus a fixed 64 MiB so every footprint number is known exactly. What
is tested is the analysis of that shape: footprint columns, and the memory budget counting
footprint (jetsam's number) instead of RSS."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from harness import tables

RUN = Path(__file__).resolve().parent / "runs" / "webkit-decode-loop"
EXTRA = 64 * 2**20


def macos_shaped(tmp_path: Path) -> Path:
    d = tmp_path / "run"
    shutil.copytree(RUN, d)
    lines = []
    for line in (RUN / "samples.jsonl").read_text().splitlines():
        s = json.loads(line)
        if s.get("kind") == "process_memory":
            s.update(source="footprint", uss_bytes=None, footprint_bytes=s["rss_bytes"] + EXTRA)
        lines.append(json.dumps(s))
    (d / "samples.jsonl").write_text("\n".join(lines) + "\n")
    return d


def test_footprint_rows_columns_and_budget(tmp_path):
    linux = tables.build(RUN)
    mac = tables.build(macos_shaped(tmp_path))
    m = mac.memory[mac.memory["source"] == "footprint"]
    assert len(m) == len(linux.memory[linux.memory["source"] == "psutil"]) > 0
    assert (m["footprint_bytes"] == m["rss_bytes"] + EXTRA).all() and m["uss_bytes"].isna().all()
    for (_, a), (_, b) in zip(linux.summary.iterrows(), mac.summary.iterrows()):
        # per process type: the peak of the summed footprint = the peak summed RSS + 64 MiB × processes
        assert b["content_rss_bytes_max"] == a["content_rss_bytes_max"]
        assert b["content_footprint_bytes_max"] == a["content_rss_bytes_max"] + EXTRA
        assert b["peak_footprint_bytes_WebKitWebProcess"] >= a["peak_rss_bytes_WebKitWebProcess"] + EXTRA
    assert "content_footprint_bytes_max" in linux.summary and linux.summary["content_footprint_bytes_max"].isna().all()
    assert not any(c.startswith("peak_footprint_bytes_") for c in linux.summary.columns)


def test_memory_budget_counts_footprint_not_rss(tmp_path):
    """With a budget just above the content process's largest RSS (+ modeled bytes), the RSS
    never passes it; the footprint, 64 MiB larger, does."""
    d = macos_shaped(tmp_path)
    linux = tables.build(RUN)
    row = linux.summary.iloc[0]
    steps = linux.steps[linux.steps["cell"] == row["cell"]]
    modeled = (steps["modeled_native_bytes"].fillna(0)
               + (steps["modeled_buffer_bytes"].fillna(0) - steps["buffer_contents_js_bytes"].fillna(0)).clip(lower=0))
    budget = int(row["content_rss_bytes_max"] + modeled.max() + 1)
    plain = tmp_path / "linux"
    shutil.copytree(RUN, plain)
    for folder in (d, plain):
        manifest = json.loads((folder / "manifest.json").read_text())
        manifest["parameters"]["memory_budget_bytes"] = budget
        (folder / "manifest.json").write_text(json.dumps(manifest))
    by_rss = tables.build(plain).summary.iloc[0]["would_be_killed_at_token"]
    by_footprint = tables.build(d).summary.iloc[0]["would_be_killed_at_token"]
    assert pd.isna(by_rss) and not pd.isna(by_footprint)
