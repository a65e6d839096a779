"""``webgpu-harness run``: measure workloads in browsers into a run folder, then analyse it.

Every option is validated into a :class:`harness.plan.RunPlan` before a browser starts
(:func:`build_plan`); the cells run (harness/drive/runner.py) with a progress bar per cell
counting the workload's own steps; the folder is analysed by harness/pipeline.py. Exit 0 when
every cell is ok or skipped (not all of them: a run that measured nothing exits 1 unless
``--allow-skipped``) and every budget passes, 1 otherwise (failed, device-lost, incomplete), 2
on bad input, 130 when interrupted (the report of what was received is still written, even
when interrupted twice).
"""

from __future__ import annotations

import contextlib
import signal
import sys
import time
from pathlib import Path
from typing import List, Optional

import typer

from harness import plan as P
from harness import reach as reach_plan
from harness.cli import options as O
from harness.cli.common import (bad_input, console, disk_errors, end_on_full_disk, err, exit_on_outcome, finish,
                                installed_browsers, output_default, require_measure_extra, runs_dir, say, timestamped)
from harness.drive.registry import BROWSERS


#: Seconds after a first SIGINT/SIGTERM within which another is the same interrupt delivered
#: twice (to the harness and to its process group), not "interrupted again".
SAME_INTERRUPT_S = 0.1


def sigterm_as_interrupt() -> None:
    """Let SIGTERM (and SIGHUP) end a run like Ctrl-C does (cells marked, tables written), and
    make a second Ctrl-C/SIGTERM harmless: the first raises ``KeyboardInterrupt``; the second,
    while the harness closes the browsers and writes the report of what it received, only says
    so; a third raises again (the way out of a clean-up that hangs). Processes the harness
    started are ended on any exit (harness/drive/reaper.py). A signal within
    :data:`SAME_INTERRUPT_S` of the first is the same interrupt delivered twice (``timeout -s INT``
    signals the harness and then its process group; so does a shell's job control), not a
    second one."""
    count = {"n": 0, "first": 0.0}

    def handler(signum, frame):
        from harness.drive.base import defer_interrupt

        now = time.monotonic()
        if count["n"] == 1 and now - count["first"] < SAME_INTERRUPT_S:
            return
        count["n"] += 1
        count["first"] = count["first"] or now
        if count["n"] == 1 and defer_interrupt():  # inside a driver's event dispatch: raised right after
            return
        if count["n"] == 2:
            err.print("interrupted again: still closing the browsers and writing the report of what was "
                      "received; interrupt once more to stop now (no report)", highlight=False, markup=False)
            return
        raise KeyboardInterrupt

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        try:
            signal.signal(sig, handler)
        except ValueError:  # not the main thread (tests driving the CLI in-process)
            pass


