"""steps.csv's columns built column by column (harness/step_columns.py) give the frame
one dict per step sample gave (the way tables were built before): same columns, values and
dtypes, NaN where a sample lacks a key. Checked on the step samples of every recorded real run
under tests/ and on samples made to differ (a counter missing from some, counters off, an
unknown counter, two extra keys of one column, emulation on some cells only)."""

from __future__ import annotations

import copy
from pathlib import Path

import pandas as pd
import pytest

from harness import step_columns as SC
from harness import tables as T
from harness.store.runfolder import scan_samples

TESTS = Path(__file__).resolve().parents[1]
RUNS = sorted(p.parent for p in TESTS.rglob("samples.jsonl"))
BASE = ["step", "token", "logits_hash", "cpu_ms", "wall_ms", "received_s", "end_s"]


def _row_frame(samples: list[dict], keys: list[dict]) -> pd.DataFrame:
    """The frame of one row dict per sample, as harness/tables.py built it before (the reference)."""
    rows = []
    for s, k in zip(samples, keys):
        row = {**k, "step": s["step"], **{c: s.get(c) for c in BASE[1:-1]}}
        row.update({T.COUNTER_COLUMNS[n]: v for n, v in (s.get("counters") or {}).items() if n in T.COUNTER_COLUMNS})
        row.update(s.get("live") or {})
        if s.get("emulation"):
            row.update({n: v for n, v in s["emulation"].items() if n in T.EMULATION_COLUMNS})
        row.update({SC._extra_column(n): v for n, v in (s.get("extra") or {}).items()})
        rows.append(row)
    return pd.DataFrame(rows)


def _column_frame(samples: list[dict], keys: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(T.as_arrays(T.step_columns(samples, keys)))


def _same(samples: list[dict], keys: list[dict]) -> None:
    a, b = _row_frame(samples, keys), _column_frame(samples, keys)
    assert sorted(a.columns) == sorted(b.columns)
    pd.testing.assert_frame_equal(a[sorted(a.columns)], b[sorted(a.columns)])


def test_column_groups_are_disjoint():
    """A sample's counters, live objects, emulation values and fields never name one column twice
    (step_columns puts each group's columns side by side; row dicts let a later one win)."""
    counters, live, emulation = set(T.COUNTER_COLUMNS.values()), set(T.LIVE_COLUMNS), set(T.EMULATION_COLUMNS)
    base = set(T.CELL_KEYS + BASE)
    groups = [counters, live, emulation, base]
    assert sum(map(len, groups)) == len(set().union(*groups))
    assert not [c for c in counters | live | emulation if c.startswith(("extra_", "realm_"))]


@pytest.mark.parametrize("run", RUNS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_recorded_steps_same_frame(run: Path):
    samples, _ = scan_samples(run)
    steps = [s for s in samples if s.get("kind") == "step"]
    if not steps:  # a run whose cells made no step (a failed launch): no rows either way
        assert len(T.build(run).steps) == 0
        return
    keys = [{k: (s.get("cell") if k == "cell" else f"{k}-value") for k in T.CELL_KEYS} for s in steps]
    _same(steps, keys)


def test_varied_samples_same_frame():
    """Samples whose keys differ from one to the next take the key-by-key path and still match."""
    run = TESTS / "analysis" / "runs" / "mixed-decode-loop"
    samples, _ = scan_samples(run)
    steps = [copy.deepcopy(s) for s in samples if s.get("kind") == "step"][:40]
    assert len(steps) == 40
    name = next(iter(steps[0]["counters"]))
    del steps[1]["counters"][name]                     # one counter missing: NaN there
    steps[2]["counters"] = None                        # probes off
    steps[3]["counters"]["notACounter"] = 5            # a counter this harness does not know: left out
    steps[4]["extra"] = {"sizeBytes": 1, "size_bytes": 2}   # two keys of one column: the later
    steps[5]["extra"] = {"size_bytes": 3, "sizeBytes": 4}
    steps[6].pop("token", None)
    steps[8]["extra"] = {"flag": True}                 # a boolean beside integers: object, as row dicts give
    steps[9]["extra"] = {"flag": 2, "ratio": 0.5}
    steps[10]["extra"] = {"ratio": 1}
    steps[7]["live"] = None
    for s in steps[:20]:
        s.pop("emulation", None)
    keys = [{k: f"{k}-{i % 3}" for k in T.CELL_KEYS} for i in range(len(steps))]
    _same(steps, keys)
    frame = _column_frame(steps, keys)
    assert frame["extra_size_bytes"].tolist()[4:6] == [2, 4]
    assert frame["extra_flag"].dtype == object and frame["extra_ratio"].dtype == "float64"
    assert pd.isna(frame[T.COUNTER_COLUMNS[name]][1]) and pd.notna(frame[T.COUNTER_COLUMNS[name]][0])
    assert "notACounter" not in frame and pd.isna(frame[T.COUNTER_COLUMNS[name]][2])
