"""Command line: ``webgpu-harness run | serve | doctor``.

Bad input (unknown browser, workload, variant or profile; a bad number) prints one line naming
the valid choices and exits with status 2.
"""

from __future__ import annotations

import sys
import time
from datetime import datetime
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from harness import REPO_ROOT, __version__
from harness.browsers import BROWSERS, BrowserNotFound
from harness.workloads import Workload, discover

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Measure, in real browsers, what WebGPU LLM decoding costs per generated token.")
# Piped output (make run, CI logs) is not a terminal: rich would wrap tables at 80 columns.
console = Console(width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True)

#: The suite ``run`` measures when no --workload is given.
DEFAULT_WORKLOADS = ["decode-loop"]
RUNS_DIR = REPO_ROOT / "reports" / "runs"


def fail(message: str) -> None:
    """Print a one-line error and exit 2 (bad input)."""
    err.print(f"error: {message}", highlight=False, soft_wrap=True, markup=False, emoji=False)
    raise typer.Exit(2)


def _split(values: Optional[List[str]], option: str = "") -> list[str]:
    """Comma-separated, repeatable option values, de-duplicated in order. An option given but
    naming nothing (``-w ""``) is an error, not "the default"."""
    out = list(dict.fromkeys(v.strip() for item in values or [] for v in item.split(",") if v.strip()))
    if values and not out:
        fail(f"{option or 'option'} names nothing")
    return out


_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30}


def parse_bytes(text: str, option: str) -> int:
    """'2048MB' → 2_048_000_000 bytes (KB/MB/GB decimal, KiB/MiB/GiB binary). Exits 2 if bad."""
    import re

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", text or "")
    unit = m.group(2).upper() if m else None
    if not m or unit not in _UNITS:
        fail(f"{option} {text!r} is not a size (valid units: B, KB, MB, GB, KiB, MiB, GiB)")
    return int(float(m.group(1)) * _UNITS[unit])


#: installEmulatedWebGPU options settable with --emulation-option (web/emulation/webgpu-emulated.js)
EMULATION_OPTIONS = ("reportCostToJs", "retainWrappersUntilDone", "completion", "contents", "limits",
                     "logUncapturedErrors", "argumentBytes", "memoryBudgetBytes", "atMemoryBudget",
                     "encoderRetainsBindGroups", "bufferRecordsEncoders", "encoderRecordBytes")


def _emulation_options(values: Optional[List[str]]) -> dict:
    out = _parse_params(values, "--emulation-option")
    for key in out:
        if key not in EMULATION_OPTIONS:
            fail(f"unknown --emulation-option {key!r} (valid: {', '.join(EMULATION_OPTIONS)})")
    return out


#: Cell settings that have options of their own: --param may not set them.
RESERVED_PARAMS = ("workload", "variant", "profile", "profileName", "tokens", "seed", "probes")


def _parse_params(values: Optional[List[str]], option: str = "--param") -> dict:
    import math

    out: dict = {}
    for item in values or []:
        if "=" not in item or not item.split("=", 1)[0].strip():
            fail(f"{option} {item!r} is not KEY=VALUE")
        k, v = item.split("=", 1)
        k = k.strip()
        if option == "--param" and k in RESERVED_PARAMS:
            fail(f"--param {k} is set by its own option (--{k.lower()}); reserved: {', '.join(RESERVED_PARAMS)}")
        try:
            if not math.isfinite(float(v)):
                fail(f"{option} {item!r}: value must be finite")
        except ValueError:
            pass
        for conv in (int, float):
            try:
                out[k] = conv(v)
                break
            except ValueError:
                continue
        else:
            out[k] = {"true": True, "false": False}.get(v.lower(), v)
    return out


def resolve_workloads(workload, variant, profile):
    """Validate workload, variant and profile names. Returns (workloads, variants, profiles)."""
    all_wl = discover()
    names = _split(workload, "--workload") or DEFAULT_WORKLOADS
    for n in names:
        if n not in all_wl:
            fail(f"unknown workload {n!r} (valid: {', '.join(sorted(all_wl))})")
    wls: list[Workload] = [all_wl[n] for n in names]
    wanted = _split(variant, "--variant")
    variants = {}
    for wl in wls:
        if wanted:
            bad = [v for v in wanted if v not in wl.variants]
            if bad:
                fail(f"unknown variant {bad[0]!r} for workload {wl.name} (valid: {', '.join(wl.variants)})")
            variants[wl.name] = wanted
        else:
            variants[wl.name] = wl.variants_to_run()
    profiles = {}
    for wl in wls:
        if profile:
            if wl.profiles and profile not in wl.profiles:
                fail(f"unknown profile {profile!r} for workload {wl.name} (valid: {', '.join(wl.profiles)})")
            profiles[wl.name] = profile if wl.profiles else None
        else:
            profiles[wl.name] = wl.default_profile
    return wls, variants, profiles


