"""One analysis pipeline from a run folder to every file analysis writes.

::

    run folder (manifest.json + samples.jsonl)          ← written by run / serve / merge / native
        │ analyse(run_dir, budgets, baseline)
        ▼
    tables   → stats      → verdicts                      → report
    (.csv)     (stats.*,     (budgets, junit.xml,            (report.html or
                differences)  summary.md, compare.json)       compare.html)
        │ write(analysis): each file once, in that order
        ▼
    out_dir (the run folder itself, or ``report -o DIR`` / ``compare -o DIR``)

``run``, ``serve``, ``merge``, ``native`` (also ``--append``), ``report`` and ``compare`` all end
here, so no folder keeps a stale ``stats.json``/``junit.xml``/``summary.md`` beside new data.
Nothing here touches a browser: any run folder can be analysed again (Lighthouse's "audit saved
artifacts").
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import pandas as pd

from harness import gc_pause
from harness import stats as S
from harness import tables as T
from harness.placement import after_last_step_notes, measurement_notes
from harness.process_types import content_notes, shared_content_notes
from harness.report import render
from harness.report import engines as E
from harness.report import findings as FD
from harness.report.finding import Inputs, compared_on
from harness.report.step_wording import in_steps, run_command, step_word
from harness.stats.bands import Band, chart_bands
from harness.stats.run import RunStats
from harness.stats.workloads import compute_all
from harness.stats.workloads.cycles import COLUMNS as CYCLE_COLUMNS
from harness.store import files
from harness.store.runfolder import check_run_folder
from harness.verdicts import budgets as B
from harness.verdicts import ci_files
from harness.verdicts.compare import Comparison, compare
from harness.verdicts.crosscheck import inject_crosscheck
from harness.verdicts.matching import check_common, run_names

#: Files :func:`write` produces for a run folder, in the order they are written.
RUN_FILES = files.RUN_FILES
#: Files :func:`write` produces for a comparison.
COMPARE_FILES = files.COMPARE_FILES


@dataclass
class Analysis:
    """Everything derived from one run folder (and, for a comparison, a baseline run folder).

    ``tables``: :class:`harness.tables.Tables`; ``stats``: :class:`harness.stats.run.RunStats`;
    ``budgets``: :class:`harness.verdicts.budgets.BudgetResult` per budget; ``workloads``: the
    numbers of workload sections by id (harness/stats/workloads/); ``bands``: per-token chart
    bands by steps.csv column; ``findings``: what the report and summary.md open with
    (harness/report/findings.py); ``engines``: memory per engine side by side
    (harness/report/engines.py); ``measurement``: what was and was not measured, per cell
    (harness/placement.py); ``comparison``: set when a baseline was given."""

    run_dir: Path
    out_dir: Path
    tables: T.Tables
    stats: RunStats
    budgets: list[B.BudgetResult]
    workloads: dict[str, dict] = field(default_factory=dict)
    bands: dict[str, list[Band]] = field(default_factory=dict)
    comparison: Comparison | None = None
    baseline_dir: Path | None = None
    notes: list[str] = field(default_factory=list)
    findings: list[FD.Finding] = field(default_factory=list)
    engines: dict | None = None
    #: how complete each cell's measurement is: clock mapping, realms and shares, warnings
    #: (harness/placement.py ``measurement_notes``); in summary.md's notes, the report, the console
    measurement: list[str] = field(default_factory=list)

    @property
    def failed_budgets(self) -> list[B.BudgetResult]:
        """The budgets that failed."""
        return B.failed(self.budgets)


@gc_pause.paused()  # the samples' millions of dicts, walked by each full collection: harness/gc_pause.py
def analyse(run_dir: Path, budgets: Sequence[B.Budget] = (), baseline: Path | None = None,
            out_dir: Path | None = None, warmup: int = S.DEFAULT_WARMUP) -> Analysis:
    """Read ``run_dir`` and derive tables, statistics, workload numbers and budget verdicts.

    With ``baseline`` (another run folder) the analysis is a comparison: B = ``run_dir``, A =
    ``baseline`` (:func:`harness.verdicts.compare.compare`), and ``baseline`` budgets are checked
    against A. ``out_dir`` defaults to ``run_dir``. Raises
    :class:`harness.store.runfolder.RunFolderError` for a folder that is not a run and
    :class:`harness.verdicts.compare.NoCommonCells` for runs with nothing in common."""
    run_dir = Path(run_dir)
    b_manifest = check_run_folder(run_dir)
    if baseline is not None:  # nothing in common is said from the manifests, before any table is built
        a_name, b_name = run_names(baseline, run_dir)
        check_common(check_run_folder(baseline), b_manifest, a_name, b_name)
    t = T.build(run_dir)
    out = Path(out_dir) if out_dir is not None else run_dir
    if baseline is not None:
        c = compare(T.build(baseline), t, a_name, b_name, warmup, str(baseline), str(run_dir))
        results = B.evaluate(list(budgets), c.b_stats, baseline=c.a_stats)
        notes = [f"A: `{baseline}` ({c.a_manifest.get('created')}), B: `{run_dir}` ({c.b_manifest.get('created')})"]
        notes += compared_on(c)
        notes += [f"⚑ {m.label}: environment differs: {'; '.join(m.env_differs)}" for m in c.matches if m.env_differs]
        if c.only_a or c.only_b:
            notes.append(f"unmatched: only in A: {', '.join(c.only_a) or 'none'}; only in B: {', '.join(c.only_b) or 'none'}")
        notes += [f"`{label}`: {side}: {how}" for side, failed in (("B", c.failed_b), ("A", c.failed_a))
                  for label, how in failed.items()]
        return Analysis(run_dir, out, t, c.b_stats, results, comparison=c, baseline_dir=Path(baseline), notes=notes,
                        findings=FD.compare_findings(c))
    run = S.compute(t, warmup)
    results = B.evaluate(list(budgets), run)
    m = t.manifest
    notes = [f"run `{run_dir.name}`: {len(m.get('cells', []))} cells, "
             f"{(m.get('parameters') or {}).get('repeat', 1)} repetition(s)"]
    if m.get("auto_sample"):
        notes.append(f"auto-sample: {m['auto_sample']['reason']}")
    measurement = (measurement_notes(t.summary, m) + after_last_step_notes(t.memory, t.summary) + content_notes(t.memory)
                   + shared_content_notes(t.memory) + inject_crosscheck(t.summary))
    notes += measurement
    notes += cell_notes(t)
    bands = {col: chart_bands(run, col) for col in ("create_bind_group", "bind_groups_live", "wall_ms")}
    workloads = compute_all(t, run)
    return Analysis(run_dir, out, t, run, results, workloads, bands, notes=notes,
                    findings=in_steps(FD.compute(t, run, workloads), Inputs(t, run, workloads)), engines=E.numbers(t, run),
                    measurement=measurement)


def cell_notes(t: T.Tables, limit: int = 20) -> list[str]:
    """One line per cell that did not end ok or skipped (``cell: status: reason``), for
    summary.md: a failed, incomplete or over-limit cell says so where CI shows it."""
    rows = [r for _, r in t.summary.iterrows() if r.get("status") not in ("ok", "skipped")]
    out = [f"`{r['cell']}`: {r['status']}: {str(r.get('reason') or '')[:400]}" for r in rows[:limit]]
    if len(rows) > limit:
        out.append(f"and {len(rows) - limit} more cells not ok (summary.csv)")
    return out


def chart_bundle() -> Path | None:
    """plotly.js's basic bundle (npm ``plotly.js-basic-dist-min``, pinned in package.json) where
    harness/npm.py finds npm packages, or None (an analysis-only install: the report then embeds
    the full plotly.js of the Python package)."""
    from harness import npm

    try:
        return npm.find("plotly.js-basic-dist-min")[0] / "plotly-basic.min.js"
    except (npm.NpmError, OSError, ValueError):
        return None


@gc_pause.paused()
def write(analysis: Analysis) -> dict[str, Path]:
    """Write every file of ``analysis`` into its ``out_dir``, each once, in the order tables →
    stats → verdicts → report (:data:`RUN_FILES`, or :data:`COMPARE_FILES` for a comparison).
    Returns file name → path.

    Safely (harness/store/files.py): the files are written into a hidden folder inside
    ``out_dir`` and then each renamed over its name, so a link at a name is replaced, never
    written through, and a full disk or an interrupt leaves the previous files whole. Raises
    :class:`harness.store.runfolder.RunFolderError` before writing anything when a name is a link
    or not a regular file, :class:`harness.store.files.DiskFull` (naming the file) when the disk
    fills."""
    out = Path(analysis.out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise files.as_disk_full(exc, out) from None
    names = COMPARE_FILES if analysis.comparison is not None else RUN_FILES
    files.check_outputs(out, names)
    with files.staged(out) as stage:
        written = _write_into(analysis, stage)
        files.commit(stage, out, written)
    return {n: out / n for n in written}


def _write_into(analysis: Analysis, out: Path) -> list[str]:
    """Write every file of ``analysis`` into ``out``; returns their names in order."""
    paths: dict[str, Path] = {}
    if analysis.comparison is not None:
        c = analysis.comparison
        paths["compare.json"] = out / "compare.json"
        paths["compare.json"].write_text(json.dumps({**c.to_dict(), "budgets": [r.to_dict() for r in analysis.budgets]},
                                                    indent=2, default=str), encoding="utf-8")
        for p in ci_files.write_stats(out, None, c.differences, analysis.budgets,
                                      extra={"a": str(analysis.baseline_dir), "b": str(analysis.run_dir),
                                             "findings": [f.to_dict() for f in analysis.findings]}):
            paths[p.name] = p
        paths["junit.xml"] = ci_files.junit_xml(analysis.budgets, out / "junit.xml")
        title = f"webgpu-harness compare: {c.b_name} vs {c.a_name}"
        paths["summary.md"] = ci_files.write_markdown(
            ci_files.markdown(title, None, c.differences, analysis.budgets, analysis.notes, findings=analysis.findings),
            out)
        paths["compare.html"] = render.render_compare(c, out / "compare.html", analysis.budgets, analysis.findings)
        return list(paths)
    T.write(analysis.tables, out)
    paths.update({n: out / n for n in ("summary.csv", "steps.csv", "memory.csv", "buffers.csv")})
    for p in ci_files.write_stats(out, analysis.stats, budgets=analysis.budgets,
                                  extra={"auto_sample": analysis.tables.manifest.get("auto_sample"),
                                         "findings": [f.to_dict() for f in analysis.findings]}):
        paths[p.name] = p
    paths["memory_series.csv"] = ci_files.write_memory_series(out, (analysis.workloads.get("memory") or {}).get("rows", []))
    # one row per ort-run session cycle / lifecycle page load (harness/stats/workloads/cycles.py); a header alone without
    cycles = (analysis.workloads.get("cycles") or {}).get("table")
    paths["cycles.csv"] = out / "cycles.csv"
    (cycles if cycles is not None else pd.DataFrame(columns=CYCLE_COLUMNS)).to_csv(paths["cycles.csv"], index=False)
    paths["junit.xml"] = ci_files.junit_xml(analysis.budgets, out / "junit.xml")
    m = analysis.tables.manifest
    paths["summary.md"] = ci_files.write_markdown(
        ci_files.markdown(f"webgpu-harness {run_command(m)}", analysis.stats, analysis.stats.differences,
                          analysis.budgets, analysis.notes, findings=analysis.findings,
                          step=step_word(analysis.tables.summary.get("workload", pd.Series(dtype=str)).unique())), out)
    paths["report.html"] = render.render(analysis, out, chart_bundle())
    return list(paths)


def analyse_and_write(run_dir: Path, budgets: Sequence[B.Budget] = (), baseline: Path | None = None,
                      out_dir: Path | None = None, warmup: int = S.DEFAULT_WARMUP) -> tuple[Analysis, dict[str, Path]]:
    """:func:`analyse` then :func:`write` (a folder whose output names are links is refused
    before anything is analysed)."""
    out = Path(out_dir) if out_dir is not None else Path(run_dir)
    if out.is_dir():
        files.check_outputs(out, COMPARE_FILES if baseline is not None else RUN_FILES)
    a = analyse(run_dir, budgets, baseline, out_dir, warmup)
    return a, write(a)
