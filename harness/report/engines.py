"""Memory, engine beside engine: for every memory metric (live bind groups, modeled native bytes,
RSS of the content and of the GPU process, the worker's JS heap) each cell's series over tokens,
grouped one panel per engine (browser, per machine in a merged run), and the growth per token of
every browser × variant with its 95% CI — the numbers of the report's "Engines side by side"
section (charts: harness/report/charts.py ``engine_charts``; markup: reports/templates/engines.j2).

The series are the ones the growth slopes are fitted to (:func:`harness.stats.cells.slope_series`,
here from token 0 so the warm-up shows); the growth is the statistics' own estimate
(harness/stats/run.py: Theil–Sen over every repetition, Sen's CI), chosen, not recomputed.
Chromium's several processes of one type are summed per sampling round (as ``memory.csv``'s
per-type totals); which process type plays which role: :data:`harness.report.findings.PROCESS_ROLES`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from harness.report import format as F
from harness.stats.cells import slope_series
from harness.report.finding import NOT_TOKENS, PROCESS_ROLES, Number, env_row
from harness.report.step_wording import per_step
from harness.stats.run import GroupStats, RunStats, available_metrics


@dataclass(frozen=True)
class MemoryView:
    """One memory metric: ``id`` (chart id suffix), ``title``, ``unit`` of the series
    (``bind groups`` or ``bytes``), and either a fixed growth ``metric`` or a process ``role``
    whose type's ``rss_growth_bytes_per_token_<type>`` applies."""

    id: str
    title: str
    unit: str
    metric: str = ""
    role: str = ""

    def metric_of(self, g: GroupStats | None, metrics: set[str]) -> str | None:
        """The growth metric of this view for a group whose statistics have ``metrics``."""
        if self.metric:
            return self.metric if self.metric in metrics else None
        for ptype in PROCESS_ROLES[self.role]:
            if f"rss_growth_bytes_per_token_{ptype}" in metrics:
                return f"rss_growth_bytes_per_token_{ptype}"
        return None


#: The memory metrics, in the order the report shows them.
VIEWS: tuple[MemoryView, ...] = (
    MemoryView("live_bind_groups", "Live GPUBindGroup wrappers (created − collected)", "bind groups",
               metric="live_bind_groups_growth_per_token"),
    MemoryView("modeled_native", "Modeled native bytes of live bind groups (emulated WebGPU: a model)", "bytes",
               metric="modeled_native_growth_bytes_per_token"),
    MemoryView("content_rss", "RSS of all content processes, summed (renderer / WebKitWebProcess / WebContent; measured, psutil)",
               "bytes", role="content"),
    MemoryView("gpu_rss", "RSS of all GPU processes, summed (gpu-process / WebKitGPUProcess / GPU; measured, psutil)", "bytes",
               role="gpu"),
    MemoryView("js_heap", "Worker JS heap (Chromium DevTools protocol, Runtime.getHeapUsage)", "bytes",
               metric="js_heap_growth_bytes_per_token"),
)


def engine_key(g: GroupStats) -> str:
    """One panel per engine: ``chromium 156``, ``webkit 2.50.1`` (``machine: `` first when merged)."""
    row = env_row(g)
    version = str(row["browser_version"] or "")
    if row["browser"] == "chromium":
        version = version.split(".")[0]
    label = f"{row['browser']} {version}".strip()
    return f"{row['machine']}: {label}" if row["machine"] else label


def setting_label(g: GroupStats) -> str:
    """``decode-loop@tiny`` (and parameters): what the engines are compared on."""
    k = g.key
    params = "" if k.params in ("", "{}") else f" {k.params}"
    return f"{k.workload}@{k.profile}{params}"


def numbers(tables, run: RunStats) -> dict | None:
    """``{"engines": [...], "settings": [{"setting", "engines", "variants", "views": [{"id", "title",
    "unit", "panels": [{"engine", "provenance", "traces": [{cell, variant, repetition, x, y}]}],
    "growth": [{"variant", "cells": {engine: Number | None}}]}]}]}``; None when no engine has a
    memory series. Workloads whose steps are not tokens are left out."""
    groups = [g for g in run.groups.values() if g.cells and g.key.workload not in NOT_TOKENS and not g.key.part]
    if not groups:
        return None
    settings: dict[tuple, list[GroupStats]] = {}
    for g in groups:
        settings.setdefault((g.key.workload, g.key.profile, g.key.params), []).append(g)
    cells = {c.cell: c for c in run.cells}
    # a series is drawn wherever the cells have it, even where too few points gave no slope
    available = {g.key: set(available_metrics(run.ok_cells(g.key))) for g in groups}
    out = []
    for members in settings.values():
        engines = list(dict.fromkeys(engine_key(g) for g in members))
        variants = list(dict.fromkeys(g.key.variant for g in members))
        views = []
        for view in VIEWS:
            panels = {e: {"engine": e, "provenance": "", "traces": []} for e in engines}
            growth = {v: {"variant": v, "cells": {e: None for e in engines}} for v in variants}
            for g in members:
                metric = view.metric_of(g, available[g.key])
                if metric is None:
                    continue
                e = engine_key(g)
                panels[e]["provenance"] = F.provenance(env_row(g))
                if metric in g.metrics:
                    n = Number.of(g.metrics[metric], g.key.label)  # a rate in the workload's step unit
                    growth[g.key.variant]["cells"][e] = replace(n, unit=per_step(n.unit, g.key.workload))
                for cid in g.cells:
                    x, y = slope_series(cells[cid], metric, 0)
                    if len(x):
                        panels[e]["traces"].append({"cell": cid, "variant": g.key.variant,
                                                    "repetition": cells[cid].repetition, "x": x, "y": y})
            if any(p["traces"] for p in panels.values()):
                views.append({"id": view.id, "title": view.title, "unit": view.unit, "panels": list(panels.values()),
                              "growth": list(growth.values())})
        if views:
            out.append({"setting": setting_label(members[0]), "engines": engines, "variants": variants, "views": views})
    if not out:
        return None
    return {"engines": list(dict.fromkeys(e for s in out for e in s["engines"])), "settings": out}
