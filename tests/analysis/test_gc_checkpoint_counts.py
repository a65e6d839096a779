"""``--gc-checkpoints N``: the analysis says how many of the checkpoints each cell's steps passed
a forced collection was done for (tests/analysis/runs/chromium-bind-group-cache: every 5 tokens,
24 tokens, Chromium)."""

from __future__ import annotations

import json
from pathlib import Path

from harness import pipeline

RUN = Path(__file__).resolve().parent / "runs" / "chromium-bind-group-cache"


def test_checkpoints_done_of_due_per_cell(tmp_path):
    samples = [json.loads(x) for x in (RUN / "samples.jsonl").read_text().splitlines() if x.strip()]
    every = json.loads((RUN / "manifest.json").read_text())["parameters"]["gc_checkpoints"]
    a, _ = pipeline.analyse_and_write(RUN, out_dir=tmp_path)
    found = [f for f in a.findings if f.kind == "gc_checkpoints"]
    assert len(found) == 2                                 # one per configuration (bind_group_cache=evict, never)
    text = " ".join(f.text() for f in found)
    assert text.count(f"--gc-checkpoints {every}") == 2
    for cell in sorted({s["cell"] for s in samples if s.get("kind") == "step"}):
        last = max(s["step"] for s in samples if s.get("kind") == "step" and s["cell"] == cell)
        due = (last + 1) // every
        done = sum(1 for s in samples if s.get("kind") == "gc_checkpoint" and s["cell"] == cell and s["forced"])
        assert due == 4 and 1 <= done <= due               # 24 tokens: after steps 4, 9, 14, 19
        asked = sum(1 for s in samples if s.get("kind") == "gc_checkpoint" and s["cell"] == cell)
        assert f"reuse {done} of {due} done" in text
        if asked < due:                                    # steps that came together: one ask for several
            assert f"({asked} asked: {due - asked} passed while the harness had not yet seen their steps" in text
    assert (tmp_path / "summary.md").read_text().count("GC checkpoints") == 2
