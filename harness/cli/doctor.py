"""``webgpu-harness doctor``: browsers, drivers and WebGPU adapters found, and how to install
what is missing (launches each browser once; harness/drive/doctor.py); then what the harness
can measure beside the browser here (psutil or macOS physical footprint, Safari's processes),
what phones need (``--https`` certificates, QR codes) and whether remote endpoints answer
(harness/drive/doctor_platform.py); then the workloads (built-in and ``--workloads-dir``), where
each pinned npm package was found, and where the harness is installed and writes."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.table import Table

from harness.cli.common import console, fail, require_measure_extra, say
from harness.drive.base import BrowserNotFound
from harness.drive.registry import BROWSERS
from harness.workloads import WorkloadError, discover, user_dirs


def doctor(
    workloads_dir: Optional[List[Path]] = typer.Option(None, "--workloads-dir", help="A folder of your own workloads to list too (as for run). Default: $WEBGPU_HARNESS_WORKLOADS."),
    webdriver_url: Optional[str] = typer.Option(None, "--webdriver-url", help="Also check this WebDriver endpoint (GET /status)."),
    connect: Optional[str] = typer.Option(None, "--connect", help="Also check this Playwright server (ws://HOST:PORT/)."),
    cdp_url: Optional[str] = typer.Option(None, "--cdp-url", help="Also check this DevTools endpoint (GET /json/version)."),
):
    """List browsers, drivers and WebGPU adapters found, the workloads, and how to install what is missing."""
    require_measure_extra()
    try:
        wls = discover(workloads_dir)
    except WorkloadError as exc:  # a bad folder: one line, exit 2, before any browser starts
        fail(str(exc))
    from harness import locations, npm
    from harness.drive import doctor_platform
    from harness.drive.doctor import native_adapters, probe_adapter

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
            version, adapter = probe_adapter(driver, located)
            if adapter.startswith("none"):
                adapter += " → runs on emulated WebGPU (modeled native memory)"
        except Exception as exc:  # a broken install is reported, not raised
            fix = f"launch failed: {str(exc).splitlines()[0]}"
        table.add_row(name, "yes", f"{located.driver}: {located.executable}", version, adapter, fix)
    for label, note in native_adapters():
        table.add_row("native (wgpu)", "yes" if label else "no", "wgpu-native via wgpu-py", "", label or "", note)
    console.print(table)
    beside = Table(title="beside the browser: memory, phones, remote browsers")
    for col in ("what", "ok", "detail"):
        beside.add_column(col, overflow="fold")
    endpoints = [(k, u) for k, u in (("webdriver", webdriver_url), ("playwright", connect), ("cdp", cdp_url)) if u]
    for what, ok, detail in doctor_platform.rows(endpoints):
        beside.add_row(what, "yes" if ok else "no", detail)
    console.print(beside)
    say(f"workloads: {', '.join(sorted(n for n, w in wls.items() if w.builtin))} (built in: {locations.workloads_dir()})")
    for folder in user_dirs(workloads_dir):
        mine = sorted(n for n, w in wls.items() if folder in (w.folder, w.folder.parent))
        say(f"workloads: {', '.join(mine)} (from {folder})")
    for name, version in npm.locked_packages().items():
        try:
            folder, place = npm.find(name, version)
            say(f"npm: {name} {version}: {place.label}: {folder}")
        except npm.NpmError:
            say(f"npm: {name} {version}: not found in {npm.where_looked()}; `webgpu-harness setup` installs it")
    say(f"harness: {locations.install_kind()}; run folders go to {locations.runs_dir()}")
