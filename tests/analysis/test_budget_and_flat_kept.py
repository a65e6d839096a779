"""Two real runs a statement checker read against their samples (tests/analysis/kept-runs/, each
with its COMMAND): every memory-budget reading agrees with its own numbers, and a series that
fell once is never "nothing collected". No browser; nothing mocked."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from harness import pipeline
from harness.memory_budget import budget_reading

KEPT = Path(__file__).resolve().parent / "kept-runs"
RUNS = Path(__file__).resolve().parent / "runs"
READING = re.compile(r"not reached \(max ([\d,]+) MB of ([\d,]+) MB")


def _all_runs():
    return sorted(p for base in (KEPT, RUNS) for p in base.iterdir() if (p / "manifest.json").exists())


@pytest.mark.parametrize("run", _all_runs(), ids=lambda p: p.name)
def test_a_budget_reading_never_says_not_reached_above_the_budget(run):
    a = pipeline.analyse(run)
    for _, row in a.tables.summary.iterrows():
        said = budget_reading(row.get("would_be_killed_at_token"), row.get("memory_budget_counted_bytes_max"),
                              row.get("memory_budget_bytes"), row)
        m = READING.search(said or "")
        if m:
            assert int(m.group(1).replace(",", "")) <= int(m.group(2).replace(",", "")), (row["cell"], said)


def test_a_budget_crossed_only_by_unplaced_samples_is_not_decided():
    # WebKit's fresh r0: its content process sampled only before and in warm-up step 0 (322 MB),
    # the modeled bytes then reach 145 MB: 467 MB counted, over the 400 MB budget, on no token
    a = pipeline.analyse(KEPT / "budget-unplaced-webkit")
    row = a.tables.summary.set_index("cell").loc["webkit.decode-loop.fresh.ort-field-1.7b.r0"]
    assert row["content_rss_samples"] == 0 and row["memory_budget_counted_bytes_max"] > 400e6
    said = budget_reading(row["would_be_killed_at_token"], row["memory_budget_counted_bytes_max"], 400e6, row)
    assert said.startswith("not decided (max 467 MB of 400 MB") and "not placed on a token" in said, said


def test_buffers_destroyed_once_at_release_are_flat_until_one_drop_not_nothing_collected(tmp_path):
    # ort-run's session.release destroys all 31 buffers at step 121: one drop, flat until it
    d = tmp_path / "r"
    shutil.copytree(KEPT / "ort-run-release-flat", d)
    a = pipeline.analyse(d)
    rows = {r["series"]: r for r in a.workloads["memory"]["rows"]}
    assert rows["buffers_not_destroyed"]["class"] == "flat" and rows["buffers_not_destroyed"]["falls"] == "121"
    text = "\n".join(f.text() for f in a.findings)
    flat = [line for line in text.splitlines() if line.startswith("Flat (nothing new kept, nothing collected)")]
    assert not any("GPUBuffers not destroyed" in line for line in flat), flat
    assert any(line.startswith("Flat until one drop") and "GPUBuffers not destroyed" in line
               for line in text.splitlines()), text


def test_a_dawn_cells_node_process_is_its_content_process():
    # native Dawn (Node): the Node process runs the worker code and Dawn; its RSS is what a budget
    # counts (no 'content process not sampled' warning for a process that was sampled)
    from harness import tables as T

    run = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "swiftshader-chromium-dawn-20261201"
    t = T.build(run)
    dawn = t.summary[t.summary["browser"] == "dawn"]
    assert len(dawn) and (dawn["content_rss_samples"] > 0).all(), dawn[["cell", "content_rss_samples"]]
    a = pipeline.analyse(run)
    assert not any("content process not sampled" in n and "dawn." in n for n in a.notes), a.notes


def test_too_few_samples_is_said_once_per_number():
    # bind-group-cache on Dawn: 243 bind groups/token from 7 tokens, said once, not twice
    text = "\n".join(f.text() for f in pipeline.analyse(KEPT / "dawn-remedies-swiftshader").findings)
    assert "bind-group-cache 243 (too few samples (n=7; needs 10): no interval) (-23.8% vs fresh)" in text, text
    assert not re.search(r"\((too few samples \(n=\d+; needs \d+\))[^)]*\) \(\1", text), text
