"""The run index, ``reports/index.html``: every run folder under a reports root (``runs/*``),
newest first, with its date, commit, browsers, cell outcomes, budget verdicts, headline numbers
per configuration and links; every comparison (``compare/*``); and trend charts of the headline
numbers across runs of the same configuration — what a CI history page shows.

It reads only what the pipeline wrote (``manifest.json``, ``stats.json``; harness/pipeline.py)
and copes with old or partial folders: a folder without ``stats.json`` (interrupted before its
analysis, or made by an older harness) is listed with what its manifest says and how to
analyse it; a folder whose files cannot be read is listed with the reason. Nothing here
computes a statistic: values and CIs are the ones each run's ``stats.json`` holds.

Rebuilt by the CLI after every ``run``, ``merge``, ``report``, ``native`` and ``compare``: for
output in the default places (harness/locations.py: a clone's ``reports/runs`` and
``reports/compare`` → ``reports/index.html``) that index, for output elsewhere the index in the
folder holding it (``-o /tmp/runs/r1`` → ``/tmp/runs/index.html``; :func:`target_for`), never an
``index.html`` there that is not one of ours (:func:`ours`); and by ``webgpu-harness index [ROOT]``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import plotly.graph_objects as go

from harness import locations
from harness.store.runfolder import read_json_object
from harness.report import format as F
from harness.report.charts import _LAYOUT, COLORS, fig_dict
from harness.report.finding import PROCESS_ROLES

#: Headline metrics of a configuration in the index and its trend charts: (label, metric or
#: ``role:<role>`` for that role's ``rss_growth_bytes_per_token_<type>``).
HEADLINE = (("createBindGroup / token", "bind_groups_per_token"),
            ("live bind groups growth / token", "live_bind_groups_growth_per_token"),
            ("content RSS growth / token", "role:content"),
            ("ms / token", "ms_per_token"))
#: Folder names under a reports root.
RUNS, COMPARE = "runs", "compare"


@dataclass
class RunEntry:
    """One run folder as the index shows it. ``configs``: per configuration of ``stats.json``
    its label, params and headline estimates (metric → estimate dict); ``problem``: why the
    folder is listed without numbers (None when it has them)."""

    name: str
    path: Path
    created: str = ""
    commit: str = ""
    browsers: list[str] = field(default_factory=list)
    workloads: list[str] = field(default_factory=list)
    statuses: dict[str, int] = field(default_factory=dict)
    budgets: dict[str, int] = field(default_factory=dict)
    configs: list[dict] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    #: the same findings under their scopes (``[(scope, [text, …]), …]`` in order: browser ·
    #: adapter · WebGPU — workload@profile, e.g. an app run's cdp and proxy cells apart)
    scoped_findings: list[tuple[str, list[str]]] = field(default_factory=list)
    has_report: bool = False
    problem: str | None = None


def _headline(metrics: dict) -> dict[str, dict]:
    out = {}
    for label, metric in HEADLINE:
        if metric.startswith("role:"):
            metric = next((f"rss_growth_bytes_per_token_{t}" for t in PROCESS_ROLES[metric[5:]]
                           if f"rss_growth_bytes_per_token_{t}" in metrics), "")
        if metric in metrics:
            out[label] = metrics[metric]
    return out


def read_run(d: Path) -> RunEntry:
    """A run folder as a :class:`RunEntry`; never raises for a folder's content: a damaged one
    (a FIFO or device where a file should be, JSON of the wrong shape) is listed with its problem."""
    e = RunEntry(d.name, d, has_report=(d / "report.html").exists())
    try:
        return _read_run(d, e)
    except (AttributeError, TypeError, KeyError, ValueError, RecursionError) as exc:  # a file of the wrong shape
        e.problem = f"not a run folder as the harness writes one: {type(exc).__name__}: {str(exc)[:120]}"
        e.configs, e.findings, e.scoped_findings = [], [], []
        return e


def _read_run(d: Path, e: RunEntry) -> RunEntry:
    try:
        m = read_json_object(d / "manifest.json")
    except (OSError, ValueError) as exc:
        e.problem = f"manifest.json unreadable: {type(exc).__name__}: {str(exc)[:120]}"
        return e
    e.created = str(m.get("created") or "")
    e.commit = str(m.get("git_commit") or "")
    e.browsers = [f"{n} {(b or {}).get('version', '')}".strip() for n, b in (m.get("browsers") or {}).items()]
    cells = m.get("cells") or []
    e.workloads = list(dict.fromkeys(str(c.get("workload")) for c in cells))
    for c in cells:
        e.statuses[str(c.get("status"))] = e.statuses.get(str(c.get("status")), 0) + 1
    stats_path = d / "stats.json"
    if not stats_path.exists():
        e.problem = f"not analysed (no stats.json): webgpu-harness report {d}"
        return e
    try:
        s = read_json_object(stats_path)
    except (OSError, ValueError) as exc:
        e.problem = f"stats.json unreadable: {type(exc).__name__}: {str(exc)[:120]}"
        return e
    for b in s.get("budgets") or []:
        e.budgets[str(b.get("status"))] = e.budgets.get(str(b.get("status")), 0) + 1
    for g in s.get("groups") or []:
        if g.get("metrics"):
            env = g.get("env") or {}
            e.configs.append({"group": g.get("group"), "params": g.get("params", "{}"),
                              "browser_version": "/".join(env.get("browser_version") or []),
                              "headline": _headline(g["metrics"])})
    e.findings = [f.get("text", "") for f in s.get("findings") or []]
    for f in s.get("findings") or []:
        if not e.scoped_findings or e.scoped_findings[-1][0] != f.get("scope", ""):
            e.scoped_findings.append((f.get("scope", ""), []))
        e.scoped_findings[-1][1].append(f.get("text", ""))
    return e


def read_compare(d: Path) -> dict | None:
    """A comparison folder: ``{name, path, a, b, significant, matches, has_html}`` or None."""
    try:
        c = read_json_object(d / "compare.json")
        return {"name": d.name, "path": d, "a": (c.get("a") or {}).get("name"), "b": (c.get("b") or {}).get("name"),
                "significant": c.get("significant"), "matches": len(c.get("matches") or []),
                "has_html": (d / "compare.html").exists()}
    except (OSError, ValueError, AttributeError, TypeError, RecursionError):
        return None


def trend_charts(entries: list[RunEntry]) -> dict[str, dict]:
    """Per headline metric, one trace per configuration (group label + parameters) found in at
    least two runs: its value and 95% CI per run, in run order. Chart ids ``trend_<i>``."""
    series: dict[tuple, list] = {}
    for e in sorted((e for e in entries if e.configs), key=lambda e: e.created):
        for c in e.configs:
            series.setdefault((c["group"], c["params"]), []).append((e, c))
    series = {k: v for k, v in series.items() if len(v) >= 2}
    out = {}
    for i, (label, _) in enumerate(HEADLINE):
        fig = go.Figure()
        for j, ((group, _params), points) in enumerate(series.items()):
            pts = [(e, c["headline"][label]) for e, c in points if label in c["headline"]]
            if len(pts) < 2:
                continue
            unit = pts[0][1].get("unit", "")
            scale = 2**10 if "bytes" in unit else 1
            ys = [(p.get("value") or 0) / scale for _, p in pts]
            hi = [((p.get("ci_high") if p.get("ci_high") is not None else p.get("value")) or 0) / scale - y
                  for (_, p), y in zip(pts, ys)]
            lo = [y - ((p.get("ci_low") if p.get("ci_low") is not None else p.get("value")) or 0) / scale
                  for (_, p), y in zip(pts, ys)]
            fig.add_trace(go.Scatter(
                x=[e.created for e, _ in pts], y=ys, mode="lines+markers", name=group,
                line={"color": COLORS[j % len(COLORS)]},
                error_y={"type": "data", "array": hi, "arrayminus": lo, "visible": True},
                customdata=[[e.name, e.commit[:10]] for e, _ in pts],
                hovertemplate=f"<b>{group}</b><br>run %{{customdata[0]}} · commit %{{customdata[1]}}<br>"
                              f"%{{y:.4g}} {'KiB/token' if scale != 1 else unit}<extra></extra>",
                meta={"group": group, "runs": [e.name for e, _ in pts]}))
        if fig.data:
            fig.update_layout(title={"text": f"{label} across runs (value and 95% CI)", "y": 0.98, "yanchor": "top"},
                              xaxis_title="run created", yaxis_title=label, height=380, **_LAYOUT)
            out[f"trend_{i}"] = fig_dict(fig)
    return out


#: What every index page holds (reports/templates/index.html.j2): an ``index.html`` without it is
#: not ours and is never written over by a run's index.
MARK = "<title>webgpu-harness runs</title>"


def ours(out: Path) -> bool:
    """Whether ``out`` may be (re)written as a run index: absent, or an index this tool wrote."""
    try:
        with open(out, encoding="utf-8", errors="replace") as fh:
            return MARK in fh.read(4096)
    except FileNotFoundError:
        return True
    except OSError:
        return False


def for_root(root: Path) -> tuple[Path, Path, Path]:
    """(runs folder, comparisons folder, index file) of a reports root: ``ROOT/runs``,
    ``ROOT/compare``, ``ROOT/index.html``."""
    root = Path(root)
    return root / RUNS, root / COMPARE, root / "index.html"


def default_target() -> tuple[Path, Path, Path]:
    """The index of the default output places (harness/locations.py): a clone's
    ``reports/runs`` and ``reports/compare`` → ``reports/index.html``; elsewhere
    ``./webgpu-harness-runs/`` (comparisons in its ``compare/``) → its ``index.html``."""
    return locations.runs_dir(), locations.compare_dir(), locations.index_file()


def target_for(folder: Path) -> tuple[Path, Path, Path]:
    """The index a run or comparison ``folder`` belongs in: :func:`default_target` when it lies
    in a default place (a clone's ``reports/runs/X`` → ``reports/index.html``); else the folder
    holding it, ``P/index.html`` listing the runs and comparisons in ``P`` (``--output
    /tmp/runs/r1`` → ``/tmp/runs/index.html``): never a folder above the one the user named.
    ``webgpu-harness index ROOT`` writes a reports root's ``ROOT/index.html`` (:func:`for_root`)."""
    folder = Path(folder).resolve()
    runs, comps, out = default_target()
    if folder.parent in (runs.resolve(), comps.resolve()):
        return runs, comps, out
    return folder.parent, folder.parent, folder.parent / "index.html"


def build(runs_dir: Path, compare_dir: Path | None = None) -> tuple[list[RunEntry], list[dict]]:
    """Every run folder in ``runs_dir`` (newest first; ``compare_dir`` itself skipped when it
    lies inside) and every comparison in ``compare_dir``. When both are one folder (a run's own
    parent, :func:`target_for`), only its folders holding a ``manifest.json`` are runs and those
    holding a ``compare.json`` comparisons: the other folders there are not ours."""
    runs_dir = Path(runs_dir)
    skip = Path(compare_dir).resolve() if compare_dir is not None else None
    shared = skip == runs_dir.resolve()
    runs = ([read_run(d) for d in sorted(runs_dir.iterdir()) if d.is_dir() and d.resolve() != skip
             and (not shared or ((d / "manifest.json").is_file() and not (d / "compare.json").exists()))]
            if runs_dir.is_dir() else [])
    runs.sort(key=lambda e: (e.created or "", e.name), reverse=True)
    comps = ([c for c in (read_compare(d) for d in sorted(Path(compare_dir).iterdir()) if d.is_dir()) if c]
             if compare_dir is not None and Path(compare_dir).is_dir() else [])
    comps.sort(key=lambda c: c["name"], reverse=True)
    return runs, comps


def write(out: Path, runs_dir: Path, compare_dir: Path | None = None, basic_bundle: Path | None = None) -> Path:
    """Write the index of ``runs_dir`` and ``compare_dir`` to the file ``out`` (links relative
    to it) and return its path (``basic_bundle``: as :func:`harness.report.render.plotly_js`)."""
    from harness.report.render import _json, environment, plotly_js

    out = Path(out)
    runs, comps = build(runs_dir, compare_dir)
    charts = trend_charts(runs)
    for e in runs:
        e.link = Path(os.path.relpath(e.path / "report.html", out.parent)).as_posix()
    for c in comps:
        c["link"] = Path(os.path.relpath(c["path"] / "compare.html", out.parent)).as_posix()
    html = environment().get_template("index.html.j2").render(
        runs=runs, comps=comps, root=str(Path(runs_dir).resolve()), headline=[label for label, _ in HEADLINE],
        chart_json=_json(charts), charts=charts, plotly_js=plotly_js(charts, basic_bundle) if charts else "",
        fmt_estimate=F.estimate)
    out.parent.mkdir(parents=True, exist_ok=True)
    from harness.store.files import write_atomic

    write_atomic(out, html)  # a temporary file renamed over it: never through a link, never half-written
    return out
