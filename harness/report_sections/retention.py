"""Report sections "Bind group retention (Chromium vs WebKit)" and "onnxruntime-web".

Retention: per cell, live GPUBindGroup wrappers over tokens, collection events (steps in which
the engine's GC collected bind groups — the sudden drops), modeled native memory of live bind
groups under emulated WebGPU and measured content-process RSS, and the token at which
``--memory-budget`` would have been exceeded. The onnxruntime field report's Safari figures
(references.md: microsoft/onnxruntime #33750) are shown beside ours, labelled as reported there,
never as measured here.

onnxruntime-web: the ``ort-decode`` cells side by side per variant, with the bind group cache
shim's per-token hit rate.
"""

from __future__ import annotations

import html
import json

import pandas as pd
import plotly.graph_objects as go

from harness import report
from harness.tables import CONTENT_PROCESS_TYPES

#: What the onnxruntime field report saw in Safari (references.md). Reported, not measured here.
FIELD_REPORT = {
    "source": "onnxruntime field report (microsoft/onnxruntime #33750): Safari, iPhone 16 Pro Max, iOS 27.2, "
              "Transformers.js 4.3.2 + onnxruntime-web 1.31.0-dev.20260914, 1.7B q4f16 model",
    "bind_groups_per_token": 317,
    "live_at_kill": 150_000,
    "kill_bytes": 2_048 * 10**6,
    "live_with_forced_gc": (250, 7_000),
}


def _mib(v) -> str:
    """Bytes as MiB with one decimal, '—' when unknown."""
    return "—" if v is None or pd.isna(v) else f"{v / 2**20:,.1f}"


def _esc(v) -> str:
    return html.escape(report._fmt(v))


def gc_events(steps: pd.DataFrame) -> tuple[int, float | None]:
    """(number of steps in which bind groups were collected, mean bind groups collected in such
    a step) for one cell's steps.csv rows, ordered by step."""
    d = steps["bind_groups_collected"].diff().fillna(steps["bind_groups_collected"].iloc[0] if len(steps) else 0)
    events = d[d > 0]
    return int(len(events)), (float(events.mean()) if len(events) else None)


def _content_rss_by_token(tables, cell: str) -> pd.Series:
    m = tables.memory
    m = m[(m["cell"] == cell) & (m["source"] == "psutil") & m["process_type"].isin(CONTENT_PROCESS_TYPES)]
    if not len(m):
        return pd.Series(dtype=float)
    return m.dropna(subset=["token"]).groupby("token")["rss_bytes"].max()


