"""``cycles.csv`` and the numbers of the "Cycles" report section and the console's per-cycle
tables: one row per session cycle of ort-run (create → first run → steady runs → release) and
per page load of lifecycle (:func:`cycle_table`).

Why per cycle: the first cycle of a cell pays for what later ones may reuse (shader compilation
caches, the adapter, the process's first allocations), so a single "first result" number is
cycle 0's alone and says little about the next session or the next page load; memory that is not
given back shows as a step up per cycle in the memory sampled after each one.

Per cell: its cycles (every column of cycles.csv), the process types sampled after them (content
process first, then the GPU process, the browser, the rest), and for the figures that change
between the first and later cycles the first cycle's value beside the median of the later ones
(``first`` / ``later``; none with a single cycle).
"""

from __future__ import annotations

import pandas as pd

from harness.tables import CONTENT_PROCESS_TYPES, GPU_PROCESS_TYPES, process_type_totals

#: Workloads whose steps come in cycles (steps.csv ``extra_cycle``): ort-run's session create/run/release
#: cycles, lifecycle's page loads (workloads/ort-run/README.md, workloads/lifecycle/README.md).
CYCLE_WORKLOADS = ("ort-run", "lifecycle")
#: cycles.csv columns (then ``rss_bytes_after_<process type>``, one per type sampled): per cycle its
#: steps, phase times (ms), what it created and destroyed (WebGPU calls), what was live at its
#: end, and the memory sampled after its last step (RESULTS.md).
COLUMNS = ["cell", "browser", "workload", "variant", "profile", "repetition", "cycle", "first_step",
           "last_step", "steps", "wall_ms", "create_ms", "first_run_ms", "time_to_first_result_ms",
           "steady_runs", "median_ms_per_steady_run", "release_ms", "page_load", "navigation_type",
           "device_ms", "compute_pipelines_created", "shader_modules_created", "buffers_created",
           "buffers_destroyed", "buffer_bytes_created", "bind_groups_created", "dispatches",
           "buffers_live_after", "buffer_bytes_live_after", "bind_groups_live_after", "memory_rounds_after",
           "js_heap_bytes_after", "rss_bytes_after_all"]


def _sum(df: pd.DataFrame, *cols: str):
    """Sum of ``cols`` over ``df``'s rows (a count of calls), None when none of them was recorded."""
    present = [c for c in cols if c in df and df[c].notna().any()]
    return int(sum(df[c].fillna(0).sum() for c in present)) if present else None


def _last(df: pd.DataFrame, col: str):
    vals = df[col].dropna() if col in df else []
    if not len(vals):
        return None
    v = vals.iloc[-1]
    return v.item() if hasattr(v, "item") else v


def cycle_table(tables) -> pd.DataFrame:
    """``cycles.csv`` of a :class:`harness.tables.Tables`: one row per cycle (steps.csv
    ``extra_cycle``) of every :data:`CYCLE_WORKLOADS` cell, :data:`COLUMNS` plus
    ``rss_bytes_after_<process type>`` (content process first, then the GPU process, the browser,
    the rest).

    Per cycle: ``wall_ms`` (its steps' wall ms summed); ort-run's phases (``create_ms``,
    ``first_run_ms``, ``time_to_first_result_ms`` from the start of the cycle's create step,
    ``steady_runs`` and their ``median_ms_per_steady_run``, ``release_ms``); lifecycle's
    ``page_load`` (1-based), ``navigation_type`` and ``device_ms``; WebGPU calls summed over the
    cycle's steps (``compute_pipelines_created`` counts createComputePipeline and its async form);
    live objects at the cycle's last step (``*_live_after``); and the memory sampled *after* it: the
    median over the harness's sampling rounds whose ``token`` is the cycle's last step (ort-run:
    the release step and its ``settle_ms``; lifecycle: the load's ``hold_ms``, RESULTS.md) of each
    process type's RSS summed over its processes (bytes), of all of them (``rss_bytes_after_all``)
    and of the worker's JS heap (CDP); ``memory_rounds_after`` says how many rounds that was (0:
    none, and the memory columns are empty, never 0)."""
    summary, steps, memory = tables.summary, tables.steps, tables.memory
    rows = []
    if not len(steps) or "extra_cycle" not in steps:
        return pd.DataFrame(columns=COLUMNS)
    totals = process_type_totals(memory)
    for _, cell in summary[summary["workload"].isin(CYCLE_WORKLOADS)].iterrows():
        s = steps[(steps["cell"] == cell["cell"]) & steps["extra_cycle"].notna()]
        mem = totals[totals["cell"] == cell["cell"]]
        cdp = memory[(memory["cell"] == cell["cell"]) & (memory["source"] == "cdp") & memory["js_heap_bytes"].notna()]
        for cycle, c in s.groupby("extra_cycle", sort=True):
            c = c.sort_values("step")
            last = int(c["step"].iloc[-1])
            row = {k: cell.get(k) for k in ("cell", "browser", "workload", "variant", "profile", "repetition")}
            row.update(cycle=int(cycle), first_step=int(c["step"].iloc[0]), last_step=last, steps=len(c),
                       wall_ms=float(c["wall_ms"].sum()) if c["wall_ms"].notna().any() else None)
            if "extra_phase" in c:
                phase = c.set_index("extra_phase")["wall_ms"]
                steady = c.loc[c["extra_phase"] == "steady", "wall_ms"].dropna()
                first = c[c["extra_phase"] == "first-run"]
                row.update(create_ms=_first(phase, "create"), first_run_ms=_first(phase, "first-run"),
                           time_to_first_result_ms=_last(first, "extra_time_to_first_result_ms"),
                           steady_runs=len(steady), median_ms_per_steady_run=float(steady.median()) if len(steady) else None,
                           release_ms=_first(phase, "release"))
            if "extra_page_loads" in c and c["extra_page_loads"].notna().any():
                row.update(page_load=int(c["extra_page_loads"].dropna().iloc[0]),
                           navigation_type=_last(c, "extra_navigation_type"), device_ms=_last(c, "extra_device_ms"))
            row.update(compute_pipelines_created=_sum(c, "create_compute_pipeline", "create_compute_pipeline_async"),
                       shader_modules_created=_sum(c, "create_shader_module"), buffers_created=_sum(c, "create_buffer"),
                       buffers_destroyed=_sum(c, "buffer_destroy"), buffer_bytes_created=_sum(c, "create_buffer_bytes"),
                       bind_groups_created=_sum(c, "create_bind_group"), dispatches=_sum(c, "dispatch_workgroups"),
                       buffers_live_after=_last(c, "buffers_live"), buffer_bytes_live_after=_last(c, "buffer_bytes_live"),
                       bind_groups_live_after=_last(c, "bind_groups_live"))
            after = mem[mem["token"] == last]
            rounds = after.pivot_table(index="time_s", columns="process_type", values="rss_bytes", aggfunc="sum")
            row["memory_rounds_after"] = len(rounds)
            if len(rounds):
                row["rss_bytes_after_all"] = float(rounds.sum(axis=1).median())
                for ptype in rounds.columns:
                    row[f"rss_bytes_after_{ptype}"] = float(rounds[ptype].median())
            heap = cdp.loc[cdp["token"] == last, "js_heap_bytes"]
            row["js_heap_bytes_after"] = float(heap.median()) if len(heap) else None
            rows.append(row)
    out = pd.DataFrame(rows)
    for col in COLUMNS:
        if col not in out:
            out[col] = pd.Series(dtype="object")
    ptypes = sorted((c for c in out.columns if c.startswith("rss_bytes_after_") and c != "rss_bytes_after_all"),
                    key=lambda c: (_role(c[len("rss_bytes_after_"):]), c))
    return out[COLUMNS + ptypes]


