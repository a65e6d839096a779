"""``webgpu-harness report RUN_DIR``: analyse any run folder again, with no browser.

Writes the same files a ``run`` writes after measuring (summary.csv, steps.csv, memory.csv,
stats.json/csv, differences.csv, junit.xml, summary.md, report.html) into RUN_DIR or ``-o DIR``,
e.g. with other budgets. Exit 1 when a budget fails, 2 on bad input.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from harness.cli.common import bad_input, disk_errors, say, update_index
from harness.cli.printing import print_budgets, print_differences, print_summary


def report(
    run_dir: Path = typer.Argument(..., help="Run folder (manifest.json + samples.jsonl) to analyse."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Folder for the analysis files. Default: RUN_DIR itself."),
    budget: Optional[List[str]] = typer.Option(None, "--budget", help="Budget line or .toml file (repeatable); exit 1 when one fails. Grammar: README, Budgets."),
):
    """Re-analyse a run folder (tables, statistics, budgets, report) without a browser."""
    from harness.plan import PlanError
    from harness.store.runfolder import check_run_folder
    from harness.verdicts import budgets as B

    with bad_input(), disk_errors(output or run_dir):  # every option before pandas, scipy or plotly is imported
        budgets = B.load(list(budget or []))
        check_run_folder(run_dir)
        if output is not None:
            for p in (output, *output.parents):
                if p.exists() and not p.is_dir():
                    raise PlanError(f"--output {output}: {p} is a file; give a folder")
                if p.exists():
                    break
        from harness import pipeline

        analysis, paths = pipeline.analyse_and_write(run_dir, budgets, out_dir=output)
    print_summary(analysis)
    print_differences(analysis)
    print_budgets(analysis.budgets)
    say(f"report: {paths['report.html']}")
    update_index(output or run_dir)
    if analysis.failed_budgets:
        raise typer.Exit(1)
