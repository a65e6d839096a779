"""Report section "GC retention calibration" for the ``gc-retention`` workload.

The WebKit issue's open question: does the emulated run (WebKitGTK's JavaScriptCore + the JS
emulated WebGPU of ``web/emulation/``) reproduce Safari's retention of per-dispatch
GPUBindGroups, and which allocation pattern changes it? ``workloads/gc-retention`` makes the
same WebGPU calls in every variant and varies only the JS allocation pattern (``minimal``,
``descriptors``, ``encoder-refs``, ``wasm-heap``, ``js-churn``, ``force-gc``).

Per browser × variant this section shows, from the cells' ``steps.csv`` rows: live
GPUBindGroup wrappers (created − collected, FinalizationRegistry) max and at the end,
collection events (steps in which ``bind_groups_collected`` rose), the modeled native bytes
max (emulated WebGPU only: web/emulation/memory-model.js), and beside them the onnxruntime
field report's Safari figures (references.md, microsoft/onnxruntime #33750), labelled
"reported, not measured here". The verdict rows are computed from the data: each variant's
live max relative to ``minimal`` in the same browser (a change when the ratio of the
repetition means is at least :data:`CHANGE_FACTOR` either way), and whether each cell's
curve looks like the field report's (collection after token 0 or not; force-gc inside the
reported 250–7,000 or not). Nothing is concluded here that the numbers do not say.
"""

from __future__ import annotations

import html
import json

import pandas as pd
import plotly.graph_objects as go

from harness import report

WORKLOAD = "gc-retention"
BASELINE = "minimal"
#: Variants that apply the field report's workaround (compared with its 250–7,000 figure).
FORCE_GC_VARIANTS = ("force-gc", "wasm-heap-force-gc")
#: Live max of a variant vs ``minimal`` (means over repetitions) counts as a change of retention
#: when it differs by at least this factor. The live curve is a sawtooth whose peak depends on
#: when a collection happens to run, so smaller ratios from one or two runs are not read as a
#: change.
CHANGE_FACTOR = 2.0
#: A run "grows without collection", like the field report's no-workaround case, when at least
#: this share of the bind groups it made is live at the end.
NO_GC_LIVE_SHARE = 0.9

#: The onnxruntime field report's Safari figures (references.md). Reported, not measured here.
FIELD = {
    "source": "onnxruntime field report (microsoft/onnxruntime #33750): Safari on iPhone 16 Pro Max, iOS 27.2, "
              "Transformers.js 4.3.2 + onnxruntime-web 1.31.0-dev.20260914, 1.7B q4f16, graph capture off",
    "per_token": 317,
    "live_at_kill": 150_000,
    "kill_mb": 2_048,
    "forced_gc_range": (250, 7_000),
    "forced_gc_every": 16,
    "forced_gc_mb": 32,
}


def _esc(v) -> str:
    return html.escape(report._fmt(v))


def _mib(v) -> str:
    return "—" if v is None or pd.isna(v) else f"{v / 2**20:,.1f}"


def _int(v) -> str:
    return "—" if v is None or pd.isna(v) else f"{int(round(v)):,}"


def _legend_right() -> dict:
    """Layout with a scrolling legend on the right: the report's chart boxes have a fixed height
    (reports/templates/report.html.j2), so a legend below would squeeze the plot away."""
    return {"legend": {"orientation": "v", "x": 1.02, "y": 1, "font": {"size": 10}, "groupclick": "toggleitem",
                       "traceorder": "grouped"}}


#: One colour per variant (repetitions share it; Chromium's real-WebGPU traces are dotted).
_PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
_VARIANT_ORDER = ["minimal", "descriptors", "encoder-refs", "wasm-heap", "js-churn", "force-gc", "wasm-heap-force-gc"]


def _color(variant: str) -> str:
    i = _VARIANT_ORDER.index(variant) if variant in _VARIANT_ORDER else len(_VARIANT_ORDER) + sum(map(ord, variant))
    return _PALETTE[i % len(_PALETTE)]