def _first(phase: pd.Series, name: str):
    vals = phase[phase.index == name].dropna()
    return float(vals.iloc[0]) if len(vals) else None




def _role(ptype: str) -> int:
    """Column order of a process type: content process, GPU process, browser, the rest."""
    if ptype in CONTENT_PROCESS_TYPES:
        return 0
    if ptype in GPU_PROCESS_TYPES:
        return 1
    return 2 if ptype in ("browser", "Safari", "MiniBrowser") else 3


#: What each compared figure is, in words (console and report).
FIGURE_NAMES = {"time_to_first_result_ms": "ms to first result", "create_ms": "create ms", "first_run_ms": "first run ms",
                "median_ms_per_steady_run": "median ms per steady run", "wall_ms": "ms per page load",
                "device_ms": "requestDevice ms"}
#: Figures compared between the first cycle and the median of the later ones, by workload.
FIRST_VS_LATER = {"ort-run": ("time_to_first_result_ms", "create_ms", "first_run_ms", "median_ms_per_steady_run"),
                  "lifecycle": ("wall_ms", "device_ms")}


def _value(v):
    return None if v is None or (not isinstance(v, str) and pd.isna(v)) else v


def numbers(tables, run=None) -> dict | None:
    """``{"table": cycles.csv (DataFrame), "cells": [{cell, workload, row (summary row), cycles
    (list of dicts), ptypes, first, later}]}``, or None when no cell has cycles. ``ptypes``: process types with an ``rss_bytes_after_<type>``
    value in that cell; ``first``/``later``: :data:`FIRST_VS_LATER` figures of cycle 0 and the
    median over cycles ≥ 1 (None where absent)."""
    cyc = cycle_table(tables)
    if not len(cyc):
        return None
    summary = tables.summary.set_index("cell")
    out = []
    for cell, c in cyc.groupby("cell", sort=False):
        c = c.sort_values("cycle")
        workload = str(c["workload"].iloc[0])
        ptypes = [col[len("rss_bytes_after_"):] for col in c.columns
                  if col.startswith("rss_bytes_after_") and col != "rss_bytes_after_all" and c[col].notna().any()]
        figures = FIRST_VS_LATER.get(workload, ())
        later = c[c["cycle"] >= 1]
        first = {f: _value(c[f].iloc[0]) for f in figures if f in c}
        med = {f: (float(later[f].median()) if len(later) and later[f].notna().any() else None) for f in figures if f in c}
        out.append({"cell": cell, "workload": workload,
                    "row": {"cell": cell, **summary.loc[cell].to_dict()} if cell in summary.index else {"cell": cell},
                    "cycles": [{k: _value(v) for k, v in r.items()} for r in c.to_dict("records")],
                    "ptypes": ptypes, "first": first, "later": med if len(later) else {}})
    return {"table": cyc, "cells": out}
