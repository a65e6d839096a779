"""``webgpu-harness doctor``: browsers, drivers and WebGPU adapters found, and how to install
what is missing (launches each browser once; harness/drive/doctor.py); then what the harness
can measure beside the browser here (psutil or macOS physical footprint, Safari's processes),
what phones need (``--https`` certificates, QR codes) and whether remote endpoints answer
(harness/drive/doctor_platform.py); then the workloads (built-in and ``--workloads-dir``), where
each pinned npm package was found, and where the harness is installed and writes.

``--bundle FILE.zip`` also writes one archive for an issue (harness/store/bundle.py): the
environment, every browser's adapter in full, this output and a 32-token run of the default
suite on every local browser. A FILE that cannot be written (a folder, no such folder, a
read-only place, not .zip) is exit 2 before any browser starts."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.table import Table

from harness import plan as P
from harness.cli.common import bad_input, console, err, require_measure_extra, say, version_line
from harness import workload_names
from harness.workload_names import WorkloadError, user_dirs


#: Tokens of the bundle's run (issue 21: "a 32-token run of the default suite on every local browser").
BUNDLE_TOKENS = 32


def doctor(
    workloads_dir: Optional[List[Path]] = typer.Option(None, "--workloads-dir", help="A folder of your own workloads to list too (as for run). Default: $WEBGPU_HARNESS_WORKLOADS."),
    webdriver_url: Optional[str] = typer.Option(None, "--webdriver-url", help="Also check this WebDriver endpoint (GET /status)."),
    connect: Optional[str] = typer.Option(None, "--connect", help="Also check this Playwright server (ws://HOST:PORT/)."),
    cdp_url: Optional[str] = typer.Option(None, "--cdp-url", help="Also check this DevTools endpoint (GET /json/version)."),
    bundle: Optional[Path] = typer.Option(None, "--bundle", help=f"Also write FILE.zip to attach to an issue: the environment, every browser's WebGPU adapter (features, limits), this output and a {BUNDLE_TOKENS}-token run of the default suite on every local browser (README, \"A bundle for an issue\")."),
):
    """List browsers, drivers and WebGPU adapters found, the workloads, and how to install what is missing."""
    require_measure_extra()
    with bad_input():  # before any browser starts
        if bundle is not None:
            bundle = P.check_new_file(bundle, "--bundle", (".zip",))
        from harness.drive.remote import TargetError, check_url  # as run checks them: one line, before any browser

        try:
            webdriver_url = check_url(webdriver_url, "--webdriver-url", ("http", "https")) if webdriver_url else None
            connect = check_url(connect, "--connect", ("ws", "wss")) if connect else None
            cdp_url = check_url(cdp_url, "--cdp-url", ("http", "https", "ws", "wss")) if cdp_url else None
        except TargetError as exc:
            raise P.PlanError(str(exc)) from None
        try:
            workload_names.manifests(workloads_dir)  # a missing folder before pydantic loads
            from harness.workloads import discover

            wls = discover(workloads_dir)
        except WorkloadError as exc:  # a bad folder
            raise P.PlanError(str(exc)) from None
    from harness import locations, npm
    from harness.drive import doctor_platform
    from harness.drive.base import BrowserNotFound
    from harness.drive.doctor import adapter_details, native_adapters
    from harness.drive.registry import BROWSERS

    if bundle is not None:
        console.record = True  # doctor.txt: everything printed from here on
    adapters: dict = {}
    table = Table(title="webgpu-harness doctor")
    for col in ("browser", "found", "driven by", "version", "WebGPU adapter", "how to fix"):
        table.add_column(col, overflow="fold")
    for name, cls in BROWSERS.items():
        driver = cls()
        try:
            located = driver.locate()
        except BrowserNotFound as exc:
            table.add_row(name, "no", "", "", "", str(exc))
            adapters[name] = {"found": False, "why": str(exc)}
            continue
        adapter, version, fix, detail = "", "", "", {}
        try:
            version, detail = adapter_details(driver, located)
            adapter = str(detail.get("description"))
            if adapter.startswith("none"):
                adapter += " → runs on emulated WebGPU (modeled native memory)"
        except Exception as exc:  # a broken install is reported, not raised
            fix = f"launch failed: {str(exc).splitlines()[0]}"
        table.add_row(name, "yes", f"{located.driver}: {located.executable}", version, adapter, fix)
        adapters[name] = {"found": True, "driver": located.driver, "executable": str(located.executable),
                          "version": version, "adapter": detail, **({"launch_failed": fix} if fix else {})}
    native = native_adapters()
    for label, note in native:
        table.add_row("native (wgpu)", "yes" if label else "no", "wgpu-native via wgpu-py", "", label or "", note)
    adapters["native (wgpu)"] = [{"adapter": label, "note": note} for label, note in native]
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
    if bundle is not None:
        text = console.export_text(clear=True, styles=False)
        console.record = False
        write_bundle(bundle, adapters, text)


def bundle_run(folder: Path) -> tuple[list[str], int, str]:
    """``webgpu-harness run --tokens 32 --output FOLDER`` (the default suite, every local browser)
    as a child process, its output shown and kept. Returns (command line, exit status, output)."""
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "harness", "run", "--tokens", str(BUNDLE_TOKENS), "--output", str(folder)]
    say(f"bundle: running {' '.join(cmd[2:])}")
    lines = []
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace") as proc:
        for line in proc.stdout:
            sys.stdout.write(line)
            lines.append(line)
    return cmd, proc.returncode, "".join(lines)


def write_bundle(path: Path, adapters: dict, doctor_text: str) -> None:
    """The archive of ``--bundle`` (harness/store/bundle.py): environment, adapters, doctor's
    output and a 32-token run of the default suite on every local browser."""
    import tempfile

    from harness.store import bundle as BU
    from harness.store.environment import describe

    with tempfile.TemporaryDirectory(prefix="webgpu-harness-bundle-") as tmp:
        run_dir = Path(tmp) / "run"
        cmd, code, output = bundle_run(run_dir)
        console_text = f"$ webgpu-harness {' '.join(cmd[3:])}\n{output}\nexit status {code}\n"
        texts = {"README.txt": BU.readme(version_line()), "environment.json": BU.dumps(BU.environment(describe())),
                 "adapters.json": BU.dumps(adapters), "doctor.txt": doctor_text, "run-console.txt": console_text}
        try:
            names = BU.write(path, texts, run_dir)
        except OSError as exc:
            err.print(f"bundle not written: {path}: {exc.strerror or exc}", highlight=False, markup=False)
            raise typer.Exit(1) from None
    runs = sum(n.startswith("run/") for n in names)
    say(f"bundle: {path} ({path.stat().st_size / 2**20:.1f} MiB: {len(names) - runs} files and the run folder's "
        f"{runs}; the run exited {code}); attach it to an issue as it is")
