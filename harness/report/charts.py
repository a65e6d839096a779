"""Every chart of the report, as plotly figure dicts built from an analysis' tables and numbers.

Charts draw what the analysis computed (harness/pipeline.py): per-token series from the tables,
CI bands from :func:`harness.stats.run.chart_bands`, workload numbers from
harness/stats/workloads/. Each trace's name says where it came from (browser + version, adapter,
real or emulated WebGPU); ``meta`` carries the cell id and variant for tests and tooltips.
"""

from __future__ import annotations

import json

import plotly.graph_objects as go

from harness.report import format as F

_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]


def _fig(fig: go.Figure) -> dict:
    return json.loads(fig.to_json())


def _rgba(color: str, alpha: float) -> str:
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def trace_name(row) -> str:
    """``decode-loop/fresh [tiny] r0 — chromium 156 · … · real WebGPU``."""
    profile = row["profile"] if isinstance(row["profile"], str) and row["profile"] else "default"
    return f"{row['workload']}/{row['variant']} [{profile}] r{row['repetition']} — {F.provenance(row)}"


def add_bands(fig: go.Figure, bands: list, warmup: int) -> None:
    """CI bands on a per-token chart: the shaded warm-up, per group the t-band across
    repetitions and the headline estimate's 95% CI (or the Theil–Sen growth line)."""
    if not bands:
        return
    if warmup > 0:
        fig.add_vrect(x0=-0.5, x1=warmup - 0.5, fillcolor="#999", opacity=0.15, line_width=0,
                      annotation_text="warm-up (excluded)", annotation_position="top left")
    for i, b in enumerate(bands):
        color = _COLORS[i % len(_COLORS)]
        if b.x:
            fig.add_trace(go.Scatter(x=b.x + b.x[::-1], y=b.high + b.low[::-1], fill="toself", mode="lines",
                                     line={"width": 0}, fillcolor=_rgba(color, 0.18), hoverinfo="skip",
                                     name=f"{b.group}: 95% CI of the mean over {b.n_reps} repetitions",
                                     meta={"band": "repetitions", "group": b.group, "variant": b.variant}))
        e = b.estimate
        if e is None:
            continue
        if e.kind == "slope":
            x = [b.x0, b.x1]
            fig.add_trace(go.Scatter(x=x, y=[b.intercept + e.value * v for v in x], mode="lines",
                                     line={"dash": "dash", "color": color},
                                     name=f"{b.group}: growth {F.estimate(e)} {e.unit}",
                                     meta={"band": "slope", "group": b.group, "variant": b.variant, "metric": e.metric}))
            continue
        lo, hi = (e.ci_low, e.ci_high) if e.ci_low is not None else (e.value, e.value)
        fig.add_trace(go.Scatter(x=[b.x0, b.x1, b.x1, b.x0], y=[lo, lo, hi, hi], fill="toself", mode="lines",
                                 line={"width": 0}, fillcolor=_rgba(color, 0.25), hoverinfo="skip",
                                 name=f"{b.group}: {e.stat} {F.estimate(e)} {e.unit} (95% CI)",
                                 meta={"band": "estimate", "group": b.group, "variant": b.variant, "metric": e.metric,
                                       "value": e.value, "ci_low": e.ci_low, "ci_high": e.ci_high}))
        fig.add_trace(go.Scatter(x=[b.x0, b.x1], y=[e.value, e.value], mode="lines",
                                 line={"dash": "dot", "color": color, "width": 1}, showlegend=False, hoverinfo="skip",
                                 name=f"{b.group}: {e.stat}", meta={"band": "estimate-line", "group": b.group,
                                                                    "variant": b.variant}))


def line_chart(tables, column: str, title: str, ytitle: str, bands: list | None = None, warmup: int = 1) -> dict:
    """One trace per cell of steps.csv ``column`` over tokens, plus ``bands``."""
    fig = go.Figure()
    for _, row in tables.summary.iterrows():
        s = tables.steps[tables.steps["cell"] == row["cell"]]
        if not len(s) or column not in s or s[column].isna().all():
            continue
        fig.add_trace(go.Scatter(x=s["step"].tolist(), y=s[column].tolist(), mode="lines+markers",
                                 marker={"size": 3}, name=trace_name(row),
                                 meta={"cell": row["cell"], "variant": row["variant"]}))
    add_bands(fig, bands or [], warmup)
    fig.update_layout(title=title, xaxis_title="token", yaxis_title=ytitle, template="plotly_white",
                      legend={"orientation": "h", "y": -0.25}, margin={"t": 50})
    return _fig(fig)


