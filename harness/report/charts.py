"""The report's core charts, as plotly figure dicts: per-token series from the tables with the CI
bands the statistics computed (harness/stats/bands.py), and the engines-side-by-side small
multiples (numbers: harness/report/engines.py). Workload sections' charts:
harness/report/workload_charts.py.

Trace names are short (``fresh · chromium``; workload, profile or machine added only when they
vary in the run): one legend entry per configuration, its repetitions sharing it. Where the
numbers came from (browser + version, adapter, real or emulated WebGPU, repetition) is in each
trace's hover text and ``meta``, and once for the whole report in its legend key
(:func:`legend_key`). Series longer than a chart's width are reduced for drawing
(harness/report/reduce.py); steps.csv and memory.csv keep every sample.
"""

from __future__ import annotations

import functools
import json

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from harness.report import format as F
from harness.report import reduce as R
from harness.report.finding import NOT_TOKENS, time_flags

COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
#: Legend above the plot, in rows, small: it never squeezes the plot or runs past the page.
LEGEND_TOP = {"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "left", "x": 0, "font": {"size": 11},
              "groupclick": "togglegroup"}
#: The template of every chart (put in by :func:`fig_dict`, not set through plotly's layout).
TEMPLATE = "plotly_white"
_LAYOUT = {"legend": LEGEND_TOP, "margin": {"t": 90, "r": 20, "l": 60, "b": 50},
           "hoverlabel": {"namelength": -1}}


def fig_dict(fig: go.Figure, points: dict[int, tuple[list, list]] | None = None,
             template: str | None = TEMPLATE) -> dict:
    """A figure as the JSON-ready dict the page hands to ``Plotly.newPlot``. ``points``: trace
    index → ``(x, y)`` lists (harness/report/reduce.py, JSON-ready numbers) put into those traces
    afterwards: a trace is validated by plotly without its points (checking and encoding each
    of thousands of points was most of a long run's chart time), the dict is the same.
    ``template``: the plotly template put into the layout, as plotly writes it (:func:`_template`;
    setting it through ``update_layout`` copied and validated the whole template for every
    chart, 25 ms each); None keeps the figure's own."""
    d = json.loads(fig.to_json())
    for i, (x, y) in (points or {}).items():
        d["data"][i]["x"], d["data"][i]["y"] = x, y
    if template is not None:
        d["layout"]["template"] = json.loads(_template(template))
    return d


@functools.lru_cache(maxsize=4)
def _template(name: str) -> str:
    """The JSON plotly writes for the layout template ``name`` (``plotly_white``), made once."""
    return json.dumps(json.loads(go.Figure(layout={"template": name}).to_json())["layout"]["template"])


def rgba(color: str, alpha: float) -> str:
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


# ----------------------------------------------------------------------------------------------
# names


def _profile(row) -> str:
    p = row.get("profile")
    return "default" if F.missing(p) or p == "" else str(p)


def step_word(summary) -> str:
    """``token`` when a workload of the run generates tokens, else ``step`` (harness/tables.py
    ``STEP_UNITS``: workloads whose steps are runs, uploads, page loads or an app's steps)."""
    from harness.tables import STEP_UNITS

    workloads = set(summary["workload"]) if len(summary) else set()
    return "step" if workloads and all(w in STEP_UNITS for w in workloads) else "token"