def build_plan(*, output, browser, headed, browser_path, memory_interval_ms, step_timeout_s, browser_arg, without_flag,
               reach: dict | None = None, start_timeout_s: float = 90.0, gc_checkpoints: int = 0, sample_limit: list[str] | None = None,
               **cell_options) -> tuple[P.RunPlan, Path]:
    """Every run option → ``(plan, run folder)``: ``cell_options`` are the options that shape a
    cell (harness/cli/options.py, shared with ``serve``); ``reach``: the remote-browser and
    serving options (webdriver_url, capabilities, connect, cdp_url, public_url, host, port,
    https, cert, key); ``sample_limit``: --sample-limit KEY=VALUE items. Raises
    :class:`harness.plan.PlanError`."""
    reach = reach or {}
    P.check_range(memory_interval_ms, 10, 3_600_000, "--memory-interval-ms")
    P.check_range(gc_checkpoints, 0, 100_000, "--gc-checkpoints")
    if not (isinstance(step_timeout_s, (int, float)) and 0 < step_timeout_s <= 86_400):
        raise P.PlanError(f"--step-timeout-s must be > 0 and at most 86400 (got {step_timeout_s})")
    if not (isinstance(start_timeout_s, (int, float)) and 0 < start_timeout_s <= 86_400):
        raise P.PlanError(f"--start-timeout-s must be > 0 and at most 86400 (got {start_timeout_s})")
    if not any(reach.get(k) for k in ("webdriver_url", "capabilities", "connect", "cdp_url")):
        P.check_browser_names(browser)  # a mistyped --browser is answered before the workloads load
    cells = O.resolve(**cell_options)
    limits = P.sample_limits(sample_limit)
    run_dir = P.check_new_run_dir(output or timestamped(runs_dir()))
    port, tls_files = reach_plan.check_serving(reach.get("host") or "127.0.0.1", reach.get("port"), reach.get("public_url"),
                                               bool(reach.get("https")), reach.get("cert"), reach.get("key"))
    browsers, remote = reach_plan.resolve_remote(
        browsers=browser, webdriver_url=reach.get("webdriver_url"), capabilities=reach.get("capabilities"),
        connect=reach.get("connect"), cdp_url=reach.get("cdp_url"), headed=headed,
        browser_args=list(browser_arg or []), browser_path=browser_path, https=bool(reach.get("https")))
    browsers = browsers or P.resolve_browsers(browser, browser_path)
    P.check_cell_count(len(browsers), cells)
    plan = P.RunPlan(browsers=browsers, **cells.plan_fields(), headed=headed,
                     browser_path=browser_path, memory_interval_s=memory_interval_ms / 1000,
                     step_timeout_s=step_timeout_s, start_timeout_s=start_timeout_s, browser_args=list(browser_arg or []),
                     without_browser_args=list(without_flag or []), gc_checkpoints=gc_checkpoints,
                     remote=remote, host=reach.get("host") or "127.0.0.1", port=port,
                     public_url=(reach.get("public_url") or "").rstrip("/") or None,
                     https=bool(reach.get("https")), tls_files=tls_files, sample_limits=limits)
    return plan, run_dir


def ensure_tls(plan: P.RunPlan) -> None:
    """Under ``--https`` without ``--cert``: the cached certificate for the bound host and the
    public URL's (harness/serve/tls.py), made on first use."""
    if plan.https and plan.tls_files is None:
        from urllib.parse import urlsplit

        from harness.serve import tls

        extra = [urlsplit(plan.public_url).hostname] if plan.public_url else []
        certs = tls.ensure(tls.names_for(plan.host, extra))
        plan.tls_files = (certs.cert, certs.key)


def cell_label(cell) -> str:
    """``chromium decode-loop/fresh [tiny] max_pending_dispatches=16``: a cell as the console names
    it (no profile for workloads without one, the sweep point when there is one)."""
    profile = f" [{cell.profile}]" if cell.profile else ""
    sweep = f" {P.sweep_label(cell.sweep)}" if cell.sweep else ""
    return f"{cell.browser} {cell.workload}/{cell.variant}{profile}{sweep}"