def memory_chart(tables) -> dict:
    """RSS per process type (summed over that type's processes per sampling round) over time."""
    from harness.tables import process_type_totals

    fig = go.Figure()
    mem = process_type_totals(tables.memory)
    for _, row in tables.summary.iterrows():
        m = mem[mem["cell"] == row["cell"]]
        for ptype, grp in m.groupby("process_type"):
            fig.add_trace(go.Scatter(x=grp["time_s"].tolist(), y=(grp["rss_bytes"] / 2**20).round(2).tolist(),
                                     mode="lines", name=f"{ptype} RSS — {trace_name(row)}",
                                     meta={"cell": row["cell"], "variant": row["variant"], "process_type": ptype}))
    fig.update_layout(title="Memory per process type (RSS summed over that type's processes, psutil) over time",
                      xaxis_title="run time (s)", yaxis_title="MiB", template="plotly_white",
                      legend={"orientation": "h", "y": -0.25})
    return _fig(fig)


def collection_marks(tables, events: dict) -> list[dict]:
    """Traces marking collection events on the per-token latency chart: per cell, a marker at each
    token with a collection event (``events``: cell → {"natural", "forced"} tokens, from
    harness/stats/workloads/memory.py) at that token's wall ms."""
    out = []
    for cell, ev in (events or {}).items():
        s = tables.steps[tables.steps["cell"] == cell].set_index("step")
        for kind, symbol in (("natural", "x"), ("forced", "star")):
            toks = [t for t in ev.get(kind, []) if t in s.index and s.loc[t, "wall_ms"] == s.loc[t, "wall_ms"]]
            if not toks:
                continue
            what = "collection event" if kind == "natural" else "forced collection (--gc-checkpoints)"
            out.append(_fig(go.Figure(go.Scatter(
                x=toks, y=[float(s.loc[t, "wall_ms"]) for t in toks], mode="markers",
                marker={"symbol": symbol, "size": 8, "color": "#b3261e"}, name=f"{what} — {cell}",
                meta={"cell": cell, "marks": kind})))["data"][0])
    return out


def core_charts(analysis) -> dict[str, dict]:
    """The four charts every report has: chart id → figure."""
    t, bands, w = analysis.tables, analysis.bands, analysis.stats.warmup
    charts = _core_charts(t, bands, w)
    charts["ms_per_token"]["data"] += collection_marks(t, (analysis.workloads.get("memory") or {}).get("events"))
    return charts


def _core_charts(t, bands, w) -> dict[str, dict]:
    return {
        "bind_groups_per_token": line_chart(t, "create_bind_group", "createBindGroup calls per token", "calls",
                                            bands.get("create_bind_group"), w),
        "live_bind_groups": line_chart(t, "bind_groups_live", "Live GPUBindGroup wrappers (created − collected)",
                                       "bind groups", bands.get("bind_groups_live"), w),
        "memory": memory_chart(t),
        "ms_per_token": line_chart(t, "wall_ms", "Per-token latency (wall time to the token's sync)", "ms",
                                   bands.get("wall_ms"), w),
    }


# --- dispatch overhead -------------------------------------------------------------------------

def dispatch_label(entry: dict) -> str:
    """A dispatch-overhead row's label: provenance · adapter class · bind group mode."""
    return f"{F.provenance(entry['row'])} · {entry['adapter_class']} · bind groups {entry['row'].get('variant')}"


