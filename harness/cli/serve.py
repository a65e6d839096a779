"""``webgpu-harness serve``: serve the workloads for a browser you open yourself (a phone, a
browser the harness cannot drive); samples are recorded into a run folder as with ``run``.

Every option of ``run`` that shapes a cell is taken here too, from the same definitions
(harness/cli/options.py): ``--param`` with its sweeps, ``--repeat``, ``--webgpu`` and the
emulation's options, ``--memory-budget``, ``--model``… Prints the index page's URL (one row per
configuration, a link per repetition), one URL per cell, and a QR code of the index page (or of
the only cell) for a phone.
``--https`` serves TLS with a certificate made on first use (harness/serve/tls.py) or
``--cert/--key``; a phone needs it (WebGPU and cross-origin isolation need a secure context)
and ``--host 0.0.0.0`` (the server binds to loopback unless asked). Stop with Ctrl-C (or
SIGTERM): the folder is then analysed and summarised like a run's (harness/pipeline.py); cells
never opened are recorded as skipped, unfinished ones as failed. A full disk stops it too: posts
are answered 503 (the pages retry), unfinished cells fail with ``<file>: no space left on device``,
and the report of what was received is written where it still fits (else one line names the file).
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
from harness import reach as reach_plan
from harness.cli import options as O
from harness.cli.common import (bad_input, disk_errors, err, fail, finish, output_default, require_measure_extra, runs_dir,
                                say, timestamped)
from harness.cli.run import cell_label, sigterm_as_interrupt
from harness.serve import tls, urls


def certificates(host: str, public_url: str | None):
    """The generated server certificate for ``host`` (and ``--public-url``'s host), made or
    renewed on first use (harness/serve/tls.py)."""
    from urllib.parse import urlsplit

    extra = [urlsplit(public_url).hostname] if public_url else []
    return tls.ensure(tls.names_for(host, extra))


def print_urls(bases: list[str], cells: list, token: str | None = None) -> None:
    """The index page's URL, then one line per base URL and cell: its configuration, repetition
    and runner page (harness/serve/urls.py ``runner_url``, with the run's token)."""
    say(f"index of every configuration: {urls.index_url(bases[0], token)}")
    for base in bases:
        for cell in cells:
            say(f"  {cell_label(cell)} r{cell.repetition}: {urls.runner_url(base, cell.cell, token)}")


def show_qr(url: str) -> None:
    """``url`` and its QR code in the terminal (segno, compact: two rows per line)."""
    try:
        import segno
    except ImportError:
        say(f"(no QR code: pip install segno) open {url}")
        return
    say(f"scan to open {url}")
    segno.make(url, error="l").terminal(out=sys.stdout, compact=True)
    sys.stdout.flush()


def unreported(state) -> str:
    """The reason of a served cell whose page posted samples (a log, a refused sample, a gap)
    but whose worker never reported (no ``env``, no step) before serve stopped: what arrived,
    counted by the senders' sequence numbers (:class:`harness.store.store.CellState`)."""
    posted = sum(n - 1 for n in state.senders.values())
    return (f"opened in a browser, but its worker never reported before serve stopped: {posted} sample(s) "
            f"numbered by {len(state.senders)} sender(s) ({', '.join(sorted(state.senders))[:200]}), no env, no step")


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
    workload: Optional[List[str]] = O.WORKLOAD,
    variant: Optional[List[str]] = O.VARIANT,
    profile: Optional[str] = O.PROFILE,
    tokens: int = O.TOKENS,
    seed: int = O.SEED,
    param: Optional[List[str]] = O.PARAM,
    repeat: int = O.REPEAT,
    no_probes: bool = O.NO_PROBES,
    webgpu: str = O.WEBGPU,
    emulation_bytes_per_stage: Optional[int] = O.EMULATION_BYTES_PER_STAGE,
    emulation_page_bytes: Optional[int] = O.EMULATION_PAGE_BYTES,
    emulation_option: Optional[List[str]] = O.EMULATION_OPTION,
    model: Optional[Path] = O.MODEL,
    ort_version: Optional[str] = O.ORT_VERSION,
    ort_dist: Optional[Path] = O.ORT_DIST,
    workloads_dir: Optional[List[Path]] = O.WORKLOADS_DIR,
    memory_budget: Optional[str] = O.MEMORY_BUDGET,
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Run folder for the samples. " + output_default("-serve")),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (default: this machine only; 0.0.0.0: every interface, for a phone on the network, with a printed warning: every URL carries the run's token)."),
    port: Optional[int] = typer.Option(None, "--port", help="Port (default: --public-url's, else a free one)."),
    label: str = typer.Option("manual", "--label", help="Browser label recorded for these cells (e.g. iphone15)."),
    https: bool = typer.Option(False, "--https", help="Serve https (a phone needs it for WebGPU): a certificate made on first use and cached, or --cert/--key."),
    cert: Optional[Path] = typer.Option(None, "--cert", help="--https: PEM certificate to serve instead of the generated one."),
    key: Optional[Path] = typer.Option(None, "--key", help="--https: PEM private key of --cert."),
    public_url: Optional[str] = typer.Option(None, "--public-url", help="Base URL the browser uses to reach this machine (a tunnel, a name), printed instead of the bound address."),
    qr: bool = typer.Option(True, "--qr/--no-qr", help="Show the index page's URL as a QR code in the terminal."),
    sample_limit: Optional[List[str]] = typer.Option(None, "--sample-limit", help="A cap on what a page may post, KEY=VALUE (repeatable; as for run)."),
):
    """Serve the workloads for a browser you open yourself; samples are still recorded."""
    cell_options = O.picked(locals())
    require_measure_extra()
    with bad_input():
        cells = O.resolve(**cell_options)
        port, tls_files = reach_plan.check_serving(host, port, public_url, https, cert, key)
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,40}", label):
            raise P.PlanError(f"--label {label!r} must be 1-40 letters, digits, '-' or '_' (it becomes part of cell ids and URLs)")
        limits = P.sample_limits(sample_limit)
        run_dir = P.check_new_run_dir(output or timestamped(runs_dir(), "-serve"))
    from harness.drive.runner import Runner, cell_config  # valid input only: the server and the drivers
    from harness.serve import access
    from harness.serve.app import ServerThread, create_app, default_roots

    plan = P.RunPlan(browsers=[label], **cells.plan_fields(), host=host, port=port,
                     public_url=(public_url or "").rstrip("/") or None, https=https, sample_limits=limits)
    # claims the folder (a run meanwhile: exit 2); the store in this process: serve builds its own app over it
    with bad_input(), disk_errors(run_dir):
        runner = Runner(plan, run_dir, argv=sys.argv, collector=False)
    for cell in runner.cells:
        runner.store.register(cell.cell, cell_config(cell, runner.workloads[cell.workload], plan, runner.token))
    runner.write_manifest()
    app = create_app(runner.store, {**default_roots(), **plan.extra_roots}, token=runner.token,
                     hosts=access.allowed_hosts(host, [public_url] if public_url else []))
    try:
        certs = None
        if https and tls_files is None:
            certs = certificates(host, public_url)
            tls_files = (certs.cert, certs.key)
            tls.add_ca_route(app, certs.ca)
        server = ServerThread(app, host=host, port=port, tls=tls_files)
        server.__enter__()
    except (OSError, RuntimeError, ValueError) as exc:  # bad host, port in use, bad PEM: no half-made run folder
        runner.store.close()
        shutil.rmtree(run_dir, ignore_errors=True)
        fail(f"cannot serve on {host}:{port}: {exc}")
    sigterm_as_interrupt()
    try:
        warning = access.public_warning(host)
        if warning:
            err.print(warning, highlight=False, markup=False, soft_wrap=True)
        bases = [public_url.rstrip("/")] if public_url else (urls.reachable_bases(server.scheme, host, server.port)
                                                             or [server.url])
        for cell in runner.cells:
            cell.driver, cell.endpoint = "manual", bases[0]
            cell.memory = "not measurable remotely: a browser opened by hand (per-page memory only where it offers measureUserAgentSpecificMemory)"
        runner.write_manifest()
        say(f"serving at {', '.join(bases)}  (bound to {host}:{server.port}; samples → {run_dir}/samples.jsonl)")
        if warning := reach_plan.insecure_context_warning(bases):
            say(f"warning: {warning}")
        print_urls(bases, runner.cells, runner.token)
        if certs is not None:
            say(f"certificate: {', '.join(certs.made) or 'cached'} in {certs.cert.parent} (names: {', '.join(certs.names)})")
            say(f"  on a phone, trust it once: open {bases[0]}{tls.CA_ROUTE}, install the profile, then Settings › "
                "General › About › Certificate Trust Settings")
        if qr:
            show_qr(urls.runner_url(bases[0], runner.cells[0].cell, runner.token) if len(runner.cells) == 1 else urls.index_url(bases[0], runner.token))
        from harness.drive.base import raise_lost_interrupt

        while True:
            time.sleep(1)
            raise_lost_interrupt()  # a Ctrl-C Python swallowed (a weakref callback) stops serve too
            settle_served_cells(runner)
            if runner.full():  # nothing more can be recorded: posts get 503 until the server stops
                err.print(f"error: {runner.full()}: stopping; the report holds what was received",
                          highlight=False, markup=False, soft_wrap=True)
                runner.mark_unfinished(runner.full())
                break
    except KeyboardInterrupt:
        pass
    finally:
        server.__exit__(None, None, None)
    settle_served_cells(runner)  # outcomes that arrived since the last poll
    from harness.drive.runner import finish_status

    for cell in runner.cells:
        st = runner.store.cells[cell.cell]
        if cell.status == "pending" and st.env is None and st.steps == 0:
            if not st.senders:  # no batch at all: no page of it ran
                cell.status, cell.reason = "skipped", "never opened in a browser while serve ran"
                continue
            cell.status, cell.reason = finish_status(st, "failed", unreported(st))
            runner.store.end(cell.cell, "failed")
            runner.store.append(cell.cell, [{"kind": "cell_status", "status": cell.status, "reason": cell.reason}])
    runner.mark_unfinished("serve stopped before this cell finished")
    runner.write_manifest()
    runner.store.close()
    finish(run_dir, quiet_disk=runner.full() is not None)  # summary and report as after `run`; a full disk was said already
