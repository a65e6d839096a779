"""Charts of the workload sections (numbers: harness/stats/workloads/): dispatch overhead per
method and per phase, the onnxruntime bind group cache's hit rate, and gc-retention's live bind
groups beside the field report. Same conventions as harness/report/charts.py: short trace
names, provenance in the hover text and ``meta``, long series reduced for drawing.
"""

from __future__ import annotations

import plotly.graph_objects as go

from harness.report import format as F
from harness.report import reduce as R
from harness.report.charts import _LAYOUT, COLORS, fig_dict


def dispatch_label(entry: dict) -> str:
    """A dispatch-overhead row's full label: provenance · adapter class · bind group mode."""
    return f"{F.provenance(entry['row'])} · {entry['adapter_class']} · bind groups {entry['row'].get('variant')}"


def _dispatch_short(entry: dict) -> str:
    r = entry["row"]
    machine = f"{r['machine']}:" if not F.missing(r.get("machine")) and r.get("machine") else ""
    return f"{r.get('variant')} · {machine}{r.get('browser')}"


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
            fig.add_trace(go.Bar(x=cfgs, y=ys, name=_dispatch_short(m), meta={"cell": m["cell"], "label": dispatch_label(m)},
                                 hovertemplate=f"<b>{_dispatch_short(m)}</b><br>{dispatch_label(m)}<br>"
                                               "%{x}: %{y:.4g} µs per dispatch<extra></extra>",
                                 error_y={"type": "data", "array": hi, "arrayminus": lo, "visible": True}))
        fig.update_layout(barmode="group", title={"text": "µs per dispatch by method (mean, 95% CI)", "y": 0.98,
                                                  "yanchor": "top"},
                          yaxis_type="log", yaxis_title="µs per dispatch", height=420, **_LAYOUT)
        charts["dispatch_methods"] = fig_dict(fig)
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
        fig.update_layout(barmode="stack", title={"text": "Per-phase CPU time of the sequential method (µs per call; "
                                                          "mean over rounds after warm-up)", "y": 0.98, "yanchor": "top"},
                          yaxis_title="µs", height=440, **_LAYOUT)
        charts["dispatch_phases"] = fig_dict(fig)
    return charts


def onnxruntime_charts(tables, numbers: dict) -> dict[str, dict]:
    """``ort_cache_hit_rate``: the bind group cache's hit rate per token, when any cell has one."""
    fig = go.Figure()
    st = tables.steps
    for r in numbers["rows"]:
        row = r["row"]
        c = st[st["cell"] == r["cell"]].sort_values("step")
        if "extra_bind_group_cache_hit_rate" in c and c["extra_bind_group_cache_hit_rate"].notna().any():
            x, y = R.series(c["step"], c["extra_bind_group_cache_hit_rate"])
            name = f"{row['variant']} · {row['browser']}"
            fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=name,
                                     hovertemplate=f"<b>{name}</b> r{row['repetition']}<br>{F.provenance(row)}<br>"
                                                   "token %{x}: %{y:.3f}<extra></extra>",
                                     meta={"cell": r["cell"], "variant": row["variant"], "provenance": F.provenance(row)}))
    if not fig.data:
        return {}
    fig.update_layout(title={"text": "Bind group cache hit rate per token (workloads/lib/bind-group-cache.js)", "y": 0.98,
                             "yanchor": "top"},
                      xaxis_title="token", yaxis_title="hits / (hits + misses)", yaxis_range=[0, 1.02], height=400,
                      **_LAYOUT)
    return {"ort_cache_hit_rate": fig_dict(fig)}


def cache_working_set_charts(tables, numbers: dict) -> dict[str, dict]:
    """``cache_hit_curve``: each cell's predicted hit rate against the cache capacity (log x), and
    the measured hit rate of each cell at its own capacity (markers: a sweep's points)."""
    fig = go.Figure()
    for i, r in enumerate(numbers["rows"]):
        if not r["curve"]:
            continue
        row = r["row"]
        name = f"{row['variant']} · {row['browser']}" + (f" · cap {r['capacity']}" if r.get("sweep") else "")
        color = COLORS[i % len(COLORS)]
        x, y = zip(*r["curve"])
        fig.add_trace(go.Scatter(x=list(x), y=list(y), mode="lines", line={"shape": "hv", "color": color}, name=name,
                                 hovertemplate=f"<b>{name}</b><br>{F.provenance(row)}<br>capacity %{{x}}: %{{y:.4f}} predicted<extra></extra>",
                                 meta={"cell": r["cell"], "provenance": F.provenance(row)}))
        if r.get("measured") is not None and r.get("capacity"):
            fig.add_trace(go.Scatter(x=[r["capacity"]], y=[r["measured"]], mode="markers", showlegend=False,
                                     marker={"color": color, "size": 9, "symbol": "x"},
                                     hovertemplate=f"<b>{name}</b><br>capacity %{{x}}: %{{y:.4f}} measured<extra></extra>"))
    if not fig.data:
        return {}
    fig.update_layout(title={"text": "Bind group cache hit rate by capacity, predicted from one run's reuse distances "
                                      "(× measured)", "y": 0.98, "yanchor": "top"},
                      xaxis_title="capacity (entries)", xaxis_type="log", yaxis_title="hits / lookups (steady tokens)",
                      yaxis_range=[0, 1.02], height=420, **_LAYOUT)
    return {"cache_hit_curve": fig_dict(fig)}


