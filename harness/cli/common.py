"""What every command shares: the consoles, the one place bad input becomes exit 2, and how an
analysis is reported on the console.

Exit statuses (every command): 0 fine; 1 a cell or a budget failed; 2 bad input — one line
naming what is wrong and the valid choices, before anything runs; 130 interrupted.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Iterator

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from harness.locations import compare_dir, runs_dir  # noqa: F401 (the commands' defaults)

# Piped output (make run, CI logs) is not a terminal: rich would wrap tables at 80 columns.
console = Console(width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True)

#: Where run folders go without --output: call ``runs_dir()`` (it depends on the current folder and
#: $WEBGPU_HARNESS_RUNS); ``compare_dir()`` for comparisons. Both from harness/locations.py.


def say(message: str) -> None:
    """Print one plain line (no rich markup: reasons hold [brackets])."""
    console.print(message, highlight=False, markup=False, emoji=False, soft_wrap=True)


def fail(message: str) -> None:
    """Print a one-line error and exit 2 (bad input)."""
    err.print(f"error: {message}", highlight=False, soft_wrap=True, markup=False, emoji=False)
    raise typer.Exit(2)


#: Python packages of the ``measure`` extra that run, serve and doctor import (pyproject.toml).
MEASURE_PACKAGES = ("fastapi", "uvicorn", "playwright", "selenium", "onnx")


def require_measure_extra() -> None:
    """Exit 2 with one line naming the missing packages and the install command when the
    ``measure`` extra is not installed (an analysis-only ``pip install webgpu-harness``)."""
    import importlib.util

    missing = [m for m in MEASURE_PACKAGES if importlib.util.find_spec(m) is None]
    if missing:
        fail(f"this command drives browsers and needs the 'measure' extra ({', '.join(missing)} not installed): "
             "pip install 'webgpu-harness[measure]'")


def bad_input_errors() -> tuple[type[Exception], ...]:
    """Exceptions that mean bad input (each with a one-line message)."""
    from harness.plan import PlanError
    from harness.store.merge import MergeError
    from harness.store.runfolder import RunFolderError
    from harness.verdicts.budgets import BudgetError
    from harness.verdicts.compare import NoCommonCells

    return PlanError, BudgetError, RunFolderError, MergeError, NoCommonCells


@contextmanager
def bad_input() -> Iterator[None]:
    """Turn a bad-input exception raised inside the block into one line and exit 2."""
    try:
        yield
    except bad_input_errors() as exc:
        fail(str(exc))


def timestamped(base: Path, suffix: str = "") -> Path:
    """``base/<YYYYmmdd-HHMMSS><suffix>``: the default folder of a new run or comparison."""
    return base / (datetime.now().strftime("%Y%m%d-%H%M%S") + suffix)


def print_summary(analysis) -> None:
    """The per-cell summary table (summary.csv's headline columns) and where numbers came from."""
    import pandas as pd

    from harness.report.format import provenance

    s = analysis.tables.summary
    table = Table(title="summary (per-token values: medians over tokens after the first)")
    heads = {"cell": "cell", "status": "status", "bind_groups_per_token": "bind groups/tok",
             "dispatches_per_token": "dispatches/tok", "submits_per_token": "submits/tok",
             "live_bind_groups_end": "live bind groups", "median_ms_per_token": "ms/tok",
             "tokens_identical": "same tokens"}
    for h in heads.values():
        table.add_column(h, overflow="fold")
    for _, r in s.iterrows():
        cells = []
        for c in heads:
            v = r[c]
            cells.append("" if pd.isna(v) else (f"{v:.1f}" if isinstance(v, float) else str(v)))
        cells[0] = f"{r['browser']} {r['workload']}/{r['variant']} [{r['profile']}]"
        table.add_row(*[Text(c) for c in cells])  # reasons may hold [brackets]: plain text
    console.print(table, markup=False, emoji=False)
    for source in sorted({provenance(r) for _, r in s.iterrows()}):
        say(f"  measured on: {source}")
    for _, r in s[s["status"] != "ok"].iterrows():
        say(f"  {r['cell']}: {r['status']}: {r['reason']}")


def print_budgets(results) -> None:
    """Budget verdicts, one line each, with the measured value and CI."""
    if not results:
        return
    passed = sum(r.status == "passed" for r in results)
    say(f"budgets: {passed} of {len(results)} passed")
    for r in results:
        tag = {"passed": "ok  ", "failed": "FAIL", "skipped": "skip"}[r.status]
        say(f"  {tag} {r.budget.name}: {r.message}")


def print_differences(analysis) -> None:
    """Every ms_per_token difference and every significant headline difference."""
    from harness.report.format import diff
    from harness.stats.metrics import HEADLINE

    for d in analysis.stats.differences:
        if d.metric == "ms_per_token" or (d.significant and d.metric in HEADLINE):
            mark = "significant" if d.significant else "not significant"
            say(f"  {d.b} vs {d.a}: {d.metric} {diff(d)} ({mark})")


def print_comparison(c) -> None:
    """The comparison table (headline and significant differences), flags and unmatched."""
    from harness.report import format as F
    from harness.stats.metrics import HEADLINE

    table = Table(title=f"{c.b_name} (B) vs {c.a_name} (A): B − A, 95% CI")
    for col in ("configuration", "metric", "A", "B", "B − A (relative)", ""):
        table.add_column(col, overflow="fold")
    for m in c.matches:
        for d in m.differences:
            if d.metric not in HEADLINE and not d.significant:
                continue
            row = (m.label + (" ⚑" if m.env_differs else ""), d.metric, F.estimate(m.a.metrics[d.metric]),
                   F.estimate(m.b.metrics[d.metric]), F.diff(d), "significant" if d.significant else "")
            table.add_row(*(Text(x) for x in row))
    console.print(table)
    for m in c.matches:
        if m.env_differs:
            say(f"  ⚑ {m.label}: environment differs: {'; '.join(m.env_differs)}")
    for what, labels in (("only in A", c.only_a), ("only in B", c.only_b)):
        if labels:
            say(f"  {what}: {', '.join(labels)}")
    n = sum(1 for d in c.differences if d.significant)
    say(f"{n} significant difference(s)" if n else "no significant differences")


def update_index(folder: Path) -> None:
    """Rebuild the run index (``index.html``) that the run or comparison ``folder`` belongs in
    (harness/report/index.py ``target_for``: the default places, or ``ROOT/runs/X`` /
    ``ROOT/compare/X``); nothing for a folder elsewhere."""
    from harness.pipeline import chart_bundle
    from harness.report import index

    target = index.target_for(folder)
    if target is None:
        return
    runs, comps, out = target
    try:
        say(f"index: {index.write(out, runs, comps, chart_bundle())}")
    except Exception as exc:  # noqa: BLE001 - the run's own files are written; the index must not fail it
        err.print(f"index not rebuilt: {type(exc).__name__}: {exc}", highlight=False, markup=False)


def finish(run_dir: Path, budgets=(), summary: bool = True):
    """End of every command that wrote a run folder: analyse it, write every file
    (harness/pipeline.py), print the summary, differences and budget verdicts. Returns the
    :class:`harness.pipeline.Analysis`."""
    from harness import pipeline

    with bad_input():
        analysis, paths = pipeline.analyse_and_write(run_dir, budgets)
    if summary:
        print_summary(analysis)
        print_differences(analysis)
        print_budgets(analysis.budgets)
    say(f"report: {paths['report.html']}")
    update_index(run_dir)
    return analysis