class Names:
    """Short trace names of a run's cells and the legend key. A name is ``variant · browser``,
    with the workload, ``@profile`` or ``machine:`` added when the run has several of them, and
    the sweep point (``[pacing=none,main_thread=true]``, manifest cells' ``sweep``) when the run
    swept a parameter (``sweeps``: cell id → its sweep dict)."""

    def __init__(self, summary, sweeps: dict[str, dict] | None = None):
        rows = [r for _, r in summary.iterrows()]
        self.sweeps = {c: ",".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in (sw or {}).items())
                       for c, sw in (sweeps or {}).items()}
        #: what one step of this run is called in titles and axes: ``token``, or ``step`` when no
        #: workload of the run counts tokens (an app's steps, ort-run's runs, upload's uploads…)
        self.step = step_word(summary)
        self.vary = {k: len({(_profile(r) if k == "profile" else str(r.get(k) or "")) for r in rows}) > 1
                     for k in ("workload", "profile", "machine", "browser")}
        self.rows = {r["cell"]: r for r in rows}

    def of(self, row) -> str:
        """The short name of a summary row (or manifest cell)."""
        parts = [str(row["workload"])] if self.vary["workload"] else []
        parts.append(str(row["variant"]) + (f"@{_profile(row)}" if self.vary["profile"] else ""))
        browser = str(row["browser"])
        if self.vary["machine"] and not F.missing(row.get("machine")):
            browser = f"{row['machine']}:{browser}"
        parts.append(browser)
        sweep = self.sweeps.get(str(row.get("cell")), "")
        return " · ".join(parts) + (f" [{sweep}]" if sweep else "")

    def cell(self, cell: str) -> str:
        """The short name of a cell id."""
        return self.of(self.rows[cell]) if cell in self.rows else cell

    def hover(self, row, y: str = "%{y}", x: str | None = None) -> str:
        """Hover text: short name, repetition, full provenance, the point."""
        x = x or f"{self.step} %{{x}}"
        return (f"<b>{self.of(row)}</b> r{row.get('repetition')}<br>{F.provenance(row)}<br>"
                f"{x}: {y}<extra></extra>")

    def legend_key(self) -> list[dict]:
        """One entry per short name: ``{"name", "provenance", "cells", "color"}``, in run order."""
        out: dict[str, dict] = {}
        for cell, row in self.rows.items():
            e = out.setdefault(self.of(row), {"name": self.of(row), "provenance": set(), "cells": []})
            e["provenance"].add(F.provenance(row))
            e["cells"].append(cell)
        return [{**e, "provenance": " / ".join(sorted(e["provenance"]))} for e in out.values()]

    def color(self, name: str) -> str:
        """A stable colour per short name, in legend-key order."""
        names = [e["name"] for e in self.legend_key()]
        return COLORS[names.index(name) % len(COLORS)] if name in names else COLORS[0]


# ----------------------------------------------------------------------------------------------
# per-token charts


def add_bands(fig: go.Figure, bands: list, warmup: int, names: dict[str, str], colors: dict[str, str]) -> None:
    """CI bands on a per-token chart: the shaded warm-up, per group the t-band across
    repetitions and the headline estimate's 95% CI (or the Theil–Sen growth line). Bands are
    not in the legend (their configuration's entry toggles them); their hover says what they are."""
    if not bands:
        return
    if warmup > 0:
        fig.add_vrect(x0=-0.5, x1=warmup - 0.5, fillcolor="#999", opacity=0.15, line_width=0,
                      annotation_text="warm-up", annotation_position="top left")
    for b in bands:
        name = names.get(b.group, b.group)
        color = colors.get(name, COLORS[0])
        common = {"legendgroup": name, "showlegend": False}
        if b.x:
            x, lo, hi = R.envelope(b.x, b.low, b.high)
            fig.add_trace(go.Scatter(x=x + x[::-1], y=hi + lo[::-1], fill="toself", mode="lines",
                                     line={"width": 0}, fillcolor=rgba(color, 0.18), hoverinfo="skip",
                                     name=f"{name}: 95% CI of the mean over {b.n_reps} repetitions",
                                     meta={"band": "repetitions", "group": b.group, "variant": b.variant}, **common))
        e = b.estimate
        if e is None:
            continue
        if e.kind == "slope":
            x = [b.x0, b.x1]
            fig.add_trace(go.Scatter(x=x, y=[b.intercept + e.value * v for v in x], mode="lines",
                                     line={"dash": "dash", "color": color},
                                     name=f"{name}: growth {F.estimate(e)} {e.unit}",
                                     meta={"band": "slope", "group": b.group, "variant": b.variant, "metric": e.metric},
                                     **common))
            continue
        lo, hi = (e.ci_low, e.ci_high) if e.ci_low is not None else (e.value, e.value)
        fig.add_trace(go.Scatter(x=[b.x0, b.x1, b.x1, b.x0], y=[lo, lo, hi, hi], fill="toself", mode="lines",
                                 line={"width": 0}, fillcolor=rgba(color, 0.25), hoverinfo="name",
                                 name=f"{name}: {e.stat} {F.estimate(e)} {e.unit} (95% CI)",
                                 meta={"band": "estimate", "group": b.group, "variant": b.variant, "metric": e.metric,
                                       "value": e.value, "ci_low": e.ci_low, "ci_high": e.ci_high}, **common))
        fig.add_trace(go.Scatter(x=[b.x0, b.x1], y=[e.value, e.value], mode="lines",
                                 line={"dash": "dot", "color": color, "width": 1}, hoverinfo="skip",
                                 name=f"{name}: {e.stat}", meta={"band": "estimate-line", "group": b.group,
                                                                 "variant": b.variant}, **common))


