"""One source per fact: the probe catalog (web/probes/catalog.js) is what the worker counts;
the harness's sample schema, steps.csv columns, per-token metrics and RESULTS.md follow it.
The JS module is evaluated by node (not parsed by the harness's own reader) and compared."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path


from harness.serve.samples import LiveObjects, StepCounters
from harness.stats.metrics import TOKEN_METRICS
from harness.store import catalog
from harness.tables import COUNTER_COLUMNS, LIVE_COLUMNS, STEP_COLUMNS

REPO = Path(__file__).resolve().parents[1]



def _node(script: str):
    r = subprocess.run(["node", "--input-type=module", "-e", script], cwd=REPO, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_python_reads_the_same_catalog_node_evaluates():
    js = _node("import * as c from './web/probes/catalog.js'; import {COUNTER_NAMES} from './web/probes/counters.js';"
               "console.log(JSON.stringify({counters: c.COUNTERS, live: c.LIVE, names: COUNTER_NAMES}))")
    assert [c["name"] for c in js["counters"]] == catalog.counter_names() == js["names"]
    assert [(c["column"], c["unit"], c["metric"]) for c in js["counters"]] == \
        [(c.column, c.unit, c.metric) for c in catalog.counters()]
    assert [k["name"] for k in js["live"]] == [k.name for k in catalog.live_keys()]


def test_the_live_probe_reports_exactly_the_catalog_keys():
    keys = _node("import {liveSnapshot} from './web/probes/live-objects.js';"
                 "console.log(JSON.stringify(Object.keys(liveSnapshot())))")
    assert keys == [k.name for k in catalog.live_keys()]


def test_schema_columns_and_metrics_are_derived_from_the_catalog():
    assert list(StepCounters.model_fields) == catalog.counter_names()
    assert list(LiveObjects.model_fields) == [k.name for k in catalog.live_keys()]
    assert list(COUNTER_COLUMNS) == catalog.counter_names()
    assert [c for c in STEP_COLUMNS if c in COUNTER_COLUMNS.values()] == [c.column for c in catalog.counters()]
    assert LIVE_COLUMNS == [k.name for k in catalog.live_keys()]
    for c in catalog.counters():
        if c.metric:
            assert TOKEN_METRICS[c.metric] == (c.column, c.unit)


def test_results_md_lists_every_catalog_column():
    text = (REPO / "RESULTS.md").read_text(encoding="utf-8")
    steps_row = next(line for line in text.splitlines() if line.startswith("| `steps.csv`"))
    for name in [c.column for c in catalog.counters()] + [k.name for k in catalog.live_keys()]:
        assert name in steps_row, f"RESULTS.md's steps.csv row does not list {name}"
