"""Report section "Statistics": estimates with 95% CIs, variant differences, budget results,
auto-sample outcome and a manifest panel; plus CI bands on the per-token charts.

The statistics are computed from the report's :class:`harness.tables.Tables` (once, cached on
it); budget results exist only when ``run``/``compare``/``merge`` attached them with
:func:`attach` before rendering.
"""

from __future__ import annotations

import json

import jinja2
from markupsafe import Markup
import numpy as np
import plotly.graph_objects as go

from harness import report
from harness import stats as S
from harness.ci_outputs import fmt_diff, fmt_estimate, fmt_value

#: steps.csv column of a per-token chart (harness/report.py ``charts``) → metric whose CI it shows.
CHART_METRICS = {"wall_ms": "ms_per_token", "create_bind_group": "bind_groups_per_token",
                 "bind_groups_live": "live_bind_groups_growth_per_token"}
_ATTR = "_stats_section"
_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]


def attach(tables, run: S.RunStats | None = None, budgets: list | None = None) -> None:
    """Give the section precomputed statistics and/or budget results for ``tables``."""
    cache = getattr(tables, _ATTR, {})
    if run is not None:
        cache["run"] = run
    if budgets is not None:
        cache["budgets"] = budgets
    setattr(tables, _ATTR, cache)


def stats_of(tables) -> S.RunStats:
    """The :class:`harness.stats.RunStats` of ``tables`` (computed once)."""
    cache = getattr(tables, _ATTR, {})
    if "run" not in cache:
        cache["run"] = S.compute(tables)
        setattr(tables, _ATTR, cache)
    return cache["run"]


def _rgba(color: str, alpha: float) -> str:
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def add_bands(fig: go.Figure, tables, column: str) -> None:
    """CI bands on a per-token chart (hooked into ``report._line_chart`` via ``CHART_BANDS``):
    a shaded warm-up region; per group with ≥ 2 repetitions, the 95% t-interval of the mean
    across repetitions at each token; per group, the 95% CI of the headline estimate after
    warm-up (median per token, or the Theil–Sen growth line for live objects)."""
    metric = CHART_METRICS.get(column)
    if metric is None or not len(tables.steps):
        return
    run = stats_of(tables)
    if run.warmup > 0:
        fig.add_vrect(x0=-0.5, x1=run.warmup - 0.5, fillcolor="#999", opacity=0.15, line_width=0,
                      annotation_text="warm-up (excluded)", annotation_position="top left")
    for i, (key, g) in enumerate((k, g) for k, g in run.groups.items() if g.cells):
        color = _COLORS[i % len(_COLORS)]
        cells = run.ok_cells(key)
        per = [c.steps.set_index("step")[column].dropna() for c in cells if column in c.steps]
        per = [p for p in per if len(p)]
        if len(per) >= 2:
            frame = np.vstack([p.reindex(range(int(max(len(q) for q in per)))).to_numpy(float) for p in per])
            n = np.sum(~np.isnan(frame), axis=0)
            mean = np.nanmean(frame, axis=0)
            sd = np.nanstd(frame, axis=0, ddof=1)
            from scipy.stats import t as student_t

            half = np.where(n >= 2, student_t.ppf(0.5 + run.confidence / 2, np.maximum(n - 1, 1)) * sd / np.sqrt(n), np.nan)
            xs = np.arange(frame.shape[1])
            ok = ~np.isnan(half)
            x_poly = list(xs[ok]) + list(xs[ok][::-1])
            # every charted quantity (ms, calls, live wrappers) is ≥ 0: a wide t band is clipped there
            y_poly = list((mean + half)[ok]) + list(np.maximum(mean - half, 0)[ok][::-1])
            fig.add_trace(go.Scatter(x=[int(v) for v in x_poly], y=[float(v) for v in y_poly], fill="toself",
                                     mode="lines", line={"width": 0}, fillcolor=_rgba(color, 0.18), hoverinfo="skip",
                                     name=f"{key.label}: 95% CI of the mean over {len(per)} repetitions",
                                     meta={"band": "repetitions", "group": key.label, "variant": key.variant}))
        e = g.metrics.get(metric)
        if e is None or e.value is None:
            continue
        last = max(int(c.steps["step"].max()) for c in cells if len(c.steps))
        if e.kind == "slope":
            ys = np.concatenate([c.steps.loc[c.steps["step"] >= run.warmup, column].dropna().to_numpy(float) for c in cells])
            xs = np.concatenate([c.steps.loc[c.steps["step"] >= run.warmup].dropna(subset=[column])["step"].to_numpy(float) for c in cells])
            if not len(xs):
                continue
            icpt = float(np.median(ys - e.value * xs))
            x = [run.warmup, last]
            name = f"{key.label}: growth {e.value:.3g} {e.unit}" + (f" [{e.ci_low:.3g}, {e.ci_high:.3g}]" if e.ci_low is not None else "")
            fig.add_trace(go.Scatter(x=x, y=[icpt + e.value * v for v in x], mode="lines",
                                     line={"dash": "dash", "color": color}, name=name,
                                     meta={"band": "slope", "group": key.label, "variant": key.variant, "metric": metric}))
            continue
        lo, hi = (e.ci_low, e.ci_high) if e.ci_low is not None else (e.value, e.value)
        fig.add_trace(go.Scatter(x=[run.warmup, last, last, run.warmup], y=[lo, lo, hi, hi], fill="toself", mode="lines",
                                 line={"width": 0}, fillcolor=_rgba(color, 0.25), hoverinfo="skip",
                                 name=f"{key.label}: {e.stat} {fmt_estimate(e)} {e.unit} (95% CI)",
                                 meta={"band": "estimate", "group": key.label, "variant": key.variant, "metric": metric,
                                       "value": e.value, "ci_low": e.ci_low, "ci_high": e.ci_high}))
        fig.add_trace(go.Scatter(x=[run.warmup, last], y=[e.value, e.value], mode="lines",
                                 line={"dash": "dot", "color": color, "width": 1}, showlegend=False, hoverinfo="skip",
                                 name=f"{key.label}: {e.stat}",
                                 meta={"band": "estimate-line", "group": key.label, "variant": key.variant}))


