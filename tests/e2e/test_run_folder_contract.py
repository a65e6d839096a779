"""RESULTS.md is the contract between measuring and analysing: every file and column it names is
in a run folder a fresh ``run`` writes (decode-loop in real Chromium, the shared session run)."""

from __future__ import annotations

import json
import re

import pandas as pd

from conftest import REPO


#: Names in RESULTS.md's rows that are values (memory.csv ``source`` and ``process_type``), not columns.
VALUES = {"psutil", "footprint", "cdp", "uasm", "browser", "renderer", "utility", "zygote", "worker", "page",
          "app", "frame", "t_ms"}   # a command, a realm label and a samples.jsonl field named in the rows


def _documented() -> dict[str, list[str]]:
    """File name → the identifiers in the backticked parts of its row of RESULTS.md's table."""
    out: dict[str, list[str]] = {}
    for line in (REPO / "RESULTS.md").read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| `([a-z_.]+)` \| (.*) \|$", line)
        if m:
            parts = [x.strip(" {}.") for seg in re.findall(r"`([^`]+)`", m.group(2)) for x in seg.split(",")]
            out[m.group(1)] = [x for x in parts if re.fullmatch(r"[a-z_]+", x)]
    return out


def test_every_documented_file_and_column_is_written(decode_run):
    doc = _documented()
    assert {"manifest.json", "samples.jsonl", "summary.csv", "steps.csv", "memory.csv", "report.html"} <= set(doc)
    for name in doc:
        assert (decode_run.dir / name).exists(), name
    manifest = json.loads((decode_run.dir / "manifest.json").read_text())
    cell_keys = set(manifest["cells"][0])
    assert [k for k in doc["manifest.json"] if k not in manifest and k not in cell_keys] == []
    for csv in ("summary.csv", "steps.csv", "memory.csv"):
        columns = set(pd.read_csv(decode_run.dir / csv, nrows=1).columns)
        assert [c for c in doc[csv] if c not in columns and c not in VALUES] == [], csv
    kinds = {json.loads(x)["kind"] for x in (decode_run.dir / "samples.jsonl").read_text().splitlines()}
    assert {"env", "step", "done", "process_memory", "cell_status"} <= kinds <= set(doc["samples.jsonl"])


def test_analysis_files_are_written_once_in_pipeline_order(decode_run):
    from harness.pipeline import RUN_FILES

    times = [(decode_run.dir / name).stat().st_mtime_ns for name in RUN_FILES]
    assert times == sorted(times), dict(zip(RUN_FILES, times))
