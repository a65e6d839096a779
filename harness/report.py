"""Renders a run's tables into one self-contained HTML file (jinja2 + plotly.js inlined).

The report opens offline: plotly.js is embedded once, each chart's data is embedded as JSON
(``<script type="application/json" id="chart-data">``, also what tests read). Every trace name
and table row says where its numbers came from: browser + version, adapter, and whether WebGPU
was real or emulated.
"""

from __future__ import annotations

import json
from pathlib import Path

import jinja2
import pandas as pd
import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from harness import REPO_ROOT
from harness.tables import Tables

TEMPLATES = REPO_ROOT / "reports" / "templates"

#: Extra report sections: functions (tables) → {"id", "title", "html", "charts": {id: figure}} or
#: None when the run has nothing for them. Modules add theirs with :func:`section`.
SECTIONS: list = []
#: Functions (figure, tables, steps column) that add traces to a per-token chart, e.g. CI bands
#: (harness/report_sections/stats.py). Called by :func:`_line_chart` after the cells' traces.
CHART_BANDS: list = []


def section(fn):
    """Register ``fn`` as a report section (decorator). See :data:`SECTIONS`."""
    SECTIONS.append(fn)
    return fn


def _load_sections() -> None:
    """Import the modules that register sections (kept optional: a missing one is skipped)."""
    import importlib

    for mod in ("harness.report_sections",):
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name != mod:
                raise


def provenance(row: pd.Series | dict) -> str:
    """Short label of where a number came from: ``chromium 156.0 · google swiftshader · real WebGPU``."""
    def known(v) -> bool:
        return v is not None and not (isinstance(v, float) and pd.isna(v)) and str(v) != ""

    version = str(row.get("browser_version")) if known(row.get("browser_version")) else ""
    if row.get("browser") == "chromium":
        version = version.split(".")[0]
    webgpu = row.get("webgpu") if known(row.get("webgpu")) else "?"
    label = "emulated WebGPU (modeled native memory)" if webgpu == "emulated" else f"{webgpu} WebGPU"
    adapter = row.get("adapter") if known(row.get("adapter")) else "no adapter"
    machine = f"{row.get('machine')}: " if known(row.get("machine")) else ""  # merged runs
    return f"{machine}{row.get('browser')} {version} · {adapter} · {label}"


def _trace_name(row) -> str:
    profile = row["profile"] if isinstance(row["profile"], str) and row["profile"] else "default"
    return f"{row['workload']}/{row['variant']} [{profile}] r{row['repetition']} — {provenance(row)}"


def _line_chart(tables: Tables, column: str, title: str, ytitle: str) -> dict:
    fig = go.Figure()
    for _, row in tables.summary.iterrows():
        s = tables.steps[tables.steps["cell"] == row["cell"]]
        if not len(s) or s[column].isna().all():
            continue
        fig.add_trace(go.Scatter(x=s["step"].tolist(), y=s[column].tolist(), mode="lines+markers",
                                 marker={"size": 3}, name=_trace_name(row),
                                 meta={"cell": row["cell"], "variant": row["variant"]}))
    for add_band in CHART_BANDS:
        add_band(fig, tables, column)
    fig.update_layout(title=title, xaxis_title="token", yaxis_title=ytitle, template="plotly_white",
                      legend={"orientation": "h", "y": -0.25}, margin={"t": 50})
    return json.loads(fig.to_json())


def _memory_chart(tables: Tables) -> dict:
    fig = go.Figure()
    from harness.tables import process_type_totals

    mem = process_type_totals(tables.memory)
    for _, row in tables.summary.iterrows():
        m = mem[mem["cell"] == row["cell"]]
        for ptype, grp in m.groupby("process_type"):
            fig.add_trace(go.Scatter(x=grp["time_s"].tolist(), y=(grp["rss_bytes"] / 2**20).round(2).tolist(),
                                     mode="lines", name=f"{ptype} RSS — {_trace_name(row)}",
                                     meta={"cell": row["cell"], "variant": row["variant"], "process_type": ptype}))
    fig.update_layout(title="Memory per process type (RSS summed over that type's processes, psutil) over time",
                      xaxis_title="run time (s)",
                      yaxis_title="MiB", template="plotly_white", legend={"orientation": "h", "y": -0.25})
    return json.loads(fig.to_json())


def charts(tables: Tables) -> dict[str, dict]:
    """Chart id → plotly figure dict."""
    return {
        "bind_groups_per_token": _line_chart(tables, "create_bind_group", "createBindGroup calls per token", "calls"),
        "live_bind_groups": _line_chart(tables, "bind_groups_live", "Live GPUBindGroup wrappers (created − collected)", "bind groups"),
        "memory": _memory_chart(tables),
        "ms_per_token": _line_chart(tables, "wall_ms", "Per-token latency (wall time to the token's sync)", "ms"),
    }


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and pd.isna(v)):
        return "—"
    if isinstance(v, float):
        return f"{v:,.2f}" if abs(v) < 1000 else f"{v:,.0f}"
    return str(v)


def render(tables: Tables, run_dir: Path) -> Path:
    """Write ``<run_dir>/report.html`` and return its path."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True)
    env.filters["fmt"] = _fmt
    env.filters["mib"] = lambda v: "—" if v is None or pd.isna(v) else f"{v / 2**20:,.1f}"
    summary = tables.summary.copy()
    summary["provenance"] = [provenance(r) for _, r in summary.iterrows()]
    peak_cols = [c for c in summary.columns if c.startswith("peak_rss_bytes_")]
    _load_sections()
    all_charts = charts(tables)
    sections = []
    for fn in SECTIONS:
        sec = fn(tables)
        if sec:
            sections.append(sec)
            all_charts.update(sec.get("charts", {}))
    html = env.get_template("report.html.j2").render(
        sections=sections,
        manifest=tables.manifest,
        summary=summary.to_dict("records"),
        peak_cols=peak_cols,
        events=tables.events[tables.events["kind"].isin(["error", "skip", "cell_status", "device_lost",
                                                             "uncaptured_error"])].to_dict("records"),
        envs=tables.env,
        chart_json=json.dumps(all_charts).replace("</", "<\\/"),
        plotly_js=get_plotlyjs(),
    )
    out = Path(run_dir) / "report.html"
    out.write_text(html, encoding="utf-8")
    return out
