"""``webgpu-harness app URL``: measure a user's own, unmodified web app in real browsers.

The probes go into the app's page and every worker it starts (web/inject/): through Chromium's
DevTools protocol (``--inject cdp``, Chromium's default) or a recording reverse proxy
(``--inject proxy``; the only path for WebKit and Safari). Steps are found without app changes
(``--step-on``). The page can be driven first (``--wait-for``, ``--click``, ``--fill``, in the
order given, then ``--script FILE.py``). Cells, run folder, statistics, budgets and report are
``run``'s (harness/app_plan.py maps an app cell onto them); exit 0 when every cell is ok or
skipped and every budget passes, 1 otherwise, 2 on bad input, 130 when interrupted.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import List, Optional

import typer
from typer.core import TyperCommand

from harness import app_plan as A
from harness import plan as P
from harness.cli.common import (bad_input, disk_errors, end_on_full_disk, err, exit_on_outcome, finish, installed_browsers,
                                output_default, require_measure_extra, runs_dir, say, timestamped)
from harness.cli.run import done_line, execute, sigterm_as_interrupt

#: ``ctx.meta`` key of the page actions in command-line order (:class:`AppCommand`).
ACTIONS_KEY = "webgpu_harness.app.actions"
_ACTION_PARAMS = {"wait_for": "--wait-for", "click_": "--click", "fill": "--fill"}


class AppCommand(TyperCommand):
    """The ``app`` command: records the page actions in the order they were given
    (``--wait-for A --click B --wait-for C``), which per-option lists lose."""

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        ordered: list[tuple[str, str]] = []
        try:
            opts, _, order = self.make_parser(ctx).parse_args(args=list(args))
            taken = {name: 0 for name in _ACTION_PARAMS}
            for param in order:
                if param.name in _ACTION_PARAMS:
                    values = opts.get(param.name) or []
                    if taken[param.name] < len(values):
                        ordered.append((_ACTION_PARAMS[param.name], values[taken[param.name]]))
                    taken[param.name] += 1
        except Exception:  # a usage error: the real parse below reports it
            ordered = []
        ctx.meta[ACTIONS_KEY] = ordered
        return super().parse_args(ctx, args)


def build_plan(*, urls, browser, inject, step_on, webgpu, emulation_option, steps, duration, idle, start_timeout,
               action_timeout, actions, script, repeat, output, headed, browser_path, browser_arg, without_flag,
               memory_interval_ms, memory_budget, sample_limit=None) -> tuple[A.AppPlan, Path]:
    """Every option of ``app`` → ``(plan, run folder)``. Raises :class:`harness.plan.PlanError`."""
    from harness.serve.injection import check_step_on

    apps = A.parse_apps(urls)
    try:
        check_step_on(step_on)
    except ValueError as exc:
        raise P.PlanError(str(exc)) from None
    if webgpu not in P.WEBGPU_MODES:
        raise P.PlanError(f"unknown --webgpu {webgpu!r} (valid: {', '.join(P.WEBGPU_MODES)})")
    if steps is not None:
        P.check_range(steps, 1, 10_000_000, "--steps")
    A.check_positive(duration, "--duration")
    A.check_ending(step_on, steps, duration)
    idle = A.parse_idle(idle)
    A.check_positive(start_timeout, "--start-timeout")
    A.check_positive(action_timeout, "--action-timeout")
    P.check_range(repeat, 1, 1000, "--repeat")
    P.check_range(memory_interval_ms, 10, 3_600_000, "--memory-interval-ms")
    budget_bytes = P.parse_memory_budget(memory_budget)
    limits = P.sample_limits(sample_limit)
    acts = A.parse_actions(actions)
    script_path = A.check_script(script)
    run_dir = P.check_new_run_dir(output or timestamped(runs_dir()))
    A.check_app_browsers(browser)
    browsers = P.resolve_browsers(browser, browser_path)
    plan = A.AppPlan(browsers=browsers, workloads=[], variants={}, profiles={}, repeat=repeat, headed=headed,
                     browser_path=browser_path, browser_args=list(browser_arg or []),
                     without_browser_args=list(without_flag or []), memory_interval_s=memory_interval_ms / 1000,
                     start_timeout_s=start_timeout, webgpu=webgpu, memory_budget_bytes=budget_bytes,
                     emulation_options=P.emulation_options(emulation_option), apps=apps,
                     inject=A.resolve_inject(inject, browsers), step_on=step_on, actions=acts, script=script_path,
                     steps=steps, duration_s=duration, idle_s=idle, action_timeout_s=action_timeout,
                     sample_limits=limits)
    return plan, run_dir


def app(
    ctx: typer.Context,
    urls: List[str] = typer.Argument(..., metavar="URL", help="The app's URL (http:// or https://), or NAME=URL; several apps are measured one after the other (cells app × browser × path × repetition; NAME, by default the last part of the URL's path, is the cells' variant)."),
    browser: Optional[List[str]] = typer.Option(None, "--browser", "-b", help=f"Browser(s), comma-separated: {', '.join(A.app_browsers())}. Default: every one installed, here {installed_browsers()}."),
    inject: Optional[List[str]] = typer.Option(None, "--inject", help="How the probes get in: auto (cdp for Chromium, proxy for the others), cdp (Chromium: DevTools init script + Fetch interception; the app keeps its origin), proxy (a recording reverse proxy on loopback, any browser). Comma-separated to cross-check: --inject cdp,proxy."),
    step_on: str = typer.Option("mapAsync", "--step-on", help="Where a step ends: mapAsync (each resolved GPUBuffer.mapAsync: one per token for a decoder reading logits back), mapAsync:N, mark:NAME (performance.mark), console:REGEX (a console message), interval:MS (every MS ms while a GPUDevice exists; needs --steps or --duration, since such steps never stop)."),
    webgpu: str = typer.Option("auto", "--webgpu", help="auto: the browser's WebGPU, emulated where it has none (WebKitGTK); real: never emulate; emulated: always the JS emulation (modeled native memory)."),
    emulation_option: Optional[List[str]] = typer.Option(None, "--emulation-option", help="Emulated WebGPU: an installEmulatedWebGPU option KEY=VALUE (repeatable), e.g. limits=ios-2025."),
    steps: Optional[int] = typer.Option(None, "--steps", help="End a cell when the measured page or worker reached this many steps (fewer: failed)."),
    duration: Optional[float] = typer.Option(None, "--duration", help="End a cell this many seconds after the app was opened."),
    idle: str = typer.Option("auto", "--idle", help="Without --duration: end a cell when no step came for this many seconds. auto (default): 3 × the longest wait for a step so far (from the page actions to the first step included), 5 s at least and 30 s at most: a fast app ends 5 s after its last step, one slow to reach a step (model load, pipeline compiles on a CPU adapter) still gets 30 s. Memory samples taken after the last step are counted as such (summary.md, memory.csv after_last_step)."),
    start_timeout: float = typer.Option(60.0, "--start-timeout", help="Seconds after the page actions to wait for the first step; none by then: skipped when no realm made a GPUDevice ('no WebGPU device'), else failed."),
    action_timeout: float = typer.Option(30.0, "--action-timeout", help="Seconds each --wait-for/--click/--fill waits for its element."),
    wait_for: Optional[List[str]] = typer.Option(None, "--wait-for", help="Wait until an element is visible: a CSS selector or text=TEXT (repeatable; actions run in the order given)."),
    click_: Optional[List[str]] = typer.Option(None, "--click", help="Click an element (CSS selector or text=TEXT; repeatable, in order)."),
    fill: Optional[List[str]] = typer.Option(None, "--fill", help="Type into a field: SELECTOR=TEXT (repeatable, in order)."),
    script: Optional[Path] = typer.Option(None, "--script", help="A Python file defining drive(page), called after the actions with the driver's page object (a Playwright Page; the Selenium WebDriver for WebKitGTK and Safari)."),
    repeat: int = typer.Option(1, "--repeat", help="Repetitions of every cell (fresh browser context each)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Run folder. " + output_default()),
    headed: bool = typer.Option(False, "--headed", help="Show the browser window (needs a display)."),
    browser_path: Optional[str] = typer.Option(None, "--browser-path", help="Browser executable to launch instead of the one found."),
    browser_arg: Optional[List[str]] = typer.Option(None, "--browser-arg", help="Extra browser command-line flag (repeatable)."),
    without_flag: Optional[List[str]] = typer.Option(None, "--without-flag", help="Drop one of the driver's default flags (repeatable)."),
    memory_interval_ms: int = typer.Option(250, "--memory-interval-ms", help="Period of the per-process RSS/USS sampler (ms)."),
    memory_budget: Optional[str] = typer.Option(None, "--memory-budget", help="e.g. 3GB: mark the step at which the content process would exceed it. Default 2048MB: iOS killed the page at ~2 GB in the onnxruntime field report. 'none': no budget."),
    budget: Optional[List[str]] = typer.Option(None, "--budget", help="A budget (e.g. 'chromium/app/*: bind_groups_per_token <= 30') or a .toml file of them (repeatable); exit 1 when one fails."),
    allow_skipped: bool = typer.Option(False, "--allow-skipped", help="Exit 0 even when every cell was skipped (no realm made a GPUDevice); without it such a run exits 1, as for run."),
    sample_limit: Optional[List[str]] = typer.Option(None, "--sample-limit", help="Raise (or lower) a cap on what the app's pages and workers may post, KEY=VALUE (repeatable); KEY is realm. or cell. and samples-per-s, bytes-per-s, samples or bytes. Defaults per realm 2000 samples/s, 8 MiB/s, 1,000,000 samples, 1 GiB; per cell twice that. Samples over a cap are refused and the cell ends incomplete, saying so."),
):
    """Measure your own web app, unchanged: probes injected into its page and every worker it starts."""
    started = time.monotonic()
    require_measure_extra()
    from harness.verdicts import budgets as B

    given = ctx.meta.get(ACTIONS_KEY)
    if given is None:  # called without AppCommand's parse (in-process): the options' own order
        given = [(o, v) for name, o in _ACTION_PARAMS.items()
                 for v in ({"wait_for": wait_for, "click_": click_, "fill": fill}[name] or [])]
    with bad_input():
        budgets = B.load(list(budget or []))
        plan, run_dir = build_plan(
            urls=urls, browser=browser, inject=inject, step_on=step_on, webgpu=webgpu,
            emulation_option=emulation_option, steps=steps, duration=duration, idle=idle,
            start_timeout=start_timeout, action_timeout=action_timeout, actions=given, script=script,
            repeat=repeat, output=output, headed=headed, browser_path=browser_path, browser_arg=browser_arg,
            without_flag=without_flag, memory_interval_ms=memory_interval_ms, memory_budget=memory_budget,
            sample_limit=sample_limit)
    sigterm_as_interrupt()  # from here on something runs: Ctrl-C and SIGTERM end it with a report
    runner = None
    try:
        from harness.drive.app_runner import AppRunner  # valid input only: it imports the server and the drivers

        with bad_input(), disk_errors(run_dir):
            runner = AppRunner(plan, run_dir, argv=sys.argv)  # claims the folder (a run meanwhile: exit 2)
    except KeyboardInterrupt:
        if runner is not None:
            runner.discard()
        err.print("interrupted before any cell started: nothing was recorded", highlight=False, markup=False)
        raise typer.Exit(130)
    try:
        cells = execute(plan, run_dir, runner=runner)
    except KeyboardInterrupt:
        finish(run_dir, budgets, summary=False)
        err.print(f"interrupted: partial results and report in {run_dir}", highlight=False, markup=False)
        raise typer.Exit(130)
    end_on_full_disk(runner, run_dir, budgets)
    analysis = finish(run_dir, budgets)
    exit_on_outcome(cells, analysis, allow_skipped)
    say(done_line(cells, time.monotonic() - started, run_dir))