def _group(row) -> dict:
    """Legend group per engine, titled with its provenance (browser and version, adapter, real or
    emulated WebGPU), so each trace's own name can stay short."""
    version = str(row.get("browser_version") or "")
    if row.get("browser") == "chromium":
        version = version.split(".")[0]
    title = f"{row['browser']} {version}<br>{row.get('adapter') or 'no adapter'} · {row.get('webgpu')} WebGPU"
    return {"legendgroup": report.provenance(row), "legendgrouptitle": {"text": title}}


def cell_metrics(steps: pd.DataFrame) -> dict:
    """Retention figures of one cell from its steps.csv rows (any order)."""
    c = steps.sort_values("step")
    collected = c["bind_groups_collected"].astype(float)
    rose = collected.diff()
    rose.iloc[0] = collected.iloc[0]  # collected during token 0 counts as an event of token 0
    events = c.loc[rose > 0, "step"]
    created = float(c["bind_groups_created"].iloc[-1])
    modeled = c["modeled_native_bytes"] if "modeled_native_bytes" in c else pd.Series(dtype=float)
    return {
        "tokens": int(len(c)),
        "per_token": float(c["create_bind_group"].iloc[1:].median()) if len(c) > 1 else float(c["create_bind_group"].iloc[0]),
        "created": created,
        "live_max": float(c["bind_groups_live"].max()),
        "live_end": float(c["bind_groups_live"].iloc[-1]),
        "events": int(len(events)),
        "events_late": int((events >= len(c) // 2).sum()),
        "last_event": int(events.iloc[-1]) if len(events) else None,
        "per_event": float(rose[rose > 0].mean()) if len(events) else None,
        "modeled_max": float(modeled.max()) if modeled.notna().any() else None,
    }


def classify(conf: dict, base: dict | None) -> tuple[str, str]:
    """(``more`` | ``less`` | ``none`` | ``n/a``, plain words) for one configuration against
    ``minimal`` of the same browser: a live-max ratio of at least :data:`CHANGE_FACTOR` either
    way, or collections stopping (none in the second half of the run in any repetition while
    minimal collected there) or starting (the reverse)."""
    ratio = conf.get("ratio")
    if base is None or not conf.get("mean") or ratio is None or pd.isna(ratio):
        return "n/a", "no minimal cell to compare with"
    m, b = conf["mean"], base["mean"]
    if ratio >= CHANGE_FACTOR:
        return "more", f"more retained (×{ratio:.2f} live max)"
    if ratio <= 1 / CHANGE_FACTOR:
        return "less", f"less retained (×{ratio:.2f} live max)"
    if m["events_late"] == 0 and b["events_late"] > 0:
        return "more", (f"more retained: no collection in the second half (minimal: {b['events_late']:.1f}), "
                        f"×{ratio:.2f} live max within this run")
    if m["events_late"] > 0 and b["events_late"] == 0:
        return "less", (f"less retained: {m['events_late']:.1f} collections in the second half (minimal: none), "
                        f"×{ratio:.2f} live max")
    return "none", f"no clear change (×{ratio:.2f} live max, within {CHANGE_FACTOR:g}×; both collect)"


def _field_comparison(variant: str, m: dict) -> str:
    """How one configuration (metrics averaged over repetitions) compares with the field report."""
    lo, hi = FIELD["forced_gc_range"]
    if variant in FORCE_GC_VARIANTS:
        where = "inside" if lo <= m["live_max"] <= hi else ("above" if m["live_max"] > hi else "below")
        extra = "; grows without collection" if grows_uncollected(m) else ""
        return f"live max {m['live_max']:,.0f} is {where} the reported {lo:,}–{hi:,}{extra}"
    if grows_uncollected(m):
        return (f"like the report: grows without collection ({m['live_end'] / m['created']:.0%} of those made "
                "still live at the end)")
    return f"unlike the report: collects (live max {m['live_max'] / m['created']:.0%} of those made)"


def grows_uncollected(m: dict) -> bool:
    """Like the field report's no-workaround run: at least :data:`NO_GC_LIVE_SHARE` of the bind
    groups made are live at the end (a collection in the first tokens, e.g. one that a large
    allocation at setup set off, does not change that)."""
    return bool(m["created"]) and m["live_end"] / m["created"] >= NO_GC_LIVE_SHARE


def configurations(tables) -> tuple[list[dict], pd.DataFrame]:
    """(one dict per browser × adapter × webgpu × variant, pooled over repetitions; the cells)."""
    s, st = tables.summary, tables.steps
    cells = s[s["workload"] == WORKLOAD]
    out = []
    if not len(cells):
        return out, cells
    keys = ["browser", "browser_version", "adapter", "webgpu", "variant"]
    for key, grp in cells.groupby(keys, sort=False, dropna=False):
        per = []
        for _, row in grp.iterrows():
            c = st[st["cell"] == row["cell"]] if len(st) else st
            if len(c):
                per.append(cell_metrics(c))
        status = ", ".join(f"{r['status']}" + (f": {r['reason']}" if r["status"] == "failed" and isinstance(r["reason"], str) else "")
                           for _, r in grp.iterrows())
        conf = dict(zip(keys, key))
        conf.update({"provenance": report.provenance(grp.iloc[0]), "cells": list(grp["cell"]), "status": status,
                     "reps": per})
        if per:
            df = pd.DataFrame(per)
            conf["mean"] = {k: (df[k].mean() if df[k].notna().any() else None) for k in df.columns}
            conf["mean"]["last_event"] = df["last_event"].max() if df["last_event"].notna().any() else None
        out.append(conf)
    engines = {}
    for conf in out:
        engines.setdefault((conf["browser"], conf["browser_version"], conf["adapter"], conf["webgpu"]), []).append(conf)
    for confs in engines.values():
        base = next((c for c in confs if c["variant"] == BASELINE and c.get("mean")), None)
        for c in confs:
            c["base"] = base
            if c.get("mean") and base and base["mean"]["live_max"]:
                c["ratio"] = c["mean"]["live_max"] / base["mean"]["live_max"]
            else:
                c["ratio"] = None
    return out, cells


def _reported_cell(variant: str) -> str:
    lo, hi = FIELD["forced_gc_range"]
    if variant in FORCE_GC_VARIANTS:
        return f"{lo:,}–{hi:,} live (forced GC every {FIELD['forced_gc_every']} tokens, ~{FIELD['forced_gc_mb']} MB)"
    return f"~{FIELD['live_at_kill']:,} live at the {FIELD['kill_mb']:,} MB kill (ORT, no workaround)"


def _verdicts(confs: list[dict]) -> list[str]:
    """One plain-language line per engine, computed from the configurations."""
    lines = []
    engines: dict = {}
    for c in confs:
        engines.setdefault(c["provenance"], []).append(c)
    for prov, cs in engines.items():
        measured = [c for c in cs if c.get("mean")]
        base = next((c for c in measured if c["variant"] == BASELINE), None)
        if not measured:
            continue
        if base is None:
            lines.append(f"<b>{html.escape(prov)}</b>: no <code>{BASELINE}</code> cell, so no pattern is compared.")
            continue
        groups: dict[str, list[str]] = {"more": [], "less": [], "none": [], "n/a": []}
        for c in measured:
            if c["variant"] == BASELINE:
                continue
            k, words = classify(c, c["base"])
            groups[k].append(f"<code>{html.escape(c['variant'])}</code> ({html.escape(words)})")
        parts = []
        if groups["more"]:
            parts.append("<b>more retained</b> than minimal: " + ", ".join(groups["more"]))
        if groups["less"]:
            parts.append("<b>less retained</b>: " + ", ".join(groups["less"]))
        if groups["none"]:
            parts.append(f"no change beyond {CHANGE_FACTOR:g}×: " + ", ".join(groups["none"]))
        like = [c["variant"] for c in measured if c["variant"] not in FORCE_GC_VARIANTS and grows_uncollected(c["mean"])]
        lo, hi = FIELD["forced_gc_range"]
        tail = ("grows without collection like the report's no-workaround Safari run: "
                + ", ".join(f"<code>{html.escape(v)}</code>" for v in like)) if like else \
            "no pattern grows without collection the way the report's no-workaround Safari run did"
        for fg in (c for c in measured if c["variant"] in FORCE_GC_VARIANTS):
            inside = lo <= fg["mean"]["live_max"] <= hi
            tail += (f"; {html.escape(fg['variant'])} live max {fg['mean']['live_max']:,.0f} is "
                     f"{'inside' if inside else 'outside'} the reported {lo:,}–{hi:,}"
                     + (" and grows without collection" if grows_uncollected(fg["mean"]) else ""))
        lines.append(f"<b>{html.escape(prov)}</b>: " + "; ".join(parts) + f". Versus the field report: {tail}.")
    return lines


@report.section
def gc_retention(tables) -> dict | None:
    confs, cells = configurations(tables)
    if not confs:
        return None
    st = tables.steps
    live_fig, mem_fig = go.Figure(), go.Figure()
    for _, row in cells.iterrows():
        c = st[st["cell"] == row["cell"]].sort_values("step") if len(st) else st
        if not len(c):
            continue
        name = f"{row['variant']} r{row['repetition']}"
        meta = {"cell": row["cell"], "variant": row["variant"], "browser": row["browser"],
                "provenance": report.provenance(row)}
        line = {"dash": "dot" if row["webgpu"] == "real" else "solid", "color": _color(row["variant"])}
        live_fig.add_trace(go.Scatter(x=c["step"].tolist(), y=c["bind_groups_live"].clip(lower=1).tolist(),
                                      mode="lines", name=name, line=line, meta=meta, **_group(row)))
        if row["webgpu"] == "emulated" and c["modeled_native_bytes"].notna().any():
            mem_fig.add_trace(go.Scatter(x=c["step"].tolist(), y=(c["modeled_native_bytes"] / 10**6).round(2).tolist(),
                                         mode="lines", name=name, line={"color": _color(row["variant"])},
                                         meta=meta, **_group(row)))
    lo, hi = FIELD["forced_gc_range"]
    # The field report's figures as traces (data coordinates on the log axis), in their own
    # legend group, drawn over the run's token range.
    x_max = int(st[st["cell"].isin(set(cells["cell"]))]["step"].max()) if len(st) and len(live_fig.data) else 1
    field = {"legendgroup": "field-report", "legendgrouptitle": {"text": "onnxruntime #33750, Safari<br>(reported, not measured here)"},
             "mode": "lines", "hoverinfo": "name"}
    live_fig.add_trace(go.Scatter(x=[0, x_max], y=[hi, hi], line={"width": 0}, showlegend=False, **field))
    live_fig.add_trace(go.Scatter(x=[0, x_max], y=[lo, lo], line={"width": 0}, fill="tonexty",
                                  fillcolor="rgba(44,160,44,0.15)",
                                  name=f"forced GC every {FIELD['forced_gc_every']} tokens: {lo:,}–{hi:,}", **field))
    live_fig.add_trace(go.Scatter(x=[0, x_max], y=[FIELD["live_at_kill"]] * 2, line={"dash": "dash", "color": "red"},
                                  name=f"no workaround: ~{FIELD['live_at_kill']:,} at the iOS kill", **field))
    live_fig.update_layout(title="gc-retention: live GPUBindGroup wrappers per token (log scale; 0 drawn as 1), beside the field report",
                           xaxis_title="token", yaxis_title="live bind groups", yaxis_type="log", template="plotly_white",
                           **_legend_right())
    charts = {"gc_retention_live": json.loads(live_fig.to_json())}
    if mem_fig.data:
        mem_fig.add_hline(y=FIELD["kill_mb"], line_dash="dash", line_color="red",
                          annotation_text="2,048 MB: iOS killed the page (reported, not measured here)",
                          annotation_position="top left")
        mem_fig.update_layout(title="gc-retention: modeled native memory of live bind groups (emulated WebGPU, a model)",
                              xaxis_title="token", yaxis_title="MB (modeled)", template="plotly_white",
                              **_legend_right())
        charts["gc_retention_modeled"] = json.loads(mem_fig.to_json())

    body = [
        "<p class='note'>Every variant makes the same WebGPU calls (a new bind group per dispatch, 16 dispatches "
        "per command buffer, one mapAsync per token); only the JS allocation pattern differs "
        "(<code>workloads/gc-retention</code>). <b>Live</b> = created − collected GPUBindGroup wrappers "
        "(FinalizationRegistry in the worker). A <b>collection event</b> is a token in which the engine's GC "
        "collected bind groups. Values are means over repetitions (per-repetition values in brackets). "
        "<b>WebKitGTK cells are JavaScriptCore + the emulated WebGPU of web/emulation/, not Safari</b>: their "
        "native bytes are modeled (one 16 KiB page per compute bind group, WebKit BindGroup.mm).</p>",
    ]
    header = ("<table><tr><th class='l'>variant</th><th class='l'>status</th><th>reps</th><th>createBindGroup / token</th>"
              "<th>bind groups made</th><th>live max</th><th>live at end</th><th>collection events</th><th>in 2nd half</th>"
              "<th>last at token</th><th>modeled native MiB max</th><th>live max vs minimal</th>"
              "<th class='l'>pattern verdict</th><th class='l'>reported in Safari (not measured here)</th>"
              "<th class='l'>vs the report</th></tr>")
    engine = None
    for c in confs:
        if c["provenance"] != engine:
            if engine is not None:
                body.append("</table>")
            engine = c["provenance"]
            body.append(f"<h3>{html.escape(engine)}</h3>" + header)
        m = c.get("mean")
        reported = html.escape(_reported_cell(c["variant"]))
        if not m:
            body.append(f"<tr><td class='l'>{html.escape(c['variant'])}</td><td class='l'>{html.escape(c['status'])}</td>"
                        + "<td>—</td>" * 11 + f"<td class='l'>{reported}</td><td class='l'>—</td></tr>")
            continue
        reps = c["reps"]
        ratio = "—" if c["ratio"] is None else f"×{c['ratio']:.2f}"

        def br(k, reps=reps):
            """Per-repetition values in brackets, when there is more than one repetition."""
            return "" if len(reps) < 2 else " [" + ", ".join(_int(r[k]) for r in reps) + "]"

        kind, words = ("baseline", "baseline") if c["variant"] == BASELINE else classify(c, c["base"])
        label = {"more": "more retained", "less": "less retained", "none": "no clear change"}.get(kind, kind)
        vs = _field_comparison(c["variant"], m)
        body.append(
            f"<tr><td class='l'>{html.escape(c['variant'])}</td><td class='l'>{html.escape(c['status'])}</td>"
            f"<td>{len(reps)}</td><td>{_esc(m['per_token'])}</td><td>{_int(m['created'])}</td>"
            f"<td>{_int(m['live_max'])}{br('live_max')}</td><td>{_int(m['live_end'])}{br('live_end')}</td>"
            f"<td>{m['events']:.1f}{br('events')}</td><td>{m['events_late']:.1f}</td><td>{_int(m['last_event'])}</td>"
            f"<td>{_mib(m['modeled_max'])}</td><td>{ratio}</td>"
            f"<td class='l' title='{html.escape(words)}'><b>{html.escape(label)}</b></td>"
            f"<td class='l'>{reported}</td><td class='l'>{html.escape(vs)}</td></tr>")
    body.append("</table>")
    verdicts = _verdicts(confs)
    if verdicts:
        body.append("<h3>Verdict (computed from the table)</h3><ul>"
                    + "".join(f"<li>{v}</li>" for v in verdicts) + "</ul>")
    body.append(
        f"<p class='note'><b>Reported, not measured here</b> — {html.escape(FIELD['source'])}: ~{FIELD['per_token']} "
        f"createBindGroup per token; ~{FIELD['live_at_kill']:,} uncollected bind groups when iOS killed the page at "
        f"{FIELD['kill_mb']:,} MB (a worker running ORT allocates little JS memory, so GC rarely runs); allocating "
        f"~{FIELD['forced_gc_mb']} MB of throwaway ArrayBuffers every {FIELD['forced_gc_every']} tokens left "
        f"{lo:,}–{hi:,} uncollected. A pattern counts as changing retention when its live max differs from "
        f"<code>{BASELINE}</code>'s in the same browser by ×{CHANGE_FACTOR:g} or more.</p>")
    return {"id": "gc-retention", "title": "GC retention calibration (gc-retention): which allocation pattern changes retention",
            "html": "".join(body), "charts": charts}
