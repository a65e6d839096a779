"""Renders an analysis into one self-contained HTML file (jinja2 + plotly.js inlined), and a
comparison into compare.html. Renders only: every number comes from the analysis
(harness/pipeline.py), every string through harness/report/format.py.

The report opens offline: plotly.js is embedded once (:func:`plotly_js`), each chart's data is
embedded as JSON (``<script type="application/json" id="chart-data">``, also what tests read).
Every trace and table row says where its numbers came from: browser + version, adapter, and
whether WebGPU was real or emulated (in the hover text and the legend key when names are short).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

import jinja2
from markupsafe import Markup, escape
from plotly.offline import get_plotlyjs

from harness import locations
from harness.report import format as F
from harness.report.charts import Names
from harness.report.sections import SECTIONS
from harness.report.workload_charts import dispatch_label
from harness.report.finding import measured_on, quantity, values_basis
from harness.report.step_wording import per_step

TEMPLATES = locations.templates_dir()
#: Trace types of plotly.js's "basic" bundle (``plotly.js-basic-dist-min``, pinned in package.json:
#: 1.2 MB instead of the full bundle's 4.8 MB); every trace type the report draws. The caller
#: finds the bundle (harness/pipeline.py ``chart_bundle``: npm packages are the measuring half's
#: business) and passes its path; it is used only when its version is the Python package's own
#: plotly.js version (the figure JSON is written for that version), else the full bundle that
#: ships with the Python package is embedded.
BASIC_TRACES = {"scatter", "bar", "pie"}


def _version(js: str) -> str | None:
    m = re.search(r"plotly\.js[^\n]*?v(\d+\.\d+\.\d+)", js[:400])
    return m.group(1) if m else None


@lru_cache(maxsize=4)
def _bundles(basic_path: Path | None) -> tuple[str, str | None]:
    full = get_plotlyjs()
    try:
        basic = Path(basic_path).read_text(encoding="utf-8") if basic_path is not None else None
    except OSError:
        basic = None
    if basic is not None and _version(basic) != _version(full):
        basic = None
    return full, basic


def plotly_js(figures: dict, basic_bundle: Path | None = None) -> str:
    """The plotly.js source to embed for ``figures`` (chart id → figure dict): the basic bundle
    at ``basic_bundle`` when every trace is one of :data:`BASIC_TRACES` and its version matches
    the Python package's plotly.js, else the full bundle that ships with the Python package."""
    full, basic = _bundles(basic_bundle)
    types = {t.get("type", "scatter") for f in figures.values() for t in f.get("data", [])}
    return basic if basic is not None and types <= BASIC_TRACES else full


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
    return Markup(f'<svg class="ci" width="{w}" height="14" role="img" aria-label="{d.rel * 100:+.1f}%">'
                  f'<line x1="{mid}" x2="{mid}" y1="0" y2="14" stroke="#bbb" stroke-dasharray="2,2"/>{bar}'
                  f'<circle cx="{x(d.rel)}" cy="7" r="3" fill="{color}"/></svg>')


def wbr(text) -> Markup:
    """``text`` escaped, with a line-break opportunity after each ``_``, ``/`` and ``,`` and before a
    ``[`` (long metric names and group labels such as ``chromium/dispatch-overhead/fresh@default
    [pacing=none,main_thread=false]`` wrap inside a narrow column instead of widening the table)."""
    out = str(escape(str(text)))
    for a, b in (("_", "_<wbr>"), ("/", "/<wbr>"), (",", ",<wbr>"), ("[", "<wbr>[")):
        out = out.replace(a, b)
    return Markup(out)


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The templates' jinja2 environment, made once per process (shared: not to be changed), so
    its templates are compiled once per process: autoescaped, with the formatter's functions as
    filters. No cache of compiled templates on disk: jinja2's default one chmods whatever is at
    its path in the temporary folder and runs the code it reads back unchecked."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True)
    env.filters.update(number=F.number, value=F.value, mib=F.mib, estimate=F.estimate, diff=F.diff,
                       provenance=F.provenance, driven_by=F.driven_by, mean_interval=F.mean_interval, share=F.share,
                       ci_svg=ci_svg, dispatch_label=dispatch_label, quantity=quantity, profile=F.profile, text=F.text,
                       wbr=wbr, reason=F.reason)
    env.filters.update(measured_on=measured_on, values_basis=values_basis, per_step=per_step)
    env.tests["missing"] = F.missing
    env.tests["string"] = lambda v: isinstance(v, str)
    return env


def _json(data) -> str:
    return json.dumps(data, default=str, separators=(",", ":")).replace("</", "<\\/")


def render(analysis, out_dir: Path | None = None, basic_bundle: Path | None = None) -> Path:
    """Write ``report.html`` of ``analysis`` (a :class:`harness.pipeline.Analysis`) into
    ``out_dir`` (default: the analysis' output folder) and return its path. ``basic_bundle``:
    plotly.js's basic bundle, embedded instead of the full one when it fits (:func:`plotly_js`)."""
    env = environment()
    t = analysis.tables
    names = Names(t.summary, {c["cell"]: c.get("sweep") for c in t.manifest.get("cells", [])})
    all_charts: dict[str, dict] = {}
    sections = []
    for sec in SECTIONS:
        ctx = sec.context(analysis, names)
        if ctx is None:
            continue
        ctx = {"word": names.step, **ctx}  # what a step is called: "token", or "step" (harness/report/charts.py)
        figs = sec.charts(analysis, ctx, names) if sec.charts else {}
        all_charts.update(figs)
        sections.append({"id": sec.id, "title": sec.heading(ctx), "charts": figs,
                         "html": Markup(env.get_template(sec.template).render(**ctx, charts=figs))})
    html = env.get_template("report.html.j2").render(
        sections=sections, manifest=t.manifest, browsers=sorted(set(t.summary["browser"])) if len(t.summary) else [],
        workloads=list(dict.fromkeys(t.summary["workload"])) if len(t.summary) else [],
        events=t.events[t.events["kind"].isin(["error", "skip", "cell_status", "device_lost", "uncaptured_error",
                                                "refused", "gap", "process_exit", "app_error", "frame",
                                                "warning"])].to_dict("records"),
        measurement=getattr(analysis, "measurement", []),
        envs=t.env, chart_json=_json(all_charts), plotly_js=plotly_js(all_charts, basic_bundle), word=names.step)
    out = Path(out_dir or analysis.out_dir) / "report.html"
    out.write_text(html, encoding="utf-8")
    return out


def render_compare(comparison, path: Path, budgets: list | None = None, findings: list | None = None) -> Path:
    """Write a :class:`harness.verdicts.compare.Comparison` as one offline HTML file (its data
    also embedded as JSON in ``<script id="compare-data">``), its findings on top."""
    data = _json({**comparison.to_dict(), "budgets": [b.to_dict() for b in budgets or []]})
    bounds = [abs(v) for d in comparison.differences for v in (d.rel, d.rel_low, d.rel_high) if v is not None]
    html = environment().get_template("compare.html.j2").render(
        c=comparison, budgets=budgets or [], nsig=sum(1 for d in comparison.differences if d.significant), data=data,
        findings=findings or [], scale=min(max(bounds, default=1.0), 2.0) or 1.0)
    Path(path).write_text(html, encoding="utf-8")
    return Path(path)