_TEMPLATE = jinja2.Environment(autoescape=True).from_string("""
<p class="note">Per-token values exclude warm-up token{{ 's' if warmup != 1 }} 0{% if warmup > 1 %}..{{ warmup - 1 }}{% endif %}
(shaded on the charts). Value [95% CI]: per-token metrics give the median over the tokens of every repetition, CI by
bootstrap (scipy.stats.bootstrap, {{ n_resamples }} resamples; BCa for means, percentile for medians); per-cell metrics give the mean over
repetitions, CI by Student's t (none from one repetition); growth is a Theil–Sen slope per token with Sen's CI.
Tokens of one browser context are not independent draws: repetitions in fresh contexts (<code>--repeat</code>,
run round-robin across variants) are what put context-to-context variation into the intervals.</p>
{% if budgets %}
<h3>Budgets: {{ budgets|selectattr("status", "equalto", "passed")|list|length }} of {{ budgets|length }} passed</h3>
<table><tr><th class="l">result</th><th class="l">budget</th><th class="l">measured (95% CI) and limit</th></tr>
{% for b in budgets %}<tr><td class="l {{ {'passed': 'ok', 'failed': 'failed', 'skipped': 'skipped'}[b.status] }}">{{ b.status }}</td>
<td class="l"><code>{{ b.budget.text }}</code><br><span class="note">{{ b.budget.source }}</span></td>
<td class="l">{% for c in b.checks %}<div class="{{ 'ok' if c.passed else 'failed' }}">{{ c.message }}</div>{% else %}{{ b.message }}{% endfor %}</td></tr>
{% endfor %}</table>
{% endif %}
{% if auto %}<h3>Auto-sampling</h3><p>{{ auto.reason }} ({{ auto.repetitions }} repetitions, {{ "%.0f"|format(auto.elapsed_s) }} s; conditions {{ auto.conditions|join(", ") }}).</p>{% endif %}
<h3>Estimates per configuration</h3>
<table><tr><th class="l">configuration</th><th>reps</th>{% for m in metrics %}<th>{{ m }}</th>{% endfor %}<th class="l">environment</th></tr>
{% for g in groups %}<tr><td class="l">{{ g.key.label }}{% if g.failed %} <span class="failed">({{ g.failed|length }} failed)</span>{% endif %}</td><td>{{ g.cells|length }}</td>
{% for m in metrics %}<td title="{{ g.metrics[m].ci_method if m in g.metrics }}">{{ est(g.metrics.get(m)) }}</td>{% endfor %}
<td class="l">{% for k, v in g.env.items() if k in ("browser_version", "adapter", "webgpu", "machine") %}{{ k }}: {{ v|join(" / ") }}{{ "; " if not loop.last }}{% endfor %}</td></tr>
{% endfor %}</table>
<details><summary>Every metric ({{ all_rows|length }} rows; also stats.csv)</summary>
<table><tr><th class="l">configuration</th><th class="l">metric</th><th class="l">stat</th><th>value [95% CI]</th><th>median</th><th>mean</th><th>n</th><th>reps</th><th class="l">CI method</th></tr>
{% for r in all_rows %}<tr><td class="l">{{ r.group }}</td><td class="l">{{ r.metric }}</td><td class="l">{{ r.e.stat }}</td><td>{{ est(r.e) }} {{ r.e.unit }}</td>
<td>{{ val(r.e.median, r.e.unit) }}</td><td>{{ val(r.e.mean, r.e.unit) }}</td><td>{{ r.e.n }}</td><td>{{ r.e.n_reps }}</td><td class="l">{{ r.e.ci_method }}</td></tr>{% endfor %}
</table></details>
{% if diffs %}
<h3>Variant differences (b − a; <b>bold</b>: the 95% CI excludes 0)</h3>
<table><tr><th class="l">b</th><th class="l">a</th><th class="l">metric</th><th>a</th><th>b</th><th>b − a [95% CI] (relative)</th>
<th>b / a − 1 on ±{{ "%.0f"|format(scale * 100) }}%</th><th class="l">CI method</th></tr>
{% for d in diffs %}<tr><td class="l">{{ d.b }}</td><td class="l">{{ d.a }}</td><td class="l">{{ d.metric }}</td><td>{{ val(d.a_value, d.unit) }}</td><td>{{ val(d.b_value, d.unit) }}</td>
<td>{% if d.significant %}<b>{{ dif(d) }}</b>{% else %}{{ dif(d) }}{% endif %}</td><td>{{ svg(d, scale) }}</td><td class="l">{{ d.ci_method }}</td></tr>{% endfor %}
</table>
{% endif %}
<h3>Manifest</h3>
{% if sources %}<p>Merged from {{ sources|length }} runs; each cell keeps its own environment.</p>
<table><tr><th class="l">source</th><th class="l">created</th><th class="l">OS</th><th class="l">CPU</th><th class="l">browsers</th><th class="l">harness</th><th>cells</th></tr>
{% for s in sources %}<tr><td class="l">{{ s.label }}</td><td class="l">{{ s.created }}</td><td class="l">{{ s.os }}</td><td class="l">{{ s.cpu }} ({{ s.cpu_count }} logical)</td>
<td class="l">{% for n, b in (s.browsers or {}).items() %}{{ n }} {{ b.version }}{{ ", " if not loop.last }}{% endfor %}</td><td class="l">{{ s.harness_version }} · {{ s.git_commit }}</td><td>{{ s.cells }}</td></tr>{% endfor %}
</table>{% endif %}
<table>
<tr><th class="l">cells</th><td class="l">{{ n_cells }} ({{ statuses }})</td></tr>
<tr><th class="l">repetitions</th><td class="l">{{ manifest.parameters.repeat if manifest.parameters else "—" }}</td></tr>
<tr><th class="l">statistics</th><td class="l">warm-up {{ warmup }} token(s), confidence {{ confidence }}, {{ n_resamples }} bootstrap resamples, seed {{ seed }}</td></tr>
</table>
<details><summary>manifest.json (without its cells)</summary><pre style="white-space:pre-wrap">{{ manifest_json }}</pre></details>
""")


