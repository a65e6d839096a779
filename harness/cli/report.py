"""``webgpu-harness report RUN_DIR``: analyse any run folder again, with no browser.

Writes the same files a ``run`` writes after measuring (summary.csv, steps.csv, memory.csv,
stats.json/csv, differences.csv, junit.xml, summary.md, report.html) into RUN_DIR or ``-o DIR``,
e.g. with other budgets. Exit 1 when a budget fails, 2 on bad input.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from harness.cli.common import bad_input, disk_errors, say, update_index
from harness.cli.printing import print_budgets, print_differences, print_summary


#: Written in a ``report -o`` folder (not the run's own): the run it was made from, so a later
#: report of the same run may write there again, and of no other.
MARK = ".webgpu-harness-report.json"


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def check_output(run_dir: Path, output: Path | None) -> None:
    """Where ``report`` may write (checked before anything is analysed): RUN_DIR itself (the
    default), a new or empty folder, or a folder an earlier ``report RUN_DIR -o`` wrote (its
    :data:`MARK` names the same run); and a place that really takes files (tried). Raises
    :class:`harness.plan.PlanError`: under a file, not writable, holding a run, or holding
    files of its own."""
    import os
    import tempfile

    from harness.plan import PlanError

    out = output if output is not None else run_dir
    for p in (out, *out.parents):
        if p.exists() and not p.is_dir():
            raise PlanError(f"--output {out}: {p} is a file; give a folder")
        if p.exists():
            try:  # really try (root passes os.access everywhere; a read-only mount takes nothing)
                os.rmdir(tempfile.mkdtemp(prefix=".webgpu-harness-", dir=p))
            except OSError as exc:
                raise PlanError(f"--output {out}: cannot write in {p} ({exc.strerror or exc}); give another folder") from None
            break
    if output is None or _same(output, run_dir) or not output.is_dir() or not any(output.iterdir()):
        return
    if any(os.path.lexists(output / n) for n in ("manifest.json", "samples.jsonl")):
        raise PlanError(f"{output} already holds a run; choose another --output (or report that run by itself)")
    try:
        made_from = json.loads((output / MARK).read_text(encoding="utf-8")).get("run")
    except (OSError, ValueError, AttributeError):
        made_from = None
    if isinstance(made_from, str) and made_from != str(run_dir.resolve()):
        raise PlanError(f"--output {output} holds a report of another run ({made_from}); give a new or empty folder, "
                        f"the run folder itself, or a folder an earlier report of this run wrote")
    if made_from != str(run_dir.resolve()):
        names = sorted(p.name for p in output.iterdir())
        theirs = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        raise PlanError(f"--output {output} holds files not written by a report of {run_dir} ({theirs}); give a new or "
                        f"empty folder, the run folder itself, or a folder an earlier report of this run wrote")


def report(
    run_dir: Path = typer.Argument(..., help="Run folder (manifest.json + samples.jsonl) to analyse."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Folder for the analysis files. Default: RUN_DIR itself. "
                                          "Otherwise a new or empty folder, or one an earlier report of this same run wrote "
                                          f"(it holds {MARK}); never another run's folder or a folder of other files."),
    budget: Optional[List[str]] = typer.Option(None, "--budget", help="Budget line or .toml file (repeatable); exit 1 when one fails. Grammar: README, Budgets."),
):
    """Re-analyse a run folder (tables, statistics, budgets, report) without a browser."""
    from harness.store.runfolder import check_run_folder
    from harness.verdicts import budgets as B

    with bad_input(), disk_errors(output or run_dir):  # every option before pandas, scipy or plotly is imported
        budgets = B.load(list(budget or []))
        check_run_folder(run_dir)
        check_output(run_dir, output)
        from harness import pipeline

        analysis, paths = pipeline.analyse_and_write(run_dir, budgets, out_dir=output)
        if output is not None and not _same(output, run_dir):
            from harness.store import files

            files.write_atomic(output / MARK, json.dumps({"run": str(run_dir.resolve())}))
    print_summary(analysis)
    print_differences(analysis)
    print_budgets(analysis.budgets)
    say(f"report: {paths['report.html']}")
    update_index(output or run_dir)
    if analysis.failed_budgets:
        raise typer.Exit(1)
