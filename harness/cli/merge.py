"""``webgpu-harness merge DIR...``: several run folders (e.g. one per machine of a CI matrix)
into one run folder (harness/store/merge.py), then analysed like a run. Exit 1 when a budget
fails, 2 on bad input."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from harness.cli.common import bad_input, disk_errors, finish, output_default, runs_dir, say, timestamped


def merge(
    runs: List[Path] = typer.Argument(..., help="Run folders to merge (e.g. one per machine)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Merged run folder. " + output_default("-merged")),
    label: Optional[List[str]] = typer.Option(None, "--label", help="Name of each source in the merged run, in order (default: its folder name)."),
    budget: Optional[List[str]] = typer.Option(None, "--budget", help="Budget line or .toml file (repeatable), checked on the merged run."),
):
    """Combine runs from several machines into one run folder and report; each cell keeps its environment."""
    from harness.plan import check_new_run_dir
    from harness.store.merge import merge as do_merge
    from harness.store.runfolder import check_run_folder
    from harness.verdicts import budgets as B

    with bad_input():
        budgets = B.load(list(budget or []))
        for p in runs:
            check_run_folder(p)
        out = check_new_run_dir(output or timestamped(runs_dir(), "-merged"))
        with disk_errors(out):
            manifest = do_merge(list(runs), out, label, argv=sys.argv)
    for s in manifest["merged_from"]:
        say(f"  {s['label']}: {s['cells']} cells from {s['dir']} · {s['os']} · {s['cpu']}")
        if s.get("lines_left_out"):
            say(f"    samples.jsonl lines left out (not samples): {'; '.join(s['lines_left_out'][:3])}"
                + (" …" if len(s["lines_left_out"]) > 3 else ""))
    analysis = finish(out, budgets)
    if analysis.failed_budgets:
        raise typer.Exit(1)