def ci_svg(d: S.Difference, scale: float) -> Markup:
    """An inline SVG (160 × 14 px) of ``d``'s relative difference and its CI on ±``scale``
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


@report.section
def statistics(tables) -> dict | None:
    """The section (``report.SECTIONS``): id ``statistics``."""
    if not tables.manifest.get("cells"):
        return None
    run = stats_of(tables)
    cache = getattr(tables, _ATTR, {})
    groups = list(run.groups.values())
    metrics = [m for m in S.HEADLINE if any(m in g.metrics for g in groups)]
    all_rows = [{"group": g.key.label, "metric": m, "e": e} for g in groups for m, e in g.metrics.items()]
    diffs = [d for d in run.differences if d.metric in S.HEADLINE or d.significant]
    bounds = [abs(v) for d in diffs for v in (d.rel, d.rel_low, d.rel_high) if v is not None]
    scale = min(max(bounds, default=1.0), 2.0) or 1.0
    statuses = {}
    for c in tables.manifest.get("cells", []):
        statuses[c.get("status")] = statuses.get(c.get("status"), 0) + 1
    sources = tables.manifest.get("merged_from") or []
    manifest = {k: v for k, v in tables.manifest.items() if k != "cells"}
    html = _TEMPLATE.render(
        warmup=run.warmup, confidence=run.confidence, n_resamples=S.N_RESAMPLES, seed=S.SEED,
        budgets=cache.get("budgets") or [], auto=tables.manifest.get("auto_sample"), groups=groups, metrics=metrics,
        all_rows=all_rows, diffs=diffs, sources=sources, manifest=tables.manifest,
        n_cells=len(tables.manifest.get("cells", [])), statuses=", ".join(f"{v} {k}" for k, v in statuses.items()),
        manifest_json=json.dumps(manifest, indent=2, default=str),
        est=fmt_estimate, val=fmt_value, dif=fmt_diff, svg=ci_svg, scale=scale)
    return {"id": "statistics", "title": "Statistics: 95% confidence intervals, differences, budgets",
            "html": html, "charts": {}}


if hasattr(report, "CHART_BANDS") and add_bands not in report.CHART_BANDS:
    report.CHART_BANDS.append(add_bands)