def resolve_browsers(browser, browser_path) -> list[str]:
    """Validate --browser names (default: every installed browser); exit 2 with how to install."""
    browsers = [] if browser is None else _split(browser, "--browser")
    if browser_path and len(browsers) != 1:
        fail("--browser-path needs exactly one --browser (it replaces that browser's executable)")
    for b in browsers:
        if b not in BROWSERS:
            fail(f"unknown browser {b!r} (valid: {', '.join(BROWSERS)})")
    if browsers:
        for b in browsers:
            try:
                BROWSERS[b]().locate(browser_path)
            except BrowserNotFound as exc:
                fail(f"{b}: {exc}")
    else:
        browsers = [b for b in BROWSERS if _available(b, browser_path)]
        if not browsers:
            fail("no supported browser is installed; run `webgpu-harness doctor` for how to install one")
    return browsers


def resolve_plan_inputs(browser, workload, variant, profile, browser_path):
    """Validate names against what exists. Returns (browsers, workloads, variants, profiles)."""
    wls, variants, profiles = resolve_workloads(workload, variant, profile)
    return resolve_browsers(browser, browser_path), wls, variants, profiles


def engine_params(wls, profiles: dict, params: dict, model: Optional[Path], ort_version: Optional[str]) -> dict:
    """For ort-decode: the onnxruntime-web install (``ortDist``/``ortVersion`` params) and a
    ``--model``'s URL and external data. Updates ``params``/``profiles``; returns the extra
    server roots (URL prefix → folder). Exits 2 on an engine or model that cannot be used."""
    extra_roots: dict = {}
    if any(w.name == "ort-decode" for w in wls):
        from harness.engines import EngineError, find_ort, user_model

        try:
            ort = find_ort(ort_version)
            params.setdefault("ortDist", ort.dist_url)
            params.setdefault("ortVersion", ort.version)
            if model is not None:
                um = user_model(model)
                prefix, folder = um.root
                extra_roots[prefix] = folder
                params.update(model=um.url, externalData=um.external_data_param())
                profiles["ort-decode"] = "model-" + "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in um.path.stem)
        except EngineError as exc:
            fail(str(exc))
    elif model is not None or ort_version is not None:
        fail("--model and --ort-version apply to the ort-decode workload (add --workload ort-decode)")
    return extra_roots


def _check_kv_capacity(wls, profiles, tokens: int, params: dict) -> None:
    """Exit 2 when a profile's KV cache (``max_tokens``, after --param overrides) cannot hold
    --tokens positions, instead of failing every cell at that token."""
    for wl in wls:
        prof = wl.profiles.get(profiles.get(wl.name) or "", {})
        cap = params.get("max_tokens", prof.get("max_tokens"))
        per_call = params.get("tokens_per_call") if "tokens_per_call" in wl.parameters else None
        # decode-loop generate calls (tokens_per_call > 0) each start again at position 0
        positions = min(tokens, per_call) if isinstance(per_call, int) and per_call > 0 else tokens
        if isinstance(cap, int) and positions > cap:
            fail(f"--tokens {positions} exceeds {wl.name} profile {profiles[wl.name]}'s KV capacity max_tokens={cap}; "
                 f"lower --tokens or raise it with --param max_tokens={positions}")


def _available(name: str, browser_path: Optional[str]) -> bool:
    try:
        BROWSERS[name]().locate(browser_path)
        return True
    except BrowserNotFound:
        return False