@report.section
def retention(tables) -> dict | None:
    s, st = tables.summary, tables.steps
    cells = s[s["cell"].isin(set(st["cell"]))] if len(st) else s.iloc[0:0]
    if not len(cells):
        return None
    live_fig, mem_fig = go.Figure(), go.Figure()
    rows = []
    for _, row in cells.iterrows():
        c = st[st["cell"] == row["cell"]].sort_values("step")
        name = f"{row['workload']}/{row['variant']} — {report.provenance(row)}"
        meta = {"cell": row["cell"], "variant": row["variant"], "browser": row["browser"]}
        live_fig.add_trace(go.Scatter(x=c["step"].tolist(), y=c["bind_groups_live"].tolist(), mode="lines",
                                      name=f"live wrappers — {name}", meta=meta))
        emulated = row["webgpu"] == "emulated" and c["modeled_native_bytes"].notna().any()
        if emulated:
            mem_fig.add_trace(go.Scatter(x=c["step"].tolist(), y=(c["modeled_native_bytes"] / 2**20).round(3).tolist(),
                                         mode="lines", name=f"modeled native MiB (emulated) — {name}", meta=meta))
        rss = _content_rss_by_token(tables, row["cell"])
        if len(rss):
            mem_fig.add_trace(go.Scatter(x=rss.index.tolist(), y=(rss / 2**20).round(2).tolist(), mode="lines+markers",
                                         marker={"size": 3}, name=f"content process RSS MiB (measured) — {name}",
                                         line={"dash": "dot"}, meta=meta))
        n_events, per_event = gc_events(c)
        created = c["create_bind_group"].iloc[1:].median() if len(c) > 1 else None
        rows.append({
            "cell": row["cell"], "source": report.provenance(row), "variant": row["variant"], "workload": row["workload"],
            "bg_per_token": created, "live_max": row.get("live_bind_groups_max"), "live_end": row.get("live_bind_groups_end"),
            "gc_events": n_events, "per_event": per_event,
            "modeled_max": row.get("modeled_native_bytes_max") if emulated else None,
            "rss_max": row.get("content_rss_bytes_max"), "killed": row.get("would_be_killed_at_token"),
            "budget": row.get("memory_budget_bytes"),
            "projection": _projection(c) if emulated else None,
        })
    for fig, title, ytitle in ((live_fig, "Live GPUBindGroup wrappers per token, every engine", "bind groups"),
                               (mem_fig, "Modeled native memory of live bind groups (emulated) and content-process RSS (measured)", "MiB")):
        fig.update_layout(title=title, xaxis_title="token", yaxis_title=ytitle, template="plotly_white",
                          legend={"orientation": "h", "y": -0.25})
    fr = FIELD_REPORT
    body = [
        '<p class="note">Live wrappers = created − collected (FinalizationRegistry in the worker). A <b>collection event</b> '
        "is a token during which the engine's GC collected bind groups (a drop in the live curve). Under emulated WebGPU "
        "each live bind group is charged the modeled native bytes of WebKit's BindGroup.mm (one MTLBuffer per stage with "
        "bindings; page rounding is an assumption — see the model in the cell's environment); those bytes are modeled, "
        "RSS is measured.</p>",
        "<table><tr><th class='l'>cell</th><th class='l'>measured on</th><th>createBindGroup / token</th>"
        "<th>live max</th><th>live at end</th><th>collection events</th><th>collected per event</th>"
        "<th>modeled native MiB max</th><th>content RSS MiB max (largest single process)</th>"
        f"<th>would be killed at token ({_budget_label(cells)})</th>"
        "<th>tokens to 2,048 MB (modeled projection)</th></tr>",
    ]
    for r in rows:
        killed = "—" if not r["budget"] else ("not within this run" if pd.isna(r["killed"]) else f"token {int(r['killed'])}")
        body.append(
            f"<tr><td class='l'>{_esc(r['cell'])}</td><td class='l'>{_esc(r['source'])}</td><td>{_esc(r['bg_per_token'])}</td>"
            f"<td>{_esc(r['live_max'])}</td><td>{_esc(r['live_end'])}</td><td>{r['gc_events']}</td><td>{_esc(r['per_event'])}</td>"
            f"<td>{_mib(r['modeled_max'])}</td><td>{_mib(r['rss_max'])}</td>"
            f"<td>{killed}</td><td>{_esc(r['projection'])}</td></tr>")
    body.append("</table>")
    body.append(
        f"<p class='note'><b>Reported, not measured here</b> — {html.escape(fr['source'])}: ~{fr['bind_groups_per_token']} "
        f"createBindGroup per token; ~{fr['live_at_kill']:,} uncollected bind groups when iOS killed the page at 2,048 MB "
        f"(≈{fr['kill_bytes'] / fr['live_at_kill'] / 1000:.1f} KB each); with a forced GC every 16 tokens "
        f"{fr['live_with_forced_gc'][0]:,}–{fr['live_with_forced_gc'][1]:,} live. The projection column extrapolates a "
        "cell's own modeled bytes per token (Theil–Sen slope over its run) to 2,048 MB; it is a model, not a measurement, "
        "and says nothing where collections keep the curve flat.</p>")
    engines = sorted(set(cells["browser"]))
    return {"id": "retention", "title": "Bind group retention per engine (" + " vs ".join(engines) + ")", "html": "".join(body),
            "charts": {"retention_live": json.loads(live_fig.to_json()), "retention_memory": json.loads(mem_fig.to_json())}}