def dispatch_charts(tables, numbers: dict) -> dict[str, dict]:
    """``dispatch_methods`` (µs per dispatch per method, 95% CI, log y) and ``dispatch_phases``
    (stacked per-phase µs with the sequential method's µs as a marker)."""
    charts = {}
    if numbers["methods"]:
        fig = go.Figure()
        for m in numbers["methods"]:
            cfgs = [c for c in m["configs"] if m["per"].get(c, (None,))[0] is not None]
            ys = [m["per"][c][0] for c in cfgs]
            hi = [(m["per"][c][2] - m["per"][c][0]) if m["per"][c][2] is not None else 0 for c in cfgs]
            lo = [(m["per"][c][0] - m["per"][c][1]) if m["per"][c][1] is not None else 0 for c in cfgs]
            fig.add_trace(go.Bar(x=cfgs, y=ys, name=dispatch_label(m), meta={"cell": m["cell"]},
                                 error_y={"type": "data", "array": hi, "arrayminus": lo, "visible": True}))
        fig.update_layout(barmode="group", title="µs per dispatch by method (mean, 95% CI)", yaxis_type="log",
                          yaxis_title="µs per dispatch", template="plotly_white", legend={"orientation": "h", "y": -0.3})
        charts["dispatch_methods"] = _fig(fig)
    phases = numbers["phases"]
    if phases:
        fig = go.Figure()
        xs: list[str] = []
        for p in phases:
            r = p["row"]
            x = f"{r['browser']} · {r['variant']}<br>{p['adapter_class'].split(' —')[0]}"
            xs.append(x if x not in xs else f"{x} #{sum(1 for y in xs if y.startswith(x)) + 1}")
        for key, name in numbers["phase_names"].items():
            fig.add_trace(go.Bar(x=xs, y=[p["phases"].get(key) or 0 for p in phases], name=name,
                                 meta={"phase": key, "cells": [p["cell"] for p in phases],
                                       "labels": [dispatch_label(p) for p in phases]}))
        fig.add_trace(go.Scatter(x=xs, y=[p["sequential_us"] for p in phases], mode="markers",
                                 name="sequential method, µs per dispatch (wall, incl. sync)",
                                 marker={"symbol": "diamond", "size": 11, "color": "black"},
                                 meta={"phase": "sequential_total"}))
        fig.update_layout(barmode="stack", title="Per-phase CPU time of the sequential method (µs per call; mean over "
                                                 "rounds after warm-up)", yaxis_title="µs", template="plotly_white",
                          legend={"orientation": "h", "y": -0.25}, margin={"t": 50})
        charts["dispatch_phases"] = _fig(fig)
    return charts


# --- retention and onnxruntime -----------------------------------------------------------------

def retention_charts(tables, numbers: dict) -> dict[str, dict]:
    """``retention_live`` (live wrappers per token, every cell) and ``retention_memory``
    (modeled native MiB under emulation; measured content-process RSS MiB)."""
    from harness.stats.workloads.retention import content_rss_by_token

    live_fig, mem_fig = go.Figure(), go.Figure()
    st = tables.steps
    for r in numbers["rows"]:
        row = r["row"]
        c = st[st["cell"] == r["cell"]].sort_values("step")
        name = f"{row['workload']}/{row['variant']} — {F.provenance(row)}"
        meta = {"cell": r["cell"], "variant": row["variant"], "browser": row["browser"]}
        live_fig.add_trace(go.Scatter(x=c["step"].tolist(), y=c["bind_groups_live"].tolist(), mode="lines",
                                      name=f"live wrappers — {name}", meta=meta))
        if r["emulated"]:
            mem_fig.add_trace(go.Scatter(x=c["step"].tolist(), y=(c["modeled_native_bytes"] / 2**20).round(3).tolist(),
                                         mode="lines", name=f"modeled native MiB (emulated) — {name}", meta=meta))
        rss = content_rss_by_token(tables, r["cell"])
        if len(rss):
            mem_fig.add_trace(go.Scatter(x=rss.index.tolist(), y=(rss / 2**20).round(2).tolist(), mode="lines+markers",
                                         marker={"size": 3}, name=f"content process RSS MiB (measured) — {name}",
                                         line={"dash": "dot"}, meta=meta))
    for fig, title, ytitle in ((live_fig, "Live GPUBindGroup wrappers per token, every engine", "bind groups"),
                               (mem_fig, "Modeled native memory of live bind groups (emulated) and content-process RSS "
                                         "(measured)", "MiB")):
        fig.update_layout(title=title, xaxis_title="token", yaxis_title=ytitle, template="plotly_white",
                          legend={"orientation": "h", "y": -0.25})
    return {"retention_live": _fig(live_fig), "retention_memory": _fig(mem_fig)}


def onnxruntime_charts(tables, numbers: dict) -> dict[str, dict]:
    """``ort_cache_hit_rate``: the bind group cache's hit rate per token, when any cell has one."""
    fig = go.Figure()
    st = tables.steps
    for r in numbers["rows"]:
        row = r["row"]
        c = st[st["cell"] == r["cell"]].sort_values("step")
        if "extra_bind_group_cache_hit_rate" in c and c["extra_bind_group_cache_hit_rate"].notna().any():
            fig.add_trace(go.Scatter(x=c["step"].tolist(), y=c["extra_bind_group_cache_hit_rate"].tolist(),
                                     mode="lines+markers", marker={"size": 3},
                                     name=f"{row['variant']} [{row['profile']}] — {F.provenance(row)}",
                                     meta={"cell": r["cell"], "variant": row["variant"]}))
    if not fig.data:
        return {}
    fig.update_layout(title="Bind group cache hit rate per token (workloads/lib/bind-group-cache.js)", xaxis_title="token",
                      yaxis_title="hits / (hits + misses)", yaxis_range=[0, 1.02], template="plotly_white",
                      legend={"orientation": "h", "y": -0.25})
    return {"ort_cache_hit_rate": _fig(fig)}


