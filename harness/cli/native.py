"""``webgpu-harness native``: the dispatch-overhead methods on wgpu-native, into a run folder.

``--append`` adds the native cells to a browser run's folder (one report, side by side); runs
from other machines (``benchmarks/native_gpu.py`` on a GPU) join with ``webgpu-harness merge``.

Bad input (N or K
≤ 0 or above the cap, an unknown method or variant, a folder that already holds a run without
``--append``) prints one line and exits 2; a failed cell exits 1; ok/skipped cells exit 0.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from harness.cli.common import console, err, fail, finish, output_default, runs_dir, timestamped


def native(
    n: str = typer.Option("256", "--n", help="Dispatches per method-run N (1..65536)."),
    k: str = typer.Option("1,16,64,all", "--k", help="Batched method: dispatches per command buffer K, comma-separated (1..65536 or 'all')."),
    rounds: str = typer.Option("8", "--rounds", help="Rounds: every method runs once per round (round 0 is warm-up in the medians)."),
    methods: str = typer.Option("single-op,sequential,batched,one-pass,phases,kernel", "--methods", help="Methods, comma-separated."),
    variant: str = typer.Option("fresh,reused", "--variant", "-v", help="Bind groups: fresh (createBindGroup per dispatch), reused, or both."),
    batched_pass: str = typer.Option("shared", "--batched-pass", help="Batched: 'shared' (one compute pass per command buffer, as ORT) or 'per-dispatch'."),
    single_op_sync: str = typer.Option("done", "--single-op-sync", help="Single-op sync: 'done' (onSubmittedWorkDone) or 'map' (mapAsync readback)."),
    timestamp_query: str = typer.Option("auto", "--timestamp-query", help="Kernel-only timing: 'auto' (if the adapter offers timestamp-query) or 'off'."),
    elements: str = typer.Option("64", "--elements", help="Floats per buffer (kernel work; 1..65536)."),
    adapter: Optional[str] = typer.Option(None, "--adapter", help="Pick the adapter whose label contains this text (default: a GPU before a CPU one)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Run folder. " + output_default("-native")),
    append: bool = typer.Option(False, "--append", help="Add the native cells to the run already in --output (e.g. a browser run), for one report."),
):
    """Run the dispatch-overhead methods outside the browser (wgpu-py → wgpu-native)."""
    from harness.native.options import OptionError, parse_options
    from harness.store.runfolder import RunFolder, RunFolderError

    try:
        o = parse_options(variants=variant, n=n, rounds=rounds, methods=methods, k=k, batched_pass=batched_pass,
                          single_op_sync=single_op_sync, timestamp_query=timestamp_query, elements=elements)
    except OptionError as exc:
        fail(str(exc))
    run_dir = output or timestamped(runs_dir(), "-native")
    params = {"n": o.n, "k": o.batch_labels, "rounds": o.rounds, "methods": o.methods, "variants": o.variants,
              "batched_pass": o.batched_pass, "single_op_sync": o.single_op_sync,
              "timestamp_query": o.timestamp_query, "elements": o.elements, "adapter": adapter,
              "workloads": ["dispatch-overhead"]}
    try:
        folder = RunFolder(run_dir, sys.argv, params, append=append)
    except FileExistsError:
        fail(f"{run_dir} already holds a run; pass --append to add native cells to it, or choose another --output")
    except RunFolderError as exc:  # cannot make it, or an output's name is a link
        fail(str(exc))
    except OSError as exc:  # under a file, no permission: one line, exit 2
        fail(f"--output {run_dir}: {exc.strerror or exc}" + (f" ({exc.filename})" if exc.filename else ""))
    from harness.native.run import run_cells, summary_rows  # valid input only: numpy, wgpu

    try:
        cells = run_cells(o, folder, adapter, progress=lambda m: console.print(m, highlight=False))
    finally:
        folder.close()
    finish(run_dir, summary=False)  # every analysis file again, --append included: none left stale
    from rich.table import Table

    table = Table(title="native dispatch overhead (median µs per dispatch, rounds after the first)")
    for col in ("cell", "method", "µs / dispatch"):
        table.add_column(col)
    for row in summary_rows(run_dir):
        v = row["us_per_dispatch"]
        table.add_row(row["cell"], row["config"], f"{v:.2f}" if isinstance(v, float) else str(v))
    console.print(table)
    failed = [c for c in cells if c["status"] == "failed"]
    if failed:
        err.print("; ".join(f"{c['cell']}: {c['reason']}" for c in failed), highlight=False)
        raise typer.Exit(1)
    if cells and all(c["status"] == "skipped" for c in cells):  # nothing measured (e.g. --adapter matched none)
        err.print(f"error: every cell was skipped: {cells[0]['reason']}", highlight=False, markup=False)
        raise typer.Exit(1)