@app.command()
def run(
    browser: Optional[List[str]] = typer.Option(None, "--browser", "-b", help=f"Browser(s) to run, comma-separated: {', '.join(BROWSERS)}. Default: every one installed."),
    workload: Optional[List[str]] = typer.Option(None, "--workload", "-w", help="Workload(s) from workloads/. Default: the default suite (decode-loop)."),
    variant: Optional[List[str]] = typer.Option(None, "--variant", "-v", help="Variant(s) of the workload. Default: the manifest's default variants (decode-loop: fresh, reuse)."),
    profile: Optional[str] = typer.Option(None, "--profile", "-p", help="Model profile from the workload's manifest. Default: the manifest's default profile."),
    tokens: int = typer.Option(64, "--tokens", "-n", help="Tokens to decode per cell."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Run folder. Default: reports/runs/<timestamp>/."),
    headed: bool = typer.Option(False, "--headed", help="Show the browser window (needs a display)."),
    browser_path: Optional[str] = typer.Option(None, "--browser-path", help="Browser executable to launch instead of the one found."),
    seed: int = typer.Option(1, "--seed", help="Seed of the workload's random weights."),
    param: Optional[List[str]] = typer.Option(None, "--param", help="Workload parameter KEY=VALUE (repeatable)."),
    repeat: int = typer.Option(1, "--repeat", help="Repetitions of every cell."),
    memory_interval_ms: int = typer.Option(250, "--memory-interval-ms", help="Period of the per-process RSS/USS sampler (ms)."),
    step_timeout_s: float = typer.Option(120.0, "--step-timeout-s", help="Fail a cell when no sample arrives for this long (s)."),
    no_probes: bool = typer.Option(False, "--no-probes", help="Don't wrap WebGPU calls (timing only; counters read 0)."),
    browser_arg: Optional[List[str]] = typer.Option(None, "--browser-arg", help="Extra browser command-line flag (repeatable)."),
    without_flag: Optional[List[str]] = typer.Option(None, "--without-flag", help="Drop one of the driver's default flags, e.g. --without-flag=--enable-unsafe-webgpu (repeatable)."),
    webgpu: str = typer.Option("auto", "--webgpu", help="auto: the browser's WebGPU, emulated where it has none (WebKitGTK); real: never emulate (no WebGPU → skipped); emulated: always the JS emulation (modeled native memory)."),
    emulation_bytes_per_stage: int = typer.Option(16384, "--emulation-bytes-per-stage", help="Emulated WebGPU: modeled native bytes per shader stage with bindings, at least (default one 16 KiB page; WebKit BindGroup.mm)."),
    emulation_page_bytes: int = typer.Option(16384, "--emulation-page-bytes", help="Emulated WebGPU: round each stage's argument buffer up to this (0: no rounding)."),
    emulation_option: Optional[List[str]] = typer.Option(None, "--emulation-option", help="Emulated WebGPU: another installEmulatedWebGPU option KEY=VALUE (repeatable), e.g. reportCostToJs=true, retainWrappersUntilDone=true, completion=microtask. See web/emulation/webgpu-emulated.js."),
    model: Optional[Path] = typer.Option(None, "--model", help="ort-decode: a local ONNX decoder (Transformers.js / onnxruntime-genai layout; external data beside it) instead of the built-in fixtures."),
    ort_version: Optional[str] = typer.Option(None, "--ort-version", help="ort-decode: onnxruntime-web version to load from node_modules/ (default: the pinned 1.31.0-dev.20260914-8d85527a0)."),
    memory_budget: Optional[str] = typer.Option(None, "--memory-budget", help="e.g. 2048MB: mark the token at which the content process (RSS + modeled native bytes) would exceed it (iOS killed the page at 2,048 MB in the field report). Default off."),
    budget: Optional[List[str]] = typer.Option(None, "--budget", help="A budget (e.g. 'chromium/decode-loop/reuse: ms_per_token <= 0.95 * fresh') or a .toml file of them (repeatable); exit 1 when one fails. Grammar: README, Budgets."),
    auto_sample: Optional[str] = typer.Option(None, "--auto-sample", help="Add repetitions until every variant pair's ms_per_token difference CI clears these conditions, e.g. 0% or 0%,5% (tachometer's auto-sampling)."),
    timeout: Optional[str] = typer.Option(None, "--timeout", help="Stop --auto-sample after this long: minutes (default 3), or e.g. 90s."),
):
    """Run workloads in browsers, record every sample, write tables and an HTML report."""
    if not 1 <= tokens <= 100_000:
        fail(f"--tokens must be between 1 and 100000 (got {tokens})")
    if not 1 <= repeat <= 1000:
        fail(f"--repeat must be between 1 and 1000 (got {repeat})")
    if memory_interval_ms < 10:
        fail(f"--memory-interval-ms must be at least 10 (got {memory_interval_ms})")
    if step_timeout_s <= 0:
        fail(f"--step-timeout-s must be > 0 (got {step_timeout_s})")
    if output is not None and output.exists() and not output.is_dir():
        fail(f"--output {output} is a file; give a folder")
    if webgpu not in ("auto", "real", "emulated"):
        fail(f"unknown --webgpu {webgpu!r} (valid: auto, real, emulated)")
    if emulation_bytes_per_stage < 0 or emulation_page_bytes < 0:
        fail("--emulation-bytes-per-stage and --emulation-page-bytes must be >= 0")
    budget_bytes = parse_bytes(memory_budget, "--memory-budget") if memory_budget else None
    if budget_bytes is not None and budget_bytes < 1 << 20:
        fail(f"--memory-budget {memory_budget!r} is under 1 MiB; give e.g. 2048MB")
    from harness import cli_stats

    budgets, sampler = cli_stats.load_budgets(budget), cli_stats.auto_sampler(auto_sample, timeout)
    browsers, wls, variants, profiles = resolve_plan_inputs(browser, workload, variant, profile, browser_path)
    cli_stats.check_references(budgets, wls)
    params = _parse_params(param)
    _check_kv_capacity(wls, profiles, tokens, params)
    extra_roots = engine_params(wls, profiles, params, model, ort_version)
    from harness.runner import DEFAULT_EMULATION, RunPlan

    run_dir = output or RUNS_DIR / datetime.now().strftime("%Y%m%d-%H%M%S")
    if (run_dir / "samples.jsonl").exists():
        fail(f"{run_dir} already holds a run; choose another --output")
    plan = RunPlan(browsers=browsers, workloads=wls, variants=variants, profiles=profiles, tokens=tokens,
                   seed=seed, params=params, extra_roots=extra_roots, repeat=repeat, headed=headed,
                   browser_path=browser_path, memory_interval_s=memory_interval_ms / 1000,
                   step_timeout_s=step_timeout_s, probes=not no_probes,
                   browser_args=list(browser_arg or []), without_browser_args=list(without_flag or []),
                   webgpu=webgpu, memory_budget_bytes=budget_bytes,
                   emulation_options={**DEFAULT_EMULATION, "bytesPerStage": emulation_bytes_per_stage,
                                      "pageBytes": emulation_page_bytes,
                                      **_emulation_options(emulation_option)})
    try:
        cells = _execute(plan, run_dir, sampler)
    except KeyboardInterrupt:
        # Ctrl-C or SIGTERM: the runner marked unfinished cells failed ("interrupted"); keep going
        # to write the tables and the report of what was received, then exit 130.
        report, _ = finish_run(run_dir)
        err.print(f"interrupted: partial results and report in {run_dir}", highlight=False, markup=False)
        raise typer.Exit(130)
    report, t = finish_run(run_dir)
    print_summary(run_dir)
    budget_failures = cli_stats.after_run(run_dir, budgets, t)
    console.print(f"report: {report}")
    failed = [c for c in cells if c.status not in ("ok", "skipped")]  # failed, device-lost
    if failed:
        err.print(f"{len(failed)} cell(s) failed: " + "; ".join(f"{c.cell}: {c.reason}" for c in failed), highlight=False,
                  markup=False, emoji=False)
    if budget_failures:
        err.print(f"{len(budget_failures)} budget(s) failed: " + "; ".join(r.budget.name for r in budget_failures), highlight=False, markup=False)
    if failed or budget_failures:
        raise typer.Exit(1)


def _sigterm_as_interrupt() -> None:
    """Let SIGTERM end a run like Ctrl-C does (cells marked, tables written)."""
    import signal

    def handler(signum, frame):
        raise KeyboardInterrupt

    try:
        signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread (tests driving the CLI in-process)
        pass


def _execute(plan, run_dir: Path, sampler=None):
    from harness.runner import Runner

    _sigterm_as_interrupt()
    runner = Runner(plan, run_dir, argv=sys.argv)
    total = len(runner.cells)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=False) as progress:
        overall = progress.add_task("cells", total=total)
        tasks: dict[str, int] = {}

        def on(event, cell, info):
            if event == "start":
                tasks[cell.cell] = progress.add_task(f"{cell.browser} {cell.workload}/{cell.variant}", total=cell.tokens)
            elif event == "step":
                progress.update(tasks[cell.cell], completed=info["steps"])
            elif event == "end":
                if cell.cell in tasks:
                    progress.update(tasks[cell.cell], description=f"{cell.browser} {cell.workload}/{cell.variant}: {cell.status}")
                progress.advance(overall)

        runner.progress = on
        if sampler is not None:  # --auto-sample: adds repetitions until the CIs clear its conditions
            return sampler.sample(runner, lambda: progress.update(overall, total=len(runner.cells)),
                                  lambda msg: console.print(msg, highlight=False, markup=False, soft_wrap=True))
        return runner.run()