# --- gc-retention -------------------------------------------------------------------------------

def _variant_color(variant: str, order: list[str]) -> str:
    i = order.index(variant) if variant in order else len(order) + sum(map(ord, variant))
    return _COLORS[i % len(_COLORS)]


def _engine_group(row) -> dict:
    """Legend group per engine, titled with its provenance, so trace names can stay short."""
    version = str(row.get("browser_version") or "")
    if row.get("browser") == "chromium":
        version = version.split(".")[0]
    title = f"{row['browser']} {version}<br>{row.get('adapter') or 'no adapter'} · {row.get('webgpu')} WebGPU"
    return {"legendgroup": F.provenance(row), "legendgrouptitle": {"text": title}}


_LEGEND_RIGHT = {"legend": {"orientation": "v", "x": 1.02, "y": 1, "font": {"size": 10}, "groupclick": "toggleitem",
                            "traceorder": "grouped"}}


def gc_retention_charts(tables, numbers: dict) -> dict[str, dict]:
    """``gc_retention_live`` (live wrappers, log y, beside the field report's figures) and
    ``gc_retention_modeled`` (modeled native MB under emulation, with the 2,048 MB kill line)."""
    from harness.stats.workloads.gc_retention import VARIANT_ORDER

    s, st = tables.summary, tables.steps
    cells = s[s["cell"].isin(numbers["cells"])]
    field = numbers["field"]
    live_fig, mem_fig = go.Figure(), go.Figure()
    for _, row in cells.iterrows():
        c = st[st["cell"] == row["cell"]].sort_values("step") if len(st) else st
        if not len(c):
            continue
        name = f"{row['variant']} r{row['repetition']}"
        meta = {"cell": row["cell"], "variant": row["variant"], "browser": row["browser"],
                "provenance": F.provenance(row)}
        color = _variant_color(row["variant"], VARIANT_ORDER)
        live_fig.add_trace(go.Scatter(x=c["step"].tolist(), y=c["bind_groups_live"].clip(lower=1).tolist(), mode="lines",
                                      name=name, line={"dash": "dot" if row["webgpu"] == "real" else "solid", "color": color},
                                      meta=meta, **_engine_group(row)))
        if row["webgpu"] == "emulated" and c["modeled_native_bytes"].notna().any():
            mem_fig.add_trace(go.Scatter(x=c["step"].tolist(), y=(c["modeled_native_bytes"] / 10**6).round(2).tolist(),
                                         mode="lines", name=name, line={"color": color}, meta=meta, **_engine_group(row)))
    lo, hi = field["live_with_forced_gc"]
    x_max = int(st[st["cell"].isin(numbers["cells"])]["step"].max()) if len(st) and len(live_fig.data) else 1
    ref = {"legendgroup": "field-report", "legendgrouptitle": {"text": "onnxruntime #33750, Safari<br>(reported, not "
                                                                      "measured here)"},
           "mode": "lines", "hoverinfo": "name"}
    live_fig.add_trace(go.Scatter(x=[0, x_max], y=[hi, hi], line={"width": 0}, showlegend=False, **ref))
    live_fig.add_trace(go.Scatter(x=[0, x_max], y=[lo, lo], line={"width": 0}, fill="tonexty",
                                  fillcolor="rgba(44,160,44,0.15)",
                                  name=f"forced GC every {field['forced_gc_every']} tokens: {lo:,}–{hi:,}", **ref))
    live_fig.add_trace(go.Scatter(x=[0, x_max], y=[field["live_at_kill"]] * 2, line={"dash": "dash", "color": "red"},
                                  name=f"no workaround: ~{field['live_at_kill']:,} at the iOS kill", **ref))
    live_fig.update_layout(title="gc-retention: live GPUBindGroup wrappers per token (log scale; 0 drawn as 1), beside "
                                 "the field report", xaxis_title="token", yaxis_title="live bind groups", yaxis_type="log",
                           template="plotly_white", **_LEGEND_RIGHT)
    charts = {"gc_retention_live": _fig(live_fig)}
    if mem_fig.data:
        mem_fig.add_hline(y=field["kill_mb"], line_dash="dash", line_color="red",
                          annotation_text="2,048 MB: iOS killed the page (reported, not measured here)",
                          annotation_position="top left")
        mem_fig.update_layout(title="gc-retention: modeled native memory of live bind groups (emulated WebGPU, a model)",
                              xaxis_title="token", yaxis_title="MB (modeled)", template="plotly_white", **_LEGEND_RIGHT)
        charts["gc_retention_modeled"] = _fig(mem_fig)
    return charts