def cell_steps(steps, column: str) -> dict:
    """Cell id → its rows of steps.csv's ``cell``, ``step`` and ``column`` (where steps.csv has
    it), split once: filtering the whole table per cell took every one of its ~90 columns along."""
    cols = [c for c in ("cell", "step", column) if c in steps]
    return dict(tuple(steps[cols].groupby("cell", sort=False))) if len(steps) and "cell" in steps else {}


def line_chart(tables, names: Names, column: str, title: str, ytitle: str, bands: list | None = None,
               warmup: int = 1, group_names: dict[str, str] | None = None) -> dict:
    """One trace per cell of steps.csv ``column`` over tokens (reduced for drawing), plus ``bands``.
    Workloads whose steps are not tokens are left out."""
    fig = go.Figure()
    seen: set[str] = set()
    colors: dict[str, str] = {}
    points: dict[int, tuple[list, list]] = {}
    by_cell = cell_steps(tables.steps, column)
    for _, row in tables.summary.iterrows():
        if row["workload"] in NOT_TOKENS:
            continue
        s = by_cell.get(row["cell"], tables.steps.iloc[0:0])
        if not len(s) or column not in s or s[column].isna().all():
            continue
        name = names.of(row)
        colors[name] = names.color(name)
        x, y = R.series(s["step"], s[column])
        points[len(fig.data)] = (x, y)
        fig.add_trace(go.Scatter(x=[], y=[], mode="lines+markers" if len(x) <= 200 else "lines", marker={"size": 3},
                                 name=name, legendgroup=name, showlegend=name not in seen,
                                 line={"color": colors[name], "dash": "solid" if row["repetition"] in (0, None) else "dot",
                                       "width": 1.5},
                                 hovertemplate=names.hover(row),
                                 meta={"cell": row["cell"], "variant": row["variant"], "provenance": F.provenance(row)}))
        seen.add(name)
    add_bands(fig, bands or [], warmup, group_names or {}, colors)
    fig.update_layout(title={"text": title, "y": 0.98, "yanchor": "top"}, xaxis_title=names.step, yaxis_title=ytitle,
                      height=420, **_LAYOUT)
    return fig_dict(fig, points)


def group_names(analysis, names: Names) -> dict[str, str]:
    """Group label (``chromium/decode-loop/fresh@tiny``) → the short name of its cells."""
    return {g.key.label: names.cell(g.cells[0]) for g in analysis.stats.groups.values() if g.cells}


def collection_marks(tables, events: dict) -> list[dict]:
    """Traces marking collection events on the per-token latency chart: per cell, a marker at each
    token with a collection event (``events``: cell → {"natural", "forced"} tokens, from
    harness/stats/workloads/memory.py) at that token's wall ms."""
    out = []
    by_cell = cell_steps(tables.steps, "wall_ms") if events else {}
    for cell, ev in (events or {}).items():
        s = by_cell.get(cell, tables.steps.iloc[0:0])
        wall = dict(zip(s["step"].tolist(), s["wall_ms"].tolist()))  # steps.csv has one row per (cell, step)
        for kind, symbol in (("natural", "x"), ("forced", "star")):
            toks = [t for t in ev.get(kind, []) if t in wall and wall[t] == wall[t]]
            if not toks:
                continue
            what = "collection event" if kind == "natural" else "forced collection (--gc-checkpoints)"
            out.append(fig_dict(go.Figure(go.Scatter(
                x=[], y=[], mode="markers",
                marker={"symbol": symbol, "size": 8, "color": "#b3261e"}, name=f"{what} — {cell}",
                meta={"cell": cell, "marks": kind})), {0: (toks, [float(wall[t]) for t in toks])}, None)["data"][0])
    return out


def time_note(analysis) -> str:
    """A time chart's caveat: which adapters are CPU adapters or emulated WebGPU."""
    flags = sorted({f for g in analysis.stats.groups.values() if g.cells for f in time_flags(g)})
    return "; ".join(flags)