def finish_run(run_dir: Path):
    """Build the tables and the report of a finished (or crashed) run folder.

    Returns (report path, :class:`harness.tables.Tables`); pass the tables on to
    ``cli_stats.after_run`` so the run is read and its statistics computed once."""
    from harness import report, tables

    t = tables.build(run_dir)
    tables.write(t, run_dir)
    return report.render(t, run_dir), t


def print_summary(run_dir: Path) -> None:
    import pandas as pd

    from harness.report import provenance

    s = pd.read_csv(run_dir / "summary.csv", keep_default_na=False, na_values=[""])
    table = Table(title="summary (per-token values: medians over tokens after the first)")
    heads = {"cell": "cell", "status": "status", "bind_groups_per_token": "bind groups/tok",
             "dispatches_per_token": "dispatches/tok", "submits_per_token": "submits/tok",
             "live_bind_groups_end": "live bind groups", "median_ms_per_token": "ms/tok",
             "tokens_identical": "same tokens"}
    for h in heads.values():
        table.add_column(h, overflow="fold")
    for _, r in s.iterrows():
        cells = []
        for c in heads:
            v = r[c]
            cells.append("" if pd.isna(v) else (f"{v:.1f}" if isinstance(v, float) else str(v)))
        cells[0] = f"{r['browser']} {r['workload']}/{r['variant']} [{r['profile']}]"
        table.add_row(*[Text(c) for c in cells])  # reasons may hold [brackets]: plain text
    console.print(table, markup=False, emoji=False)
    for source in sorted({provenance(r) for _, r in s.iterrows()}):
        console.print(f"  measured on: {source}", highlight=False, markup=False)
    for _, r in s[s["status"] != "ok"].iterrows():
        console.print(f"  {r['cell']}: {r['status']}: {r['reason']}", highlight=False, markup=False, emoji=False)


