"""buffers.csv → the "Buffers created, by usage and label" numbers (harness/stats/workloads/buffers.py):
pure logic over rows shaped like the probe's ``created_buffers`` groups."""

from __future__ import annotations

import pandas as pd

from harness.stats.workloads.buffers import cell_groups
from harness.counter_tables import BUFFER_COLUMNS, usage_flags


def test_usage_flags_in_spec_order():
    assert usage_flags(0x0080 | 0x0008 | 0x0004) == "COPY_SRC|COPY_DST|STORAGE"
    assert usage_flags(0x0001 | 0x0008) == "MAP_READ|COPY_DST"
    assert usage_flags(0) == ""


def _rows(*rows):
    return pd.DataFrame([{"cell": "c", "step": s, "label": l, "usage": u, "usage_flags": usage_flags(u),
                          "buffers": n, "bytes": b} for s, l, u, n, b in rows], columns=BUFFER_COLUMNS)


def test_steady_groups_per_step_over_every_step_after_warmup():
    b = _rows((0, "weights", 0x88, 10, 10_000), (1, "kv", 0x8C, 4, 1024), (2, "kv", 0x8C, 4, 2048),
              (3, "readback", 0x09, 1, 4104))
    out = cell_groups(b, steps_after=4)  # steps 1..4; step 4 created nothing
    assert out["warmup"] == {"buffers": 10, "bytes": 10_000}
    readback, kv = out["groups"]  # largest bytes first: 4,104 > 3,072
    assert (kv["label"], kv["usage_flags"], kv["buffers_per_step"], kv["bytes_per_step"], kv["steps_with"]) == \
        ("kv", "COPY_SRC|COPY_DST|STORAGE", 2.0, 768.0, 2)
    assert (readback["label"], readback["buffers_per_step"], readback["steps_with"]) == ("readback", 0.25, 1)
    assert out["more"] is None


def test_nothing_after_warmup_and_groups_past_the_limit():
    assert cell_groups(_rows((0, "", 0x40, 3, 48)), steps_after=5)["groups"] == []
    b = _rows(*[(1, f"b{i}", 0x80, 1, 100 + i) for i in range(5)])
    out = cell_groups(b, steps_after=1, max_rows=3)
    assert [g["label"] for g in out["groups"]] == ["b4", "b3", "b2"]
    assert out["more"] == {"groups": 2, "buffers_per_step": 2.0, "bytes_per_step": 201.0}