def execute(plan: P.RunPlan, run_dir: Path, sampler=None, runner=None):
    """Run every cell, its progress counted in its own steps (harness/cli/progress.py: bars on a
    terminal, plain lines through a pipe); with ``sampler`` (``--auto-sample``) add rounds until
    it says stop. ``runner``: a runner made by the caller (``app``'s), else a
    :class:`harness.drive.runner.Runner`. Returns the cells."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from harness.cli.progress import Bars, Lines
    from harness.drive.runner import Runner

    runner = runner or Runner(plan, run_dir, argv=sys.argv)
    if runner.reaped:
        say(f"ended {len(runner.reaped)} process(es) a killed harness left running: {', '.join(runner.reaped)}")
    bars = console.is_terminal
    with (Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=console, transient=False) if bars else contextlib.nullcontext()) as progress:
        shown = Bars(progress, len(runner.cells)) if bars else Lines(say, len(runner.cells))
        workloads = {w.name: w for w in plan.workloads}

        def label(cell) -> str:  # a later repetition named as the console's tables name it
            return cell_label(cell) + (f" r{cell.repetition}" if getattr(cell, "repetition", 0) else "")

        def on(event, cell, info):
            name = label(cell)
            if event == "start":
                # the workload's own steps (its manifest's "steps": e.g. rounds × methods, uploads)
                total = workloads[cell.workload].expected_steps(cell.params, cell.tokens) if cell.workload in workloads else None
                shown.start(cell.cell, name, total or cell.tokens or None)  # an app: maybe unknown
            elif event == "step":
                shown.step(cell.cell, name, info["steps"])
            elif event == "end":
                shown.end(cell.cell, name, cell.status, info.get("steps"))

        runner.progress = on
        try:
            if sampler is None:
                return runner.run()
            return sampler.sample(runner, lambda: shown.grow(len(runner.cells)))
        finally:  # interrupted: the cells it cut short say how they ended too
            shown.close(runner.cells, label, lambda c: getattr(runner.store.cells.get(c.cell), "steps", None))


class AutoSampler:
    """``--auto-sample``: adds repetitions (each a round of every variant, fresh contexts) until
    :func:`harness.verdicts.autosample.decide` says stop. ``outcome`` (also ``manifest.json``'s
    ``auto_sample``) says why it stopped."""

    def __init__(self, conditions, timeout_s: float, metric: str = "ms_per_token"):
        self.conditions, self.timeout_s, self.metric = conditions, timeout_s, metric
        self.outcome: dict = {}

    def sample(self, runner, on_grow=lambda: None):
        """Run ``runner`` round after round; returns its cells."""
        from harness import stats as S
        from harness import tables as T
        from harness.verdicts.autosample import decide

        t0 = time.monotonic()
        reason = ""
        try:
            runner.run(close=False)
            while True:
                rs = S.compute(T.build(runner.run_dir), metrics=[self.metric])
                d = decide(rs.differences, self.conditions, runner.plan.repeat, time.monotonic() - t0, self.timeout_s,
                           self.metric)
                if d.stop:
                    reason = d.reason
                    break
                runner.add_repetition()
                on_grow()
                runner.run(close=False)
        finally:
            self.outcome = {"conditions": [str(c) for c in self.conditions], "metric": self.metric,
                            "timeout_s": self.timeout_s, "repetitions": runner.plan.repeat,
                            "elapsed_s": round(time.monotonic() - t0, 1), "reason": reason or "interrupted"}
            runner.manifest["auto_sample"] = self.outcome
            runner.write_manifest()
            runner.store.close()
        say(f"auto-sample: {reason}")
        return runner.cells


def auto_sampler(auto_sample: Optional[str], timeout: Optional[str]) -> Optional[AutoSampler]:
    """``--auto-sample CONDITIONS`` / ``--timeout`` → an :class:`AutoSampler` (or None).
    Raises :class:`harness.plan.PlanError` on a malformed condition or timeout, or ``--timeout``
    without ``--auto-sample``."""
    from harness.verdicts.autosample import DEFAULT_TIMEOUT_MIN, parse_conditions, parse_timeout

    if auto_sample is None:
        if timeout is not None:
            raise P.PlanError("--timeout applies to --auto-sample only (e.g. --auto-sample 0% --timeout 3)")
        return None
    try:
        conds = parse_conditions(auto_sample)
        secs = parse_timeout(timeout) if timeout is not None else DEFAULT_TIMEOUT_MIN * 60
    except ValueError as exc:
        raise P.PlanError(str(exc)) from None
    return AutoSampler(conds, secs)


def run(
    browser: Optional[List[str]] = typer.Option(None, "--browser", "-b", help=f"Browser(s) to run, comma-separated: {', '.join(BROWSERS)}. Default: every one installed, here {installed_browsers()} (dawn only when named)."),
    workload: Optional[List[str]] = O.WORKLOAD,
    variant: Optional[List[str]] = O.VARIANT,
    profile: Optional[str] = O.PROFILE,
    tokens: int = O.TOKENS,
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Run folder. " + output_default()),
    headed: bool = typer.Option(False, "--headed", help="Show the browser window (needs a display)."),
    browser_path: Optional[str] = typer.Option(None, "--browser-path", help="Browser executable to launch instead of the one found."),
    seed: int = O.SEED,
    param: Optional[List[str]] = O.PARAM,
    repeat: int = O.REPEAT,
    memory_interval_ms: int = typer.Option(250, "--memory-interval-ms", help="Period of the per-process RSS/USS sampler (ms)."),
    step_timeout_s: float = typer.Option(120.0, "--step-timeout-s", help="Fail a cell when no sample arrives for this long (s)."),
    start_timeout_s: float = typer.Option(90.0, "--start-timeout-s", help="Fail a cell whose worker has not reported (its env sample) this long after the cell started (s): page load, adapter and device."),
    no_probes: bool = O.NO_PROBES,
    browser_arg: Optional[List[str]] = typer.Option(None, "--browser-arg", help="Extra browser command-line flag (repeatable)."),
    without_flag: Optional[List[str]] = typer.Option(None, "--without-flag", help="Drop one of the driver's default flags, e.g. --without-flag=--enable-unsafe-webgpu (repeatable)."),
    webgpu: str = O.WEBGPU,
    emulation_bytes_per_stage: Optional[int] = O.EMULATION_BYTES_PER_STAGE,
    emulation_page_bytes: Optional[int] = O.EMULATION_PAGE_BYTES,
    emulation_option: Optional[List[str]] = O.EMULATION_OPTION,
    model: Optional[Path] = O.MODEL,
    ort_version: Optional[str] = O.ORT_VERSION,
    ort_dist: Optional[Path] = O.ORT_DIST,
    workloads_dir: Optional[List[Path]] = O.WORKLOADS_DIR,
    memory_budget: Optional[str] = O.MEMORY_BUDGET,
    gc_checkpoints: int = typer.Option(0, "--gc-checkpoints", help="Force a full garbage collection in the worker every N tokens where the browser allows (Chromium: DevTools HeapProfiler.collectGarbage; the worker waits at each checkpoint until it is done, at most 10 s) and record what survives; 0 = never."),
    budget: Optional[List[str]] = typer.Option(None, "--budget", help="A budget (e.g. 'chromium/decode-loop/reuse: ms_per_token <= 0.95 * fresh') or a .toml file of them (repeatable); exit 1 when one fails. Grammar: README, Budgets."),
    auto_sample: Optional[str] = typer.Option(None, "--auto-sample", help="Add repetitions until every variant pair's ms_per_token difference CI clears these conditions, e.g. 0% or 0%,5% (tachometer's auto-sampling)."),
    timeout: Optional[str] = typer.Option(None, "--timeout", help="Stop --auto-sample after this long: minutes (default 3), or e.g. 90s."),
    allow_skipped: bool = typer.Option(False, "--allow-skipped", help="Exit 0 even when every cell was skipped (nothing measured); without it such a run exits 1."),
    sample_limit: Optional[List[str]] = typer.Option(None, "--sample-limit", help="Raise (or lower) a cap on what a page may post, KEY=VALUE (repeatable); KEY is realm. or cell. and samples-per-s, bytes-per-s, samples or bytes. Defaults per realm 2000 samples/s, 8 MiB/s, 1,000,000 samples, 1 GiB; per cell twice that. Samples over a cap are refused and the cell ends incomplete, saying so."),
    webdriver_url: Optional[str] = typer.Option(None, "--webdriver-url", help="Drive browsers through this W3C WebDriver endpoint (Selenium Grid 4, Appium, a device farm, chromedriver, a safaridriver on another Mac) instead of launching them."),
    capabilities: Optional[List[Path]] = typer.Option(None, "--capabilities", help="--webdriver-url: a JSON file of W3C capabilities, one browser each (repeatable); \"webgpu-harness:label\" names its cells."),
    connect: Optional[str] = typer.Option(None, "--connect", help="Drive the browser of a Playwright server (ws://HOST:PORT/, `playwright run-server --unsafe`)."),
    cdp_url: Optional[str] = typer.Option(None, "--cdp-url", help="Drive a running Chromium through its DevTools endpoint (http://HOST:PORT, --remote-debugging-port)."),
    public_url: Optional[str] = typer.Option(None, "--public-url", help="Base URL a remote browser reaches the harness at (http(s)://HOST[:PORT]); its port is the one bound."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address the harness's server binds (0.0.0.0 for browsers on other machines)."),
    port: Optional[int] = typer.Option(None, "--port", help="Port the harness's server binds (default: --public-url's, else a free one)."),
    https: bool = typer.Option(False, "--https", help="Serve the pages over https (a generated certificate, or --cert/--key): remote browsers then get a secure context."),
    cert: Optional[Path] = typer.Option(None, "--cert", help="--https: PEM certificate."),
    key: Optional[Path] = typer.Option(None, "--key", help="--https: PEM private key of --cert."),
):
    """Run workloads in browsers, record every sample, write tables, statistics and an HTML report."""
    cell_options = O.picked(locals())
    started = time.monotonic()
    require_measure_extra()
    from harness.verdicts import budgets as B

    with bad_input():
        budgets = B.load(list(budget or []))
        sampler = auto_sampler(auto_sample, timeout)
        plan, run_dir = build_plan(
            output=output, browser=browser, headed=headed, browser_path=browser_path,
            memory_interval_ms=memory_interval_ms, step_timeout_s=step_timeout_s, start_timeout_s=start_timeout_s,
            browser_arg=browser_arg,
            without_flag=without_flag, gc_checkpoints=gc_checkpoints, sample_limit=sample_limit,
            reach=dict(webdriver_url=webdriver_url, capabilities=capabilities, connect=connect,
                       cdp_url=cdp_url, public_url=public_url, host=host, port=port, https=https,
                       cert=cert, key=key),
            **cell_options)
        B.check_references(budgets, plan.workloads)
    sigterm_as_interrupt()  # from here on something runs: Ctrl-C and SIGTERM end it with a report
    runner = None
    try:
        if plan.public_url and (warning := reach_plan.insecure_context_warning([plan.public_url])):
            err.print(f"warning: {warning}", highlight=False, markup=False)
        ensure_tls(plan)
        from harness.drive.runner import Runner  # valid input only: it imports the server and the drivers

        with bad_input(), disk_errors(run_dir):  # the folder is claimed here: a run started on it meanwhile holds it (exit 2)
            runner = Runner(plan, run_dir, argv=sys.argv)
    except KeyboardInterrupt:
        if runner is not None:
            runner.discard()
        err.print("interrupted before any cell started: nothing was recorded", highlight=False, markup=False)
        raise typer.Exit(130)
    cells, interrupted = [], False
    try:
        cells = execute(plan, run_dir, sampler, runner=runner)
    except KeyboardInterrupt:
        # Ctrl-C or SIGTERM: the runner marked unfinished cells failed ("interrupted"); write the
        # tables and the report of what was received, then exit 130.
        interrupted = True
    if not interrupted:
        end_on_full_disk(runner, run_dir, budgets)
    try:
        analysis = finish(run_dir, budgets, summary=not interrupted)
    except KeyboardInterrupt:  # interrupted while writing the report: write it again, whole
        interrupted = True
        analysis = finish(run_dir, budgets, summary=False)
    from harness.drive.base import interrupt_lost

    interrupted = interrupt_lost() or interrupted  # a Ctrl-C Python swallowed while the report was written
    if interrupted:
        err.print(f"interrupted: partial results and report in {run_dir}", highlight=False, markup=False)
        raise typer.Exit(130)
    exit_on_outcome(cells, analysis, allow_skipped)
    say(done_line(cells, time.monotonic() - started, run_dir))


def done_line(cells, seconds: float, run_dir: Path) -> str:
    """The last line of a run that succeeded: ``done: 4 of 4 cells ok in 47 s; report: …``."""
    ok = sum(c.status == "ok" for c in cells)
    skipped = sum(c.status == "skipped" for c in cells)
    took = f"{seconds:.0f} s" if seconds < 120 else f"{seconds // 60:.0f} min {seconds % 60:.0f} s"
    return (f"done: {ok} of {len(cells)} cells ok" + (f", {skipped} skipped" if skipped else "")
            + f" in {took}; report: {run_dir / 'report.html'}")
