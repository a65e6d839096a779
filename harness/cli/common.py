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


@contextmanager
def disk_errors(folder: Path, quiet: bool = False) -> Iterator[None]:
    """A write that failed (a full disk: ``<file>: no space left on device``; a folder that
    turned read-only) as one line and exit 1; what was written before stays readable
    (harness/store/files.py writes by temporary file and rename). ``quiet``: the line was said
    already (the run's own full disk), exit 1 without another."""
    from harness.store.files import DiskFull

    try:
        yield
    except DiskFull as exc:
        if not quiet:
            held = (Path(folder) / "manifest.json").is_file() and (Path(folder) / "samples.jsonl").is_file()
            then = (f"{folder} keeps what was written before (run `webgpu-harness report {folder}` once there is space)"
                    if held else "nothing was recorded")
            err.print(f"error: {exc}; {then}", highlight=False, markup=False, emoji=False, soft_wrap=True)
        raise typer.Exit(1) from None
    except OSError as exc:
        err.print(f"error: cannot write {exc.filename or folder}: {exc.strerror or exc}", highlight=False,
                  markup=False, emoji=False, soft_wrap=True)
        raise typer.Exit(1) from None


def timestamped(base: Path, suffix: str = "") -> Path:
    """``base/<YYYYmmdd-HHMMSS><suffix>``: the default folder of a new run or comparison."""
    return base / (datetime.now().strftime("%Y%m%d-%H%M%S") + suffix)


#: Console columns per workload (summary.csv column → header); workloads not listed use TOKEN_HEADS.
TOKEN_HEADS = {"bind_groups_per_token": "bind groups/tok", "dispatches_per_token": "dispatches/tok",
               "submits_per_token": "submits/tok", "live_bind_groups_end": "live bind groups at end",
               "median_ms_per_token": "ms/tok", "tokens_identical": "same tokens"}
WORKLOAD_HEADS = {
    "dispatch-overhead": None,  # one column per method present: us_per_dispatch_<method> (µs per dispatch)
    "ort-run": {"runs": "runs", "median_ms_per_run": "ms/run (steady)", "time_to_first_result_ms": "first result ms",
                "bind_groups_per_token": "bind groups/step", "live_bind_groups_end": "live bind groups at end"},
    "upload": {"uploads": "uploads", "median_ms_per_upload": "ms/upload", "buffers_created_per_upload": "buffers/upload"},
    "lifecycle": {"page_loads": "page loads", "median_ms_per_page_load": "ms/page load",
                  "content_rss_bytes_max": "content RSS max (MiB)"},
}


def row_label(r) -> str:
    """``chromium decode-loop/fresh [tiny]``: a summary row as the console names it (no
    ``[None]`` for a workload without profiles; the sweep point of a swept cell)."""
    import pandas as pd

    profile = r.get("profile")
    prof = f" [{profile}]" if isinstance(profile, str) and profile and profile != "None" else ""
    sweep = f" {r['sweep']}" if isinstance(r.get("sweep"), str) and r.get("sweep") else ""
    label = f"{r['browser']} {r['workload']}/{r['variant']}{prof}{sweep}"
    return label if pd.notna(r.get("repetition")) and not r.get("repetition") else f"{label} r{r.get('repetition')}"


def _cell_text(column: str, v) -> str:
    import pandas as pd

    from harness.report.format import number

    if v is None or (not isinstance(v, str) and pd.isna(v)):
        return ""
    if column.endswith("_bytes_max"):
        return f"{float(v) / 2**20:,.1f}"
    return f"{v:.1f}" if isinstance(v, float) and column.startswith(("median_", "bind", "dispatch", "submit")) else (
        number(v) if isinstance(v, (int, float)) else str(v))