@app.command()
def serve(
    workload: Optional[List[str]] = typer.Option(None, "--workload", "-w", help="Workload(s) to offer."),
    variant: Optional[List[str]] = typer.Option(None, "--variant", "-v", help="Variant(s)."),
    profile: Optional[str] = typer.Option(None, "--profile", "-p", help="Model profile."),
    tokens: int = typer.Option(64, "--tokens", "-n", help="Tokens per cell."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Run folder for the samples."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind."),
    port: int = typer.Option(0, "--port", help="Port (0: a free one)."),
    label: str = typer.Option("manual", "--label", help="Browser label recorded for these cells."),
):
    """Serve the workloads for a browser you open yourself; samples are still recorded.

    Prints one URL per cell. Stop with Ctrl-C (or SIGTERM): the tables and report are then
    written; cells never opened are recorded as skipped, unfinished ones as failed."""
    import re

    if not 1 <= tokens <= 100_000:
        fail(f"--tokens must be between 1 and 100000 (got {tokens})")
    if not 0 <= port <= 65535:
        fail(f"--port must be 0..65535 (got {port})")
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,40}", label):
        fail(f"--label {label!r} must be 1-40 letters, digits, '-' or '_' (it becomes part of cell ids and URLs)")
    wls, variants, profiles = resolve_workloads(workload, variant, profile)
    params: dict = {}
    _check_kv_capacity(wls, profiles, tokens, params)
    extra_roots = engine_params(wls, profiles, params, None, None)
    run_dir = output or RUNS_DIR / (datetime.now().strftime("%Y%m%d-%H%M%S") + "-serve")
    if (run_dir / "manifest.json").exists() or (run_dir / "samples.jsonl").exists():
        fail(f"{run_dir} already holds a run; choose another --output")
    from harness.runner import RunPlan, Runner, cell_config
    from harness.server import DEFAULT_ROOTS, ServerThread, create_app

    plan = RunPlan(browsers=[label], workloads=wls, variants=variants, profiles=profiles, tokens=tokens,
                   params=params, extra_roots=extra_roots)
    runner = Runner(plan, run_dir, argv=sys.argv)
    for cell in runner.cells:
        runner.store.register(cell.cell, cell_config(cell, runner.workloads[cell.workload], plan))
    runner.write_manifest()
    try:
        server = ServerThread(create_app(runner.store, {**DEFAULT_ROOTS, **extra_roots}), host=host, port=port)
        server.__enter__()
    except (OSError, RuntimeError) as exc:  # bad host, port in use: leave no half-made run folder
        import shutil

        runner.store.close()
        shutil.rmtree(run_dir, ignore_errors=True)
        fail(f"cannot serve on {host}:{port}: {exc}")
    _sigterm_as_interrupt()
    try:
        console.print(f"serving {REPO_ROOT} at {server.url}/  (samples → {run_dir}/samples.jsonl)")
        for cell in runner.cells:
            console.print(f"  {server.url}/web/runner.html?cell={cell.cell}", markup=False)
        while True:
            time.sleep(1)
            _settle_served_cells(runner)
    except KeyboardInterrupt:
        pass
    finally:
        server.__exit__(None, None, None)
    _settle_served_cells(runner)  # outcomes that arrived since the last poll
    for cell in runner.cells:
        st = runner.store.cells[cell.cell]
        if cell.status == "pending" and st.env is None and st.steps == 0:
            cell.status, cell.reason = "skipped", "never opened in a browser while serve ran"
    runner.mark_unfinished("serve stopped before this cell finished")
    runner.write_manifest()
    runner.store.close()
    report, t = finish_run(run_dir)
    from harness import cli_stats

    cli_stats.after_run(run_dir, [], t)  # stats.json/csv, differences.csv, summary.md, junit.xml like run
    console.print(f"report: {report}")