def _budget_label(cells: pd.DataFrame) -> str:
    b = cells["memory_budget_bytes"].dropna() if "memory_budget_bytes" in cells else []
    return f"--memory-budget {int(b.iloc[0]) / 1e6:,.0f} MB" if len(b) else "no --memory-budget given"


def _projection(c: pd.DataFrame) -> str | None:
    """Tokens until the modeled native bytes reach the field report's 2,048 MB, from the cell's
    Theil–Sen slope (bytes/token); None when the slope is not positive."""
    from scipy.stats import theilslopes

    y = c["modeled_native_bytes"].dropna()
    if len(y) < 4:
        return None
    slope, intercept, _, _ = theilslopes(y.values, c.loc[y.index, "step"].values)
    if slope <= 0:
        return "no growth"
    return f"~{(FIELD_REPORT['kill_bytes'] - intercept) / slope:,.0f} (slope {slope / 1024:,.1f} KiB/token)"


@report.section
def onnxruntime(tables) -> dict | None:
    s, st = tables.summary, tables.steps
    ort = s[s["workload"] == "ort-decode"]
    if not len(ort):
        return None
    fig = go.Figure()
    body = ["<table><tr><th class='l'>measured on</th><th class='l'>engine</th><th class='l'>variant</th><th class='l'>status</th>"
            "<th>createBindGroup / token</th><th>dispatches / token</th><th>submits / token</th>"
            "<th>cache hit rate, last half</th><th>live bind groups at end</th><th>content RSS MiB max</th>"
            "<th>median ms / token</th><th>tokens identical</th></tr>"]
    for _, row in ort.iterrows():
        c = st[st["cell"] == row["cell"]].sort_values("step")
        rate = None
        if "extra_bind_group_cache_hits" in c and c["extra_bind_group_cache_hits"].notna().any():
            last = c[c["step"] >= c["step"].max() / 2]
            h, m = last["extra_bind_group_cache_hits"].sum(), last["extra_bind_group_cache_misses"].sum()
            rate = f"{100 * h / (h + m):.1f}%" if h + m else None
            fig.add_trace(go.Scatter(x=c["step"].tolist(), y=c["extra_bind_group_cache_hit_rate"].tolist(), mode="lines+markers",
                                     marker={"size": 3}, name=f"{row['variant']} [{row['profile']}] — {report.provenance(row)}",
                                     meta={"cell": row["cell"], "variant": row["variant"]}))
        rss = row.get("content_rss_bytes_max")
        body.append(
            f"<tr><td class='l'>{_esc(report.provenance(row))}</td><td class='l'>{_esc(row.get('engine'))}</td>"
            f"<td class='l'>{_esc(row['variant'])}</td><td class='l {row['status']}' title='{html.escape(str(row['reason']))}'>{_esc(row['status'])}</td>"
            f"<td>{_esc(row['bind_groups_per_token'])}</td><td>{_esc(row['dispatches_per_token'])}</td>"
            f"<td>{_esc(row['submits_per_token'])}</td><td>{rate or '—'}</td><td>{_esc(row['live_bind_groups_end'])}</td>"
            f"<td>{_mib(rss)}</td>"
            f"<td>{_esc(row['median_ms_per_token'])}</td><td>{_esc(row['tokens_identical'])}</td></tr>")
    body.append("</table>")
    charts = {}
    if fig.data:
        fig.update_layout(title="Bind group cache hit rate per token (workloads/lib/bind-group-cache.js)", xaxis_title="token",
                          yaxis_title="hits / (hits + misses)", yaxis_range=[0, 1.02], template="plotly_white",
                          legend={"orientation": "h", "y": -0.25})
        charts["ort_cache_hit_rate"] = json.loads(fig.to_json())
    return {"id": "onnxruntime", "title": "onnxruntime-web (ort-decode)", "html": "".join(body), "charts": charts}