def _variant_color(variant: str, order: list[str]) -> str:
    i = order.index(variant) if variant in order else len(order) + sum(map(ord, variant))
    return COLORS[i % len(COLORS)]


def _engine_group(row) -> dict:
    """Legend group per engine, titled with its provenance, so trace names can stay short."""
    version = str(row.get("browser_version") or "")
    if row.get("browser") == "chromium":
        version = version.split(".")[0]
    title = f"{row['browser']} {version} · {row.get('webgpu')} WebGPU"
    return {"legendgroup": F.provenance(row), "legendgrouptitle": {"text": title}}


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
        hover = f"<b>{name}</b><br>{F.provenance(row)}<br>token %{{x}}: %{{y}}<extra></extra>"
        color = _variant_color(row["variant"], VARIANT_ORDER)
        x, y = R.series(c["step"], c["bind_groups_live"].clip(lower=1))
        live_fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=name, hovertemplate=hover,
                                      line={"dash": "dot" if row["webgpu"] == "real" else "solid", "color": color},
                                      meta=meta, **_engine_group(row)))
        if row["webgpu"] == "emulated" and c["modeled_native_bytes"].notna().any():
            x, y = R.series(c["step"], (c["modeled_native_bytes"] / 10**6).round(2))
            mem_fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=name, line={"color": color}, meta=meta,
                                         hovertemplate=hover, **_engine_group(row)))
    lo, hi = field["live_with_forced_gc"]
    x_max = int(st[st["cell"].isin(numbers["cells"])]["step"].max()) if len(st) and len(live_fig.data) else 1
    ref = {"legendgroup": "field-report", "legendgrouptitle": {"text": "onnxruntime #33750, Safari (reported, not "
                                                                      "measured here)"},
           "mode": "lines", "hoverinfo": "name"}
    live_fig.add_trace(go.Scatter(x=[0, x_max], y=[hi, hi], line={"width": 0}, showlegend=False, **ref))
    live_fig.add_trace(go.Scatter(x=[0, x_max], y=[lo, lo], line={"width": 0}, fill="tonexty",
                                  fillcolor="rgba(44,160,44,0.15)",
                                  name=f"forced GC every {field['forced_gc_every']} tokens: {lo:,}–{hi:,}", **ref))
    live_fig.add_trace(go.Scatter(x=[0, x_max], y=[field["live_at_kill"]] * 2, line={"dash": "dash", "color": "red"},
                                  name=f"no workaround: ~{field['live_at_kill']:,} at the iOS kill", **ref))
    legend = {**_LAYOUT["legend"], "groupclick": "toggleitem"}
    layout = {**_LAYOUT, "legend": legend}
    live_fig.update_layout(title={"text": "gc-retention: live GPUBindGroup wrappers per token (log scale; 0 drawn as 1), "
                                          "beside the field report", "y": 0.98, "yanchor": "top"},
                           xaxis_title="token", yaxis_title="live bind groups", yaxis_type="log", height=480, **layout)
    charts = {"gc_retention_live": fig_dict(live_fig)}
    if mem_fig.data:
        mem_fig.add_hline(y=field["kill_mb"], line_dash="dash", line_color="red",
                          annotation_text="2,048 MB: iOS killed the page (reported, not measured here)",
                          annotation_position="top left")
        mem_fig.update_layout(title={"text": "gc-retention: modeled native memory of live bind groups (emulated WebGPU, "
                                             "a model)", "y": 0.98, "yanchor": "top"},
                              xaxis_title="token", yaxis_title="MB (modeled)", height=440, **layout)
        charts["gc_retention_modeled"] = fig_dict(mem_fig)
    return charts
