"""The report's sections after the core summary and charts, in order: one explicit tuple.

A :class:`Section` names its template (reports/templates/<template>), how to get its context
from an analysis (harness/pipeline.py ``Analysis``: tables, stats, budgets and the workload
numbers of harness/stats/workloads/) and which charts it draws (harness/report/charts.py).
A section whose context is None is left out (the run has nothing for it). Sections compute
nothing: the analysis did.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from harness.report import charts
from harness.stats.metrics import HEADLINE


@dataclass(frozen=True)
class Section:
    """``id`` (HTML anchor), ``title`` (text, or a function of the context), ``template``,
    ``context(analysis) -> dict | None`` and ``charts(tables, numbers) -> {id: figure}``."""

    id: str
    title: str | Callable[[dict], str]
    template: str
    context: Callable[[Any], dict | None]
    charts: Callable[[Any, dict], dict] | None = None

    def heading(self, ctx: dict) -> str:
        """The section's title for this context."""
        return self.title(ctx) if callable(self.title) else self.title


def statistics_context(analysis) -> dict | None:
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


def numbers_of(section_id: str) -> Callable[[Any], dict | None]:
    """Context function of a workload section: its numbers as ``n`` (None when absent)."""
    def context(analysis) -> dict | None:
        n = analysis.workloads.get(section_id)
        return None if n is None else {"n": n}
    return context


SECTIONS: tuple[Section, ...] = (
    Section("statistics", "Statistics: 95% confidence intervals, differences, budgets", "statistics.j2",
            statistics_context),
    Section("dispatch-overhead", "Dispatch overhead", "dispatch_overhead.j2", numbers_of("dispatch-overhead"),
            charts.dispatch_charts),
    Section("retention", lambda ctx: "Bind group retention per engine (" + " vs ".join(ctx["n"]["engines"]) + ")",
            "retention.j2", numbers_of("retention"), charts.retention_charts),
    Section("onnxruntime", "onnxruntime-web (ort-decode)", "onnxruntime.j2", numbers_of("onnxruntime"),
            charts.onnxruntime_charts),
    Section("memory", "Memory: bounded, growing until collected, or retained", "memory.j2", numbers_of("memory")),
    Section("gc-retention", "GC retention calibration (gc-retention): which allocation pattern changes retention",
            "gc_retention.j2", numbers_of("gc-retention"), charts.gc_retention_charts),
)