def _settle_served_cells(runner) -> None:
    """Give each served cell whose worker reported done/skip/error its status (serve mode)."""
    for cell in runner.cells:
        st = runner.store.cells[cell.cell]
        if st.outcome and cell.status == "pending":
            cell.status = {"done": "ok", "skip": "skipped"}.get(st.outcome, "failed")
            cell.reason = st.reason if cell.status != "failed" else f"workload error: {st.reason}"
            runner._record_env(cell, st.env)
            runner.write_manifest()
            console.print(f"{cell.cell}: {cell.status} {cell.reason}", markup=False)


@app.command()
def doctor():
    """List browsers, drivers and WebGPU adapters found, and how to install what is missing."""
    table = Table(title="webgpu-harness doctor")
    for col in ("browser", "found", "driven by", "version", "WebGPU adapter", "how to fix"):
        table.add_column(col, overflow="fold")
    for name, cls in BROWSERS.items():
        driver = cls()
        try:
            located = driver.locate()
        except BrowserNotFound as exc:
            table.add_row(name, "no", "", "", "", str(exc))
            continue
        adapter, version, fix = "", "", ""
        try:
            from harness.doctor import probe_adapter

            version, adapter = probe_adapter(driver, located)
            if adapter.startswith("none"):
                adapter += " → runs on emulated WebGPU (modeled native memory)"
        except Exception as exc:  # a broken install is reported, not raised
            fix = f"launch failed: {str(exc).splitlines()[0]}"
        table.add_row(name, "yes", f"{located.driver}: {located.executable}", version, adapter, fix)
    from harness.doctor import native_adapters

    for label, note in native_adapters():
        table.add_row("native (wgpu)", "yes" if label else "no", "wgpu-native via wgpu-py", "", label or "", note)
    console.print(table)
    console.print(f"workloads: {', '.join(sorted(discover()))}")


def _register_extensions() -> None:
    """Commands contributed by other modules: each exposes ``register(app)``."""
    import importlib

    for mod in ("harness.cli_stats", "harness.native.cli"):
        try:
            importlib.import_module(mod).register(app)
        except ModuleNotFoundError as exc:
            if exc.name not in (mod, mod.rsplit(".", 1)[0]):
                raise


_register_extensions()


def main() -> None:  # pragma: no cover - console script entry
    app()


def _print_version(value: bool) -> None:
    if value:
        console.print(__version__)
        raise typer.Exit(0)


@app.callback()
def _main(version: bool = typer.Option(False, "--version", is_eager=True, callback=_print_version,
                                       help="Print the version and exit.")):
    """Measure, in real browsers, what WebGPU LLM decoding costs per generated token."""