def core_charts(analysis, names: Names) -> dict[str, dict]:
    """The per-token charts every report has: chart id → figure."""
    t, bands, w = analysis.tables, analysis.bands, analysis.stats.warmup
    gn = group_names(analysis, names)
    tokens = {g.key.label for g in analysis.stats.groups.values() if g.key.workload not in NOT_TOKENS}
    bands = {col: [b for b in bs if b.group in tokens] for col, bs in bands.items()}
    note = time_note(analysis)  # said in full in the section's text
    word = names.step
    charts = {
        "bind_groups_per_token": line_chart(t, names, "create_bind_group", f"createBindGroup calls per {word}", "calls",
                                            bands.get("create_bind_group"), w, gn),
        "ms_per_token": line_chart(t, names, "wall_ms", f"Per-{word} latency (wall time to the {word}'s end)"
                                   + (" · ⚑ CPU adapter or emulated: not GPU times" if note else ""), "ms",
                                   bands.get("wall_ms"), w, gn),
    }
    # collection events marked on the latency chart (GC vs latency: harness/stats/workloads/memory.py)
    charts["ms_per_token"]["data"] += collection_marks(t, (analysis.workloads.get("memory") or {}).get("events"))
    return charts


# ----------------------------------------------------------------------------------------------
# engines side by side


def engine_charts(numbers: dict | None, names: Names) -> dict[str, dict]:
    """Per memory metric (and setting, when a run has several): one panel per engine, same
    axes, variants overlaid in one colour each (repetitions dotted). Chart ids:
    ``live_bind_groups`` for live bind groups, ``engines_<view>`` for the others (``_<i>``
    added from the second setting on)."""
    if not numbers:
        return {}
    out = {}
    for i, setting in enumerate(numbers["settings"]):
        variants = setting["variants"]
        for view in setting["views"]:
            panels = [p for p in view["panels"] if p["traces"]]
            missing = [p["engine"] for p in view["panels"] if not p["traces"]]
            fig = make_subplots(rows=1, cols=len(panels), shared_yaxes=True, horizontal_spacing=0.03,
                                subplot_titles=[p["engine"] for p in panels])
            shown: set[str] = set()
            points: dict[int, tuple[list, list]] = {}
            scale = 2**20 if view["unit"] == "bytes" else 1
            for col, p in enumerate(panels, start=1):
                for tr in p["traces"]:
                    row = names.rows.get(tr["cell"], {"variant": tr["variant"], "repetition": tr["repetition"]})
                    v = tr["variant"]
                    color = COLORS[variants.index(v) % len(COLORS)]
                    x, y = R.series(tr["x"], [val / scale for val in tr["y"]], R.PANEL_POINTS)
                    y = [round(val, 3) for val in y] if scale != 1 else y
                    points[len(fig.data)] = (x, y)
                    fig.add_trace(go.Scatter(
                        x=[], y=[], mode="lines+markers" if len(x) <= 60 else "lines", marker={"size": 4}, name=v, legendgroup=v, showlegend=v not in shown,
                        line={"color": color, "width": 1.5, "dash": "solid" if tr["repetition"] in (0, None) else "dot"},
                        hovertemplate=(f"<b>{v} · {p['engine']}</b> r{tr['repetition']}<br>{p['provenance']}<br>"
                                       f"{names.step} %{{x}}: %{{y}} {'MiB' if scale != 1 else view['unit']}<extra></extra>"),
                        meta={"cell": tr["cell"], "variant": v, "engine": p["engine"], "provenance": p["provenance"],
                              "short": names.of(row) if "cell" in row else v}), row=1, col=col)
                    shown.add(v)
            fig.update_xaxes(title_text=names.step, matches="x")
            fig.update_yaxes(title_text="MiB" if scale != 1 else view["unit"], col=1)
            title = view["title"] + (f" — {setting['setting']}" if len(numbers["settings"]) > 1 else "")
            if missing:
                title += f" · not measured in {', '.join(missing)}"
            fig.update_layout(title={"text": title, "y": 0.98, "yanchor": "top"}, height=360, **_LAYOUT)
            cid = "live_bind_groups" if view["id"] == "live_bind_groups" else f"engines_{view['id']}"
            out[cid + (f"_{i}" if i else "")] = fig_dict(fig, points)
    return out
