"""``webgpu-harness serve``: serve the workloads for a browser you open yourself (a phone, a
browser the harness cannot drive); samples are recorded into a run folder as with ``run``.

Prints one URL per cell. Stop with Ctrl-C (or SIGTERM): the folder is then analysed like a run
(harness/pipeline.py); cells never opened are recorded as skipped, unfinished ones as failed.
"""

from __future__ import annotations

import re
import shutil
import sys
import time
from pathlib import Path
from typing import List, Optional

import typer

from harness import plan as P
from harness.cli.common import bad_input, err, fail, finish, require_measure_extra, runs_dir, say, timestamped
from harness.cli.run import sigterm_as_interrupt
from harness.workloads import served_roots


def settle_served_cells(runner) -> None:
    """Give each served cell whose worker reported done/skip/error its status (``device-lost``
    when the worker reported a lost device first, as in ``run``)."""
    from harness.drive.runner import finish_status, lost_or

    for cell in runner.cells:
        st = runner.store.cells[cell.cell]
        if st.outcome and cell.status == "pending":
            cell.status = {"done": "ok", "skip": "skipped"}.get(st.outcome, "failed")
            cell.reason = st.reason if cell.status != "failed" else f"workload error: {st.reason}"
            if st.device_lost is not None and st.outcome != "skip":
                cell.status, cell.reason = lost_or(st, "failed", cell.reason or "the workload finished")
            if cell.status != "skipped":
                cell.status, cell.reason = finish_status(st, cell.status, cell.reason)
            runner.store.end(cell.cell, cell.status)
            runner.record_env(cell, st.env)
            runner.write_manifest()
            say(f"{cell.cell}: {cell.status} {cell.reason}")


def serve(
    workload: Optional[List[str]] = typer.Option(None, "--workload", "-w", help="Workload(s) to offer."),
    variant: Optional[List[str]] = typer.Option(None, "--variant", "-v", help="Variant(s)."),
    profile: Optional[str] = typer.Option(None, "--profile", "-p", help="Model profile."),
    tokens: int = typer.Option(64, "--tokens", "-n", help="Tokens per cell."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Run folder for the samples."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (default: this machine only; another address, e.g. 0.0.0.0 for a phone, prints a warning: every URL carries the run's token)."),
    port: int = typer.Option(0, "--port", help="Port (0: a free one)."),
    label: str = typer.Option("manual", "--label", help="Browser label recorded for these cells."),
    workloads_dir: Optional[List[Path]] = typer.Option(None, "--workloads-dir", help="A folder of your own workloads (as for run), repeatable. Default: $WEBGPU_HARNESS_WORKLOADS."),
    ort_dist: Optional[Path] = typer.Option(None, "--ort-dist", help="ort-decode, ort-run: an onnxruntime-web dist/ folder or its package folder (as for run)."),
):
    """Serve the workloads for a browser you open yourself; samples are still recorded."""
    require_measure_extra()
    from harness.drive.runner import Runner, cell_config
    from harness.serve import access
    from harness.serve.app import ServerThread, create_app, default_roots

    with bad_input():
        P.check_range(tokens, 1, 100_000, "--tokens")
        P.check_range(port, 0, 65535, "--port")
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,40}", label):
            raise P.PlanError(f"--label {label!r} must be 1-40 letters, digits, '-' or '_' (it becomes part of cell ids and URLs)")
        wls, variants, profiles = P.resolve_workloads(workload, variant, profile, workloads_dir)
        params: dict = {}
        P.check_kv_capacity(wls, profiles, tokens, params)
        extra_roots = P.engine_params(wls, profiles, params, None, None, ort_dist)
        extra_roots.update(served_roots(wls))
        run_dir = P.check_new_run_dir(output or timestamped(runs_dir(), "-serve"))
    plan = P.RunPlan(browsers=[label], workloads=wls, variants=variants, profiles=profiles, tokens=tokens,
                     workload_params=params, extra_roots=extra_roots)
    runner = Runner(plan, run_dir, argv=sys.argv)
    for cell in runner.cells:
        runner.store.register(cell.cell, cell_config(cell, runner.workloads[cell.workload], plan, runner.token))
    runner.write_manifest()
    try:
        app = create_app(runner.store, {**default_roots(), **extra_roots}, token=runner.token,
                         hosts=access.allowed_hosts(host))
        server = ServerThread(app, host=host, port=port)
        server.__enter__()
    except (OSError, RuntimeError) as exc:  # bad host, port in use: leave no half-made run folder
        runner.store.close()
        shutil.rmtree(run_dir, ignore_errors=True)
        fail(f"cannot serve on {host}:{port}: {exc}")
    sigterm_as_interrupt()
    try:
        warning = access.public_warning(host)
        if warning:
            err.print(warning, highlight=False, markup=False, soft_wrap=True)
        say(f"serving at {server.url}/?{access.TOKEN_PARAM}={runner.token}  (samples → {run_dir}/samples.jsonl)")
        for cell in runner.cells:
            say(f"  {access.runner_url(server.url, cell.cell, runner.token)}")
        while True:
            time.sleep(1)
            settle_served_cells(runner)
    except KeyboardInterrupt:
        pass
    finally:
        server.__exit__(None, None, None)
    settle_served_cells(runner)  # outcomes that arrived since the last poll
    for cell in runner.cells:
        st = runner.store.cells[cell.cell]
        if cell.status == "pending" and st.env is None and st.steps == 0:
            cell.status, cell.reason = "skipped", "never opened in a browser while serve ran"
    runner.mark_unfinished("serve stopped before this cell finished")
    runner.write_manifest()
    runner.store.close()
    finish(run_dir, summary=False)
