"""A workload whose step is not a token speaks of steps on every surface (tests/analysis/
kept-runs/webkit-ort-run, see its COMMAND: one step = one session.run): findings, summary.md's
tables, report.html's findings, statistics and engines tables (harness/report/step_wording.py
``per_step``, ``in_steps``; harness/own_terms.py STEP_UNITS)."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pytest

from harness import pipeline

RUN = Path(__file__).resolve().parent / "kept-runs" / "webkit-ort-run"
#: what the recording measured: 7 createBindGroup per session.run, live bind groups rising 7 per
#: step and the modeled native bytes 112 KiB per step between collections
RATES = ("rose 7 bind groups/step", "rose 112 KiB/step")


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    d = shutil.copytree(RUN, tmp_path_factory.mktemp("ort") / "run")
    pipeline.analyse_and_write(d, out_dir=d)
    return d


def _rates_per_token(text: str) -> list[str]:
    # "_per_token" metric names are column names (kept); the field report's tokens are tokens
    return [m for m in re.findall(r"[^\n<>]{0,40}(?:\bper token\b|/token\b)[^\n<>]{0,20}", text)
            if "_per_token" not in m and "~150,000" not in m]


def test_findings_tables_and_report_say_per_step(written):
    stats = json.loads((written / "stats.json").read_text())
    texts = [f["text"] for f in stats["findings"]]
    assert any(t.startswith("createBindGroup calls per step: default 7") for t in texts), texts
    md = (written / "summary.md").read_text()
    assert _rates_per_token(md) == [] and all(r in md for r in RATES[:1])
    page = html.unescape((written / "report.html").read_text())
    assert "createBindGroup calls per step: " in page and "Live bind groups, growth per step: " in page
    for rate in RATES:
        assert rate in page, rate
    # the memory-series table's reasons too: their rates in the workload's step (format.reason)
    assert _rates_per_token(page) == []
