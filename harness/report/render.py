"""Renders an analysis into one self-contained HTML file (jinja2 + plotly.js inlined), and a
comparison into compare.html. Renders only: every number comes from the analysis
(harness/pipeline.py), every string through harness/report/format.py.

The report opens offline: plotly.js is embedded once, each chart's data is embedded as JSON
(``<script type="application/json" id="chart-data">``, also what tests read). Every trace name
and table row says where its numbers came from: browser + version, adapter, and whether WebGPU
was real or emulated.
"""

from __future__ import annotations

import json
from pathlib import Path

import jinja2
from markupsafe import Markup
from plotly.offline import get_plotlyjs

from harness import locations
from harness.report import charts
from harness.report import format as F
from harness.report.sections import SECTIONS

TEMPLATES = locations.templates_dir()


def ci_svg(d, scale: float) -> Markup:
    """An inline SVG (160 × 14 px) of a difference's relative value and CI on ±``scale``
    (fraction), 0 marked: a forest plot row that needs no script."""
    if d.rel is None:
        return Markup("")
    w, mid = 160, 80

    def x(v: float) -> float:
        return round(mid + max(-1.0, min(1.0, v / scale)) * (mid - 4), 1)

    color = "#b3261e" if d.significant else "#555"
    bar = (f'<line x1="{x(d.rel_low)}" x2="{x(d.rel_high)}" y1="7" y2="7" stroke="{color}" stroke-width="2"/>'
           if d.rel_low is not None else "")
    return Markup(f'<svg width="{w}" height="14" role="img" aria-label="{d.rel * 100:+.1f}%">'
                  f'<line x1="{mid}" x2="{mid}" y1="0" y2="14" stroke="#bbb" stroke-dasharray="2,2"/>{bar}'
                  f'<circle cx="{x(d.rel)}" cy="7" r="3" fill="{color}"/></svg>')


def environment() -> jinja2.Environment:
    """The templates' jinja2 environment: autoescaped, with the formatter's functions as filters."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True)
    env.filters.update(number=F.number, value=F.value, mib=F.mib, estimate=F.estimate, diff=F.diff,
                       provenance=F.provenance, driven_by=F.driven_by, mean_interval=F.mean_interval, share=F.share, ci_svg=ci_svg,
                       dispatch_label=charts.dispatch_label)
    env.tests["missing"] = F.missing
    return env


def _json(data) -> str:
    return json.dumps(data, default=str).replace("</", "<\\/")


def render(analysis, out_dir: Path | None = None) -> Path:
    """Write ``report.html`` of ``analysis`` (a :class:`harness.pipeline.Analysis`) into
    ``out_dir`` (default: the analysis' output folder) and return its path."""
    env = environment()
    t = analysis.tables
    summary = t.summary.copy()
    summary["provenance"] = [F.provenance(r) for _, r in summary.iterrows()]
    all_charts = charts.core_charts(analysis)
    sections = []
    for sec in SECTIONS:
        ctx = sec.context(analysis)
        if ctx is None:
            continue
        figs = sec.charts(t, ctx["n"]) if sec.charts else {}
        all_charts.update(figs)
        sections.append({"id": sec.id, "title": sec.heading(ctx), "html": Markup(env.get_template(sec.template).render(**ctx)),
                         "charts": figs})
    html = env.get_template("report.html.j2").render(
        sections=sections, manifest=t.manifest, summary=summary.to_dict("records"),
        peak_cols=[c for c in summary.columns if c.startswith("peak_rss_bytes_")],
        events=t.events[t.events["kind"].isin(["error", "skip", "cell_status", "device_lost",
                                                "uncaptured_error"])].to_dict("records"),
        envs=t.env, chart_json=_json(all_charts), plotly_js=get_plotlyjs())
    out = Path(out_dir or analysis.out_dir) / "report.html"
    out.write_text(html, encoding="utf-8")
    return out


def render_compare(comparison, path: Path, budgets: list | None = None) -> Path:
    """Write a :class:`harness.verdicts.compare.Comparison` as one offline HTML file (its data
    also embedded as JSON in ``<script id="compare-data">``)."""
    data = _json({**comparison.to_dict(), "budgets": [b.to_dict() for b in budgets or []]})
    html = environment().get_template("compare.html.j2").render(
        c=comparison, budgets=budgets or [], nsig=sum(1 for d in comparison.differences if d.significant), data=data)
    Path(path).write_text(html, encoding="utf-8")
    return Path(path)
