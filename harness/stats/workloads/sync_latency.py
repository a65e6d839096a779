"""Numbers of the "Sync latency" report section, the console's sync-latency table and the
``sync_us_<method>`` rows of ``stats.csv``: how long one wait for the GPU takes, per
configuration × sync-latency method, with the pacing and the thread it ran on.

Data: ``dispatch-overhead`` cells run with sync methods (``--param methods=sync-empty,sync-dispatch,
sync-map,sync-n``; workloads/dispatch-overhead/README.md, "Sync latency"). Every run (one step)
times ``sync_iterations`` syncs and records each in steps.csv ``extra_sync_us_samples``; the
numbers here pool every timed sync of a configuration's repetitions, rounds after round 0
(harness/stats/cells.py ``sync_samples``). A configuration is a statistics group: browser ×
variant × parameters, so a sweep of ``pacing`` or ``main_thread`` gives one row per value.

Per row: ``median`` with its 95% interval (circular block bootstrap over the syncs in iteration
order, as every per-step metric: harness/stats/run.py), ``p10`` and ``p90`` (same method) and
``max`` (no interval). On a CPU adapter (SwiftShader) the "GPU" work runs on the CPU: these are
not GPU times, and each row names its adapter.
"""

from __future__ import annotations

from harness.stats.metrics import SPREAD_STATS
from harness.stats.run import Estimate, estimate
from harness.stats.workloads.dispatch_overhead import adapter_class

WORKLOAD = "dispatch-overhead"
#: Sync-latency methods in table order (workloads/dispatch-overhead/bench.js).
SYNC_METHODS = ("sync-empty", "sync-dispatch", "sync-map", "sync-n")
#: Statistics of each row, in column order: the median (with its interval), then the spread.
STATS = ("median", *SPREAD_STATS)


def metric(method: str) -> str:
    """The metric name of a sync method (``sync_us_sync-map``)."""
    return f"sync_us_{method}"


def estimates(run, key, method: str) -> dict[str, Estimate]:
    """``{stat: Estimate}`` for :data:`STATS` of ``method`` over group ``key``'s ok cells of
    ``run`` (a :class:`harness.stats.run.RunStats`); empty when none has a timed sync of it."""
    cells = run.ok_cells(key)
    out = {}
    for stat in STATS:
        e = estimate(cells, metric(method), run.warmup, stat=stat, confidence=run.confidence)
        if e is not None:
            out[stat] = e
    return out


def _one(steps, col: str) -> str:
    vals = sorted({str(v) for v in steps[col].dropna()}) if col in steps else []
    return ", ".join(vals) if vals else "—"


def numbers(tables, run=None) -> dict | None:
    """``{"rows": [...], "methods": [...]}`` or None when no ok cell ran a sync method. A row:
    ``group`` (label), ``cells``, ``row`` (the first cell's summary row: provenance),
    ``adapter_class``, ``method``, ``pacing`` (with ``pace_ms`` for ``timeout``), ``thread``
    (``worker`` / ``main``), ``runs`` (steps after warm-up), ``syncs`` (timed syncs pooled), ``reps`` and
    ``median``/``p10``/``p90``/``max`` (:class:`harness.stats.run.Estimate`, µs)."""
    if run is None or not len(tables.steps) or "extra_sync_us_samples" not in tables.steps:
        return None
    rows = []
    summary = tables.summary.set_index("cell")
    for key, g in run.groups.items():
        if key.workload != WORKLOAD or not g.cells:
            continue
        steps = tables.steps[tables.steps["cell"].isin(g.cells)]
        present = [str(m) for m in steps["extra_config"].dropna().unique() if str(m).startswith("sync-")]
        for method in [m for m in SYNC_METHODS if m in present] + sorted(m for m in present if m not in SYNC_METHODS):
            est = estimates(run, key, method)
            if not est:
                continue
            st = steps[steps["extra_config"] == method]
            if "extra_round" in st:  # the runs whose syncs were pooled: rounds after round 0 where a cell has them
                st = st.groupby("cell", group_keys=False).apply(
                    lambda c: c[c["extra_round"] >= 1] if (c["extra_round"] >= 1).any() else c)
            pacing = _one(st, "extra_pacing")
            if pacing == "timeout" and "extra_pace_ms" in st:
                pacing += f" {_one(st, 'extra_pace_ms')} ms"
            first = summary.loc[g.cells[0]]
            rows.append({"group": key.label, "cells": g.cells, "row": {"cell": g.cells[0], **first.to_dict()},
                         "adapter_class": adapter_class(first, tables.env.get(g.cells[0], {})), "method": method,
                         "pacing": pacing, "thread": _one(st, "extra_thread"), "runs": int(len(st)),
                         "syncs": est["median"].n, "reps": est["median"].n_reps, **est})
    if not rows:
        return None
    return {"rows": rows, "methods": list(dict.fromkeys(r["method"] for r in rows)), "stats": STATS}