def print_summary(analysis) -> None:
    """Per workload, a table of its cells in the workload's own terms (summary.csv columns: per
    token for decode loops, µs per dispatch per method, per run, per upload, per page load) and
    where the numbers came from."""
    from harness.report.format import provenance

    s = analysis.tables.summary.copy()
    if "sweep" not in s:
        sweeps = {c["cell"]: c.get("sweep") or {} for c in analysis.tables.manifest.get("cells", [])}
        s["sweep"] = [",".join(f"{k}={v}" for k, v in sweeps.get(c, {}).items()) for c in s["cell"]]
    for workload, rows in s.groupby("workload", sort=False):
        heads = WORKLOAD_HEADS.get(workload, TOKEN_HEADS)
        heads = dict(heads) if heads is not None else None
        if workload == "upload":  # and per size
            heads.update({c: f"ms/upload {c.rsplit('_', 1)[1]} B" for c in rows.columns
                          if c.startswith("median_ms_per_upload_") and rows[c].notna().any()})
        if heads is None:
            heads = {c: c[len("us_per_dispatch_"):] for c in rows.columns
                     if c.startswith("us_per_dispatch_") and rows[c].notna().any()}
            if "kernel_us_per_dispatch" in rows and rows["kernel_us_per_dispatch"].notna().any():
                heads["kernel_us_per_dispatch"] = "kernel only"
        unit = rows["step_unit"].dropna().iloc[0] if "step_unit" in rows and rows["step_unit"].notna().any() else "token"
        title = (f"{workload}: µs per dispatch by method (mean over rounds after the first)" if workload == "dispatch-overhead"
                 else f"{workload} (one step = one {unit}; per-step values: medians over steps after the first)")
        table = Table(title=title)
        for h in ("cell", "status", *heads.values()):
            table.add_column(h, overflow="fold")
        for _, r in rows.iterrows():
            cells = [row_label(r), str(r["status"])] + [_cell_text(c, r.get(c)) for c in heads]
            table.add_row(*[Text(c) for c in cells])  # reasons may hold [brackets]: plain text
        console.print(table, markup=False, emoji=False)
    for source in sorted({provenance(r) for _, r in s.iterrows()}):
        say(f"  measured on: {source}")
    for _, r in s.iterrows():
        heap = r.get("js_heap")
        if isinstance(heap, str) and heap.startswith("not available"):
            say(f"  {row_label(r)}: JS heap not available (this browser's driver has no DevTools protocol)")
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
    """Differences in each workload's own terms: dispatch-overhead's µs per dispatch of every
    method; otherwise ms per step (named by the workload's step: per token, per upload…) and
    every significant headline difference. Per-repetition metrics from one repetition have no
    interval and are never called significant."""
    from harness.report.format import diff
    from harness.stats.metrics import HEADLINE
    from harness.tables import STEP_UNITS

    for d in analysis.stats.differences:
        workload = d.a.split(":")[-1].split("/")[1] if d.a.count("/") >= 2 else ""
        if workload == "dispatch-overhead":
            if not d.metric.startswith("us_per_dispatch_"):
                continue
            name = f"µs per dispatch, {d.metric[len('us_per_dispatch_'):]}"
        elif d.metric == "ms_per_token" or (d.significant and d.metric in HEADLINE):
            unit = STEP_UNITS.get(workload, "token")
            name = f"ms per {unit} (ms_per_token)" if d.metric == "ms_per_token" and unit != "token" else d.metric
        else:
            continue
        mark = "significant" if d.significant else ("no interval" if d.significant is None else "not significant")
        say(f"  {d.b} vs {d.a}: {name} {diff(d)} ({mark})")


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


def finish(run_dir: Path, budgets=(), summary: bool = True, quiet_disk: bool = False):
    """End of every command that wrote a run folder: analyse it, write every file
    (harness/pipeline.py), print the summary, differences and budget verdicts. Returns the
    :class:`harness.pipeline.Analysis`. ``quiet_disk``: a full disk was said already."""
    from harness import pipeline

    with bad_input(), disk_errors(run_dir, quiet_disk):
        analysis, paths = pipeline.analyse_and_write(run_dir, budgets)
    if summary:
        print_summary(analysis)
        print_differences(analysis)
        print_budgets(analysis.budgets)
    say(f"report: {paths['report.html']}")
    update_index(run_dir)
    return analysis


def end_on_full_disk(runner, run_dir: Path, budgets=()) -> None:
    """When nothing more could be recorded (a full disk, the sample server gone): one line naming
    the file and why, the report of what the folder holds where it still fits (no second line
    when it does not), exit 1. Returns when all went well."""
    full = runner.full()
    if not full:
        return
    failed = sum(1 for c in runner.cells if c.status not in ("ok", "skipped"))
    err.print(f"error: {full}; {failed} cell(s) failed with it; {run_dir} keeps what was written (run "
              f"`webgpu-harness report {run_dir}` once there is space)", highlight=False, markup=False, emoji=False,
              soft_wrap=True)
    finish(run_dir, budgets, summary=False, quiet_disk=True)
    raise typer.Exit(1)


def exit_on_outcome(cells, analysis, allow_skipped: bool = False) -> None:
    """End of ``run``/``app``: one line per kind of failure on stderr, then exit 1 when a cell
    failed (failed, device-lost, incomplete), a budget failed, or every cell was skipped
    (nothing measured) without ``allow_skipped``; returns when the run succeeded."""
    failed = [c for c in cells if c.status not in ("ok", "skipped")]
    if failed:
        err.print(f"{len(failed)} cell(s) failed: " + "; ".join(f"{c.cell}: {c.reason}" for c in failed),
                  highlight=False, markup=False, emoji=False, soft_wrap=True)
    if analysis.failed_budgets:
        err.print(f"{len(analysis.failed_budgets)} budget(s) failed: "
                  + "; ".join(r.budget.name for r in analysis.failed_budgets), highlight=False, markup=False,
                  soft_wrap=True)
    nothing = bool(cells) and all(c.status == "skipped" for c in cells)
    if nothing and not allow_skipped:
        err.print(f"every cell ({len(cells)}) was skipped: nothing was measured (pass --allow-skipped "
                  "when that is expected)", highlight=False, markup=False, emoji=False, soft_wrap=True)
    if failed or analysis.failed_budgets or (nothing and not allow_skipped):
        raise typer.Exit(1)
