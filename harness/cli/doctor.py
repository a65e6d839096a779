"""``webgpu-harness doctor``: browsers, drivers and WebGPU adapters found, and how to install
what is missing (launches each browser once; harness/drive/doctor.py)."""

from __future__ import annotations

from rich.table import Table

from harness.cli.common import console
from harness.drive.base import BrowserNotFound
from harness.drive.registry import BROWSERS
from harness.workloads import discover


def doctor():
    """List browsers, drivers and WebGPU adapters found, and how to install what is missing."""
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
    console.print(f"workloads: {', '.join(sorted(discover()))}")
