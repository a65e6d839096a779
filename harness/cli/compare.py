"""``webgpu-harness compare RUN_A RUN_B``: B − A with 95% CIs for every configuration in both
runs (harness/verdicts/compare.py), written by harness/pipeline.py as compare.html/json,
differences.csv, stats.json, summary.md and junit.xml. Exit 1 when a budget fails, 2 on bad
input (not a run folder, no configuration in common)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from harness.cli.common import bad_input, compare_dir, console, disk_errors, output_default, timestamped, update_index
from harness.cli.printing import print_budgets, print_comparison
from harness.stats.metrics import DEFAULT_WARMUP


def compare(
    run_a: Path = typer.Argument(..., help="Baseline run folder (A)."),
    run_b: Path = typer.Argument(..., help="Run folder to compare with it (B)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Folder for compare.html/json. " + output_default(comparison=True)),
    budget: Optional[List[str]] = typer.Option(None, "--budget", help="Budget line or .toml file (repeatable), checked on B; `baseline` names A's same cell. See README, Budgets."),
    warmup: int = typer.Option(DEFAULT_WARMUP, "--warmup", help="Tokens at the start of each cell left out of per-token statistics."),
):
    """Differences B − A with 95% CIs for every configuration in both runs; flags changed environments."""
    from harness.plan import PlanError, check_new_run_dir
    from harness.store.runfolder import check_run_folder
    from harness.verdicts.matching import check_common, run_names
    from harness.verdicts import budgets as B

    with bad_input():  # every option before pandas, scipy or plotly is imported
        if warmup < 0 or warmup > 100_000:  # no cell has more tokens than run's --tokens allows (100,000)
            raise PlanError(f"--warmup must be between 0 and 100,000 (got {warmup})")
        budgets = B.load(list(budget or []))
        manifests = [check_run_folder(p) for p in (run_a, run_b)]
        # nothing in common: said from the manifests, before either run is analysed
        check_common(*manifests, *run_names(run_a, run_b))
        out = check_new_run_dir(output or timestamped(compare_dir()))
        if (out / "compare.json").exists():
            raise PlanError(f"{out} already holds a comparison; choose another --output")
        from harness import pipeline

        analysis = pipeline.analyse(run_b, budgets, baseline=run_a, out_dir=out, warmup=warmup)
    with bad_input(), disk_errors(out):
        paths = pipeline.write(analysis)
    same_folder = run_a.resolve() == run_b.resolve()
    if same_folder or manifests[0] == manifests[1]:  # a run, or a copy of it, with itself
        console.print(f"note: {'A and B are the same folder' if same_folder else 'A and B hold the same manifest.json (copies of one run)'}"
                      ": every difference compares a run with itself, and each side's "
                      "interval is resampled on its own, so an interval around 0 says nothing about a change",
                      highlight=False, markup=False)
    print_comparison(analysis.comparison)
    print_budgets(analysis.budgets)
    console.print(f"compare: {paths['compare.html']}")
    update_index(out)
    if analysis.failed_budgets:
        raise typer.Exit(1)
