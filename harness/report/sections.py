"""The report's sections, in reading order: one explicit tuple.

A :class:`Section` names its template (reports/templates/<template>), how to get its context
from an analysis (harness/pipeline.py ``Analysis``: tables, stats, findings, engines, budgets and
the workload numbers of harness/stats/workloads/) and which charts it draws
(harness/report/charts.py, workload_charts.py). A section whose context is None is left out
(the run has nothing for it). Sections compute nothing: the analysis did; they choose and
arrange what a reader sees first — findings, then the engines side by side, then the detail.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from harness.report import charts, workload_charts
from harness.report import format as F
from harness.report.charts import Names
from harness.report.finding import NOT_TOKENS
from harness.stats.metrics import HEADLINE
from harness.stats.workloads.cycles import FIGURE_NAMES
from harness.tables import STEP_UNITS


@dataclass(frozen=True)
class Section:
    """``id`` (HTML anchor), ``title`` (text, or a function of the context), ``template``,
    ``context(analysis, names) -> dict | None`` and ``charts(analysis, ctx, names) -> {id: figure}``
    (``names``: the run's short trace names, :class:`harness.report.charts.Names`)."""

    id: str
    title: str | Callable[[dict], str]
    template: str
    context: Callable[[Any, Names], dict | None]
    charts: Callable[[Any, dict, Names], dict] | None = None

    def heading(self, ctx: dict) -> str:
        """The section's title for this context."""
        return self.title(ctx) if callable(self.title) else self.title


def findings_context(analysis, names: Names) -> dict | None:
    """Context of findings.j2: the findings grouped by scope (in order), budgets, cell statuses
    and the legend key."""
    manifest = analysis.tables.manifest
    by_scope: dict[str, list] = {}
    for f in analysis.findings:
        by_scope.setdefault(f.scope, []).append(f)
    statuses: dict[str, int] = {}
    for c in manifest.get("cells", []):
        statuses[c.get("status")] = statuses.get(c.get("status"), 0) + 1
    return {"scopes": list(by_scope.items()), "budgets": analysis.budgets, "statuses": statuses,
            "n_cells": len(manifest.get("cells", [])), "key": names.legend_key(),
            "repeat": (manifest.get("parameters") or {}).get("repeat", 1)}


def engines_context(analysis, names: Names) -> dict | None:
    """Context of engines.j2: harness/report/engines.py's numbers (None: no memory series)."""
    return None if not analysis.engines else {"n": analysis.engines}


def per_token_context(analysis, names: Names) -> dict | None:
    """Context of per_token.j2: the warm-up and the time caveat of the per-token charts (None
    when no workload of the run counts tokens)."""
    s = analysis.tables.summary
    if not len(analysis.tables.steps) or s["workload"].isin(NOT_TOKENS).all():
        return None
    return {"warmup": analysis.stats.warmup, "time_note": charts.time_note(analysis)}


def _retention_by_cell(analysis) -> dict[str, dict]:
    rows = (analysis.workloads.get("retention") or {}).get("rows", [])
    return {r["cell"]: r for r in rows}


def _methods_by_cell(analysis) -> dict[str, dict]:
    return {m["cell"]: m for m in (analysis.workloads.get("dispatch-overhead") or {}).get("methods", [])}


#: Columns of the cells table: (header, summary.csv column or a key the context fills, filter).
TOKEN_COLUMNS = [("steps / tokens", "progress", "text"), ("createBindGroup / token", "bind_groups_per_token", "number"),
                 ("dispatches / token", "dispatches_per_token", "number"), ("submits / token", "submits_per_token", "number"),
                 ("live bind groups, max", "live_bind_groups_max", "number"),
                 ("live bind groups at end", "live_bind_groups_end", "number"),
                 ("content process RSS, max (MiB)", "content_rss_bytes_max", "mib"),
                 ("median ms / token", "median_ms_per_token", "number"), ("tokens identical", "tokens_identical", "text")]
#: Per-step columns of workloads whose steps are not tokens (summary.csv's ``*_per_token`` columns are
#: medians per step: the names are the stable interface, the headers say what a step is).
STEP_COLUMNS = [("createBindGroup / step", "bind_groups_per_token", "number"),
                ("dispatches / step", "dispatches_per_token", "number"), ("submits / step", "submits_per_token", "number"),
                ("live bind groups, max", "live_bind_groups_max", "number"),
                ("live bind groups at end", "live_bind_groups_end", "number"),
                ("content process RSS, max (MiB)", "content_rss_bytes_max", "mib")]
#: Each workload's own columns (workloads not listed: :data:`TOKEN_COLUMNS`); dispatch-overhead's are
#: per method present (:func:`dispatch_columns`), upload's per size (:func:`upload_columns`).
WORKLOAD_COLUMNS = {
    "app": [("steps", "progress", "text"), *STEP_COLUMNS, ("median ms / step", "median_ms_per_token", "number")],
    "ort-run": [("steps", "steps_received", "number"), ("session cycles", "cycles", "number"), ("runs", "runs", "number"),
                *STEP_COLUMNS, ("median ms / steady run", "median_ms_per_run", "number"),
                ("ms to first result, cycle 0 (every cycle: Cycles)", "time_to_first_result_ms", "number"),
                ("outputs identical", "tokens_identical", "text")],
    "lifecycle": [("page loads", "progress", "text"), *STEP_COLUMNS, ("median ms / page load", "median_ms_per_page_load", "number")],
}
#: dispatch-overhead in its own terms: rounds, µs per dispatch per method, single-op ÷ sequential.
DISPATCH_COLUMNS = [("rounds", "tokens", "number"), ("steps (method runs)", "steps_received", "number"),
                    ("single-op µs / dispatch", "us_single-op", "mean_interval"),
                    ("sequential µs / dispatch", "us_sequential", "mean_interval"),
                    ("batched-16 µs / dispatch", "us_batched-16", "mean_interval"),
                    ("one-pass µs / dispatch", "us_one-pass", "mean_interval"),
                    ("single-op ÷ sequential", "factor", "mean_interval")]
def dispatch_columns(grp, methods: dict[str, dict], sync: dict[str, dict]) -> list[tuple[str, str, str]]:
    """dispatch-overhead's columns for the methods its cells ran: :data:`DISPATCH_COLUMNS`' methods
    present (the overestimation factor when single-op and sequential both ran) and the median µs
    per sync of each sync-latency method (every statistic: the Sync latency section)."""
    ran = {c for cell in grp["cell"] for c in (methods.get(cell) or {}).get("per", {})
           if not F.missing((methods.get(cell) or {}).get("per", {}).get(c, (None,))[0])}
    cols = [c for c in DISPATCH_COLUMNS[:2]]
    cols += [c for c in DISPATCH_COLUMNS[2:6] if c[1][3:] in ran]
    cols += [(f"{c} µs / dispatch", f"us_{c}", "mean_interval") for c in sorted(ran)
             if f"us_{c}" not in {k for _, k, _ in DISPATCH_COLUMNS}]
    if {"single-op", "sequential"} <= ran:
        cols.append(DISPATCH_COLUMNS[6])
    names = list(dict.fromkeys(m for cell in grp["cell"] for m in sync.get(cell, {})))
    cols += [(f"{m} µs / sync, median", f"sync_{m}", "estimate") for m in names]
    return cols


def upload_columns(grp) -> list[tuple[str, str, str]]:
    """upload's columns: uploads, buffers created per upload and the median ms per upload of each
    size (summary.csv ``median_ms_per_upload_<bytes>``) — never one median over every size."""
    sizes = sorted(int(c.rsplit("_", 1)[1]) for c in grp.columns
                   if c.startswith("median_ms_per_upload_") and grp[c].notna().any())
    return ([("uploads", "steps_received", "number"), ("buffers created / upload", "buffers_created_per_upload", "number")]
            + [(f"median ms / upload of {F.value(b, 'bytes')}", f"median_ms_per_upload_{b}", "number") for b in sizes]
            + [("bytes identical", "tokens_identical", "text")])


#: Render work, shown in a workload's cells table when any of its cells draws.
RENDER_COLUMNS = [("draws / token", "draws_per_token", "number"),
                  ("render passes / token", "render_passes_per_token", "number"),
                  ("pipelines created", "pipelines_created", "number")]


def _any_positive(df, col: str) -> bool:
    return col in df and bool((df[col].fillna(0).astype(float) > 0).any())


def cells_context(analysis, names: Names) -> dict | None:
    """Context of cells.j2: one table per workload, with that workload's own columns
    (:data:`TOKEN_COLUMNS` for decoders, :data:`WORKLOAD_COLUMNS`, :func:`dispatch_columns`,
    :func:`upload_columns`; gc-retention adds its collection events) and what "identical" means."""
    s = analysis.tables.summary
    if not len(s):
        return None
    retention, methods = _retention_by_cell(analysis), _methods_by_cell(analysis)
    sync: dict[str, dict] = {}
    for r in (analysis.workloads.get("sync-latency") or {}).get("rows", []):
        for cell in r["cells"]:
            sync.setdefault(cell, {})[r["method"]] = r["median"]
    tables = []
    for workload, grp in s.groupby("workload", sort=False):
        if workload == "dispatch-overhead":
            cols = dispatch_columns(grp, methods, sync)
        elif workload == "upload":
            cols = upload_columns(grp)
        else:
            cols = list(WORKLOAD_COLUMNS.get(workload, TOKEN_COLUMNS))
            if workload == "gc-retention":
                cols.insert(6, ("collection events", "gc_events", "number"))
            if _any_positive(grp, "draws_per_token") or _any_positive(grp, "render_passes_per_token"):
                # an app that renders: its draws, not "0 dispatches" with nothing else
                per = "step" if workload == "app" else "token"
                cols[3:3] = [(label.replace("/ token", f"/ {per}"), key, kind) for label, key, kind in RENDER_COLUMNS]
        rows = []
        for _, r in grp.iterrows():
            row = r.to_dict()
            row["progress"] = f"{r['steps_received']}/{r['tokens']}"
            row["gc_events"] = (retention.get(r["cell"]) or {}).get("gc_events")
            m = methods.get(r["cell"]) or {}
            for c, v in (m.get("per") or {}).items():
                row[f"us_{c}"] = v
            row["factor"] = m.get("factor")
            for method, e in sync.get(r["cell"], {}).items():
                row[f"sync_{method}"] = e
            # a max from fewer than 3 sampling rounds says so: "315.4 (n=1)"
            values = [((row.get(k), row.get("content_rss_samples")), "mib_n") if k == "content_rss_bytes_max"
                      else (row.get(k), fmt) for _, k, fmt in cols]
            rows.append({"row": row, "name": names.of(r), "values": values})
        tables.append({"workload": workload, "headers": [h for h, _, _ in cols], "rows": rows,
                       "vary_profile": names.vary["profile"],
                       "identical": any(k == "tokens_identical" for _, k, _ in cols)})
    failed = int((s["status"].isin(["failed", "device-lost"])).sum())
    return {"tables": tables, "n": len(s), "failed": failed,
            "step_units": {w: STEP_UNITS.get(w, "token") for w in s["workload"].unique()}}


#: Columns of the per-cycle tables (cycles.csv): (header, column, filter), by workload; then one
#: "RSS after" column per process type sampled, and the sampling rounds behind them.
CYCLE_TABLE_COLUMNS = {
    "ort-run": [("cycle", "cycle", "number"), ("ms to first result", "time_to_first_result_ms", "number"),
                ("create ms", "create_ms", "number"), ("first run ms", "first_run_ms", "number"),
                ("steady runs", "steady_runs", "number"), ("median ms / steady run", "median_ms_per_steady_run", "number"),
                ("release ms", "release_ms", "number")],
    "lifecycle": [("cycle", "cycle", "number"), ("page load", "page_load", "number"),
                  ("navigation", "navigation_type", "text"), ("ms (the load's step)", "wall_ms", "number"),
                  ("requestDevice ms", "device_ms", "number")],
}
#: What a cycle created and destroyed (second part of the first table).
CYCLE_CALL_COLUMNS = [("compute pipelines created", "compute_pipelines_created", "number"),
                      ("buffers created", "buffers_created", "number"), ("buffers destroyed", "buffers_destroyed", "number"),
                      ("buffer bytes created", "buffer_bytes_created", "bytes"),
                      ("createBindGroup", "bind_groups_created", "number"), ("dispatches", "dispatches", "number")]
#: What was left after a cycle (the second table), then one RSS column per process type sampled.
CYCLE_AFTER_COLUMNS = [("cycle", "cycle", "number"),
                       ("buffer bytes live at end (not destroyed)", "buffer_bytes_live_after", "bytes"),
                       ("buffer wrappers live at end (not yet collected)", "buffers_live_after", "number"),
                       ("bind groups live at end", "bind_groups_live_after", "number"),
                       ("worker JS heap after (MiB)", "js_heap_bytes_after", "mib")]
def cycles_context(analysis, names: Names) -> dict | None:
    """Context of cycles.j2: per ort-run / lifecycle cell, two tables with one row per cycle
    (harness/stats/workloads/cycles.py): its times and calls (:data:`CYCLE_TABLE_COLUMNS`,
    :data:`CYCLE_CALL_COLUMNS`), and what was left after it (:data:`CYCLE_AFTER_COLUMNS`, the RSS
    sampled after it per process type, MiB); and the first cycle beside the median of the later ones.
    Columns no cycle has a value for are left out."""
    n = analysis.workloads.get("cycles")
    if not n:
        return None
    out = []
    for c in n["cells"]:
        parts = []
        for cols in (CYCLE_TABLE_COLUMNS.get(c["workload"], [("cycle", "cycle", "number")]) + CYCLE_CALL_COLUMNS,
                     CYCLE_AFTER_COLUMNS + [(f"{p} RSS after (MiB)", f"rss_bytes_after_{p}", "mib") for p in c["ptypes"]]
                     + [("all processes RSS after (MiB)", "rss_bytes_after_all", "mib"),
                        ("sampling rounds after", "memory_rounds_after", "number")]):
            cols = [col for col in cols if any(not F.missing(r.get(col[1])) for r in c["cycles"])]
            parts.append({"headers": [h for h, _, _ in cols],
                          "rows": [[(r.get(k), fmt) for _, k, fmt in cols] for r in c["cycles"]]})
        out.append({"name": names.cell(c["cell"]), "cell": c["cell"], "row": c["row"], "workload": c["workload"],
                    "tables": parts, "n_later": max(len(c["cycles"]) - 1, 0),
                    "first_vs_later": [(FIGURE_NAMES.get(k, k), v, c["later"].get(k)) for k, v in c["first"].items()
                                       if not F.missing(v)]})
    return {"cells": out, "workloads": sorted({c["workload"] for c in out})}


def sync_context(analysis, names: Names) -> dict | None:
    """Context of sync_latency.j2: harness/stats/workloads/sync_latency.py's rows."""
    n = analysis.workloads.get("sync-latency")
    return None if not n else {"n": n}


def upload_context(analysis, names: Names) -> dict | None:
    """Context of upload.j2: harness/stats/workloads/upload.py's rows, each with its cell's short name."""
    n = analysis.workloads.get("upload")
    if not n:
        return None
    return {"rows": [{**r, "name": names.cell(r["cell"])} for r in n["rows"]], "sizes": n["sizes"]}


def statistics_context(analysis, names: Names) -> dict | None:
    """Context of statistics.j2: estimates, differences, budgets, auto-sampling, manifest."""
    from harness.report.step_wording import step_word
    from harness.stats.estimators import N_RESAMPLES, SEED

    manifest = analysis.tables.manifest
    if not manifest.get("cells"):
        return None
    run = analysis.stats
    groups = list(run.groups.values())
    diffs = [d for d in run.differences if d.metric in HEADLINE or d.significant]
    bounds = [abs(v) for d in diffs for v in (d.rel, d.rel_low, d.rel_high) if v is not None]
    statuses: dict[str, int] = {}
    for c in manifest.get("cells", []):
        statuses[c.get("status")] = statuses.get(c.get("status"), 0) + 1
    return {
        "warmup": run.warmup, "confidence": run.confidence, "n_resamples": N_RESAMPLES, "seed": SEED,
        # what one step is: ``step`` for an app run (its *_per_token metrics are per step)
        "step": step_word(analysis.tables.summary["workload"].unique() if "workload" in analysis.tables.summary else []),
        "budgets": analysis.budgets, "auto": manifest.get("auto_sample"), "groups": groups,
        "metrics": [m for m in HEADLINE if any(m in g.metrics for g in groups)],
        "all_rows": [{"group": g.key.label, "workload": g.key.workload, "metric": m, "e": e}
                     for g in groups for m, e in g.metrics.items()],
        "diffs": diffs, "scale": min(max(bounds, default=1.0), 2.0) or 1.0,
        "sources": manifest.get("merged_from") or [], "manifest": manifest,
        "n_cells": len(manifest.get("cells", [])),
        "statuses": ", ".join(f"{v} {k}" for k, v in statuses.items()),
        "manifest_json": json.dumps({k: v for k, v in manifest.items() if k != "cells"}, indent=2, default=str),
    }


def retention_context(analysis, names: Names) -> dict | None:
    """Context of retention.j2: the retention numbers of cells whose steps are tokens."""
    n = analysis.workloads.get("retention")
    rows = [r for r in (n or {}).get("rows", []) if r["row"]["workload"] not in NOT_TOKENS]
    if not rows:
        return None
    return {"n": {**n, "rows": rows, "engines": sorted({r["row"]["browser"] for r in rows})}}


def numbers_of(section_id: str) -> Callable[[Any, Names], dict | None]:
    """Context function of a workload section: its numbers as ``n`` (None when absent)."""
    def context(analysis, names: Names) -> dict | None:
        n = analysis.workloads.get(section_id)
        return None if n is None else {"n": n}
    return context


def _workload(fn: Callable[[Any, dict], dict]) -> Callable[[Any, dict, Names], dict]:
    """A workload chart function ``fn(tables, numbers)`` as a section's charts function."""
    return lambda analysis, ctx, names: fn(analysis.tables, ctx["n"])


SECTIONS: tuple[Section, ...] = (
    Section("findings", "Findings", "findings.j2", findings_context),
    Section("engines", lambda ctx: f"Engines side by side: memory per {ctx['word']}", "engines.j2", engines_context,
            lambda analysis, ctx, names: charts.engine_charts(ctx["n"], names)),
    Section("per-token", lambda ctx: f"Per {ctx['word']}: bind groups and latency", "per_token.j2", per_token_context,
            lambda analysis, ctx, names: charts.core_charts(analysis, names)),
    Section("cells", "Cells", "cells.j2", cells_context),
    Section("statistics", "Statistics: 95% confidence intervals, differences, budgets", "statistics.j2",
            statistics_context),
    Section("dispatch-overhead", "Dispatch overhead", "dispatch_overhead.j2", numbers_of("dispatch-overhead"),
            _workload(workload_charts.dispatch_charts)),
    Section("sync-latency", "Sync latency: µs per wait for the GPU, per method × pacing × thread", "sync_latency.j2",
            sync_context),
    Section("upload", "Upload: ms per upload, per path and size", "upload.j2", upload_context),
    Section("cycles", lambda ctx: "Cycles: " + " and ".join({"ort-run": "ort-run session cycles",
                                                             "lifecycle": "lifecycle page loads"}.get(w, w)
                                                            for w in ctx["workloads"]), "cycles.j2", cycles_context),
    Section("retention", lambda ctx: "Bind group retention per engine (" + " vs ".join(ctx["n"]["engines"]) + ")",
            "retention.j2", retention_context),
    Section("onnxruntime", "onnxruntime-web (ort-decode)", "onnxruntime.j2", numbers_of("onnxruntime"),
            _workload(workload_charts.onnxruntime_charts)),
    Section("remedies", "Remedies side by side (decode-loop): bind groups, uniform buffers, bytes written, time per token",
            "remedies.j2", numbers_of("remedies")),
    Section("cache-working-set", "Bind group cache: working set (hit rate at every capacity, from one run)",
            "cache_working_set.j2", numbers_of("cache-working-set"), _workload(workload_charts.cache_working_set_charts)),
    Section("memory", "Memory: bounded, growing until collected, or retained", "memory.j2", numbers_of("memory")),
    Section("failures", "WebGPU errors and their consequence", "failures.j2", numbers_of("failures")),
    Section("buffers", "Buffers created, by usage and label", "buffers.j2", numbers_of("buffers")),
    Section("gc-retention", "GC retention calibration (gc-retention): which allocation pattern changes retention",
            "gc_retention.j2", numbers_of("gc-retention"), _workload(workload_charts.gc_retention_charts)),
)
