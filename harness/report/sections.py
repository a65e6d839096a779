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
from harness.report.charts import Names
from harness.report.finding import NOT_TOKENS
from harness.stats.metrics import HEADLINE


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
#: dispatch-overhead in its own terms: rounds, µs per dispatch per method, single-op ÷ sequential.
DISPATCH_COLUMNS = [("rounds", "tokens", "number"), ("steps (method runs)", "steps_received", "number"),
                    ("single-op µs / dispatch", "us_single-op", "mean_interval"),
                    ("sequential µs / dispatch", "us_sequential", "mean_interval"),
                    ("batched-16 µs / dispatch", "us_batched-16", "mean_interval"),
                    ("one-pass µs / dispatch", "us_one-pass", "mean_interval"),
                    ("single-op ÷ sequential", "factor", "mean_interval")]


def cells_context(analysis, names: Names) -> dict | None:
    """Context of cells.j2: one table per workload, with that workload's own columns
    (:data:`TOKEN_COLUMNS`, :data:`DISPATCH_COLUMNS`; gc-retention adds its collection events)."""
    s = analysis.tables.summary
    if not len(s):
        return None
    retention, methods = _retention_by_cell(analysis), _methods_by_cell(analysis)
    tables = []
    for workload, grp in s.groupby("workload", sort=False):
        if workload == "dispatch-overhead":
            cols = DISPATCH_COLUMNS
        else:
            cols = list(TOKEN_COLUMNS)
            if workload == "gc-retention":
                cols.insert(6, ("collection events", "gc_events", "number"))
        rows = []
        for _, r in grp.iterrows():
            row = r.to_dict()
            row["progress"] = f"{r['steps_received']}/{r['tokens']}"
            row["gc_events"] = (retention.get(r["cell"]) or {}).get("gc_events")
            m = methods.get(r["cell"]) or {}
            for c, v in (m.get("per") or {}).items():
                row[f"us_{c}"] = v
            row["factor"] = m.get("factor")
            rows.append({"row": row, "name": names.of(r), "values": [(row.get(k), fmt) for _, k, fmt in cols]})
        tables.append({"workload": workload, "headers": [h for h, _, _ in cols], "rows": rows,
                       "vary_profile": names.vary["profile"]})
    failed = int((s["status"].isin(["failed", "device-lost"])).sum())
    return {"tables": tables, "n": len(s), "failed": failed}


def statistics_context(analysis, names: Names) -> dict | None:
    """Context of statistics.j2: estimates, differences, budgets, auto-sampling, manifest."""
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
        "budgets": analysis.budgets, "auto": manifest.get("auto_sample"), "groups": groups,
        "metrics": [m for m in HEADLINE if any(m in g.metrics for g in groups)],
        "all_rows": [{"group": g.key.label, "metric": m, "e": e} for g in groups for m, e in g.metrics.items()],
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
    Section("engines", "Engines side by side: memory per token", "engines.j2", engines_context,
            lambda analysis, ctx, names: charts.engine_charts(ctx["n"], names)),
    Section("per-token", "Per token: bind groups and latency", "per_token.j2", per_token_context,
            lambda analysis, ctx, names: charts.core_charts(analysis, names)),
    Section("cells", "Cells", "cells.j2", cells_context),
    Section("statistics", "Statistics: 95% confidence intervals, differences, budgets", "statistics.j2",
            statistics_context),
    Section("dispatch-overhead", "Dispatch overhead", "dispatch_overhead.j2", numbers_of("dispatch-overhead"),
            _workload(workload_charts.dispatch_charts)),
    Section("retention", lambda ctx: "Bind group retention per engine (" + " vs ".join(ctx["n"]["engines"]) + ")",
            "retention.j2", retention_context),
    Section("onnxruntime", "onnxruntime-web (ort-decode)", "onnxruntime.j2", numbers_of("onnxruntime"),
            _workload(workload_charts.onnxruntime_charts)),
    Section("memory", "Memory: bounded, growing until collected, or retained", "memory.j2", numbers_of("memory")),
    Section("gc-retention", "GC retention calibration (gc-retention): which allocation pattern changes retention",
            "gc_retention.j2", numbers_of("gc-retention"), _workload(workload_charts.gc_retention_charts)),
)
