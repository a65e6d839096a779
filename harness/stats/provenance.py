"""Where a number came from, in words: the browser and version, adapter, real or emulated WebGPU,
the machine of a merged run and how a browser that was not launched here was reached. A fact of
the data (every statement carries it), used as a key by the statistics and shown by the report
(harness/report/format.py re-exports it)."""

from __future__ import annotations

from typing import Any


def _known(v: Any) -> bool:
    if v is None or str(v) == "":
        return False
    try:
        return not bool(v != v)  # NaN
    except (TypeError, ValueError):
        return True


def provenance(row: Any) -> str:
    """Where a number came from: ``chromium 156 · google swiftshader · real WebGPU`` (a summary
    row or manifest cell: browser, browser_version, adapter, webgpu, machine when merged)."""
    version = str(row.get("browser_version")) if _known(row.get("browser_version")) else ""
    if row.get("browser") == "chromium":
        version = version.split(".")[0]
    webgpu = row.get("webgpu") if _known(row.get("webgpu")) else "?"
    label = "emulated WebGPU (modeled native memory)" if webgpu == "emulated" else f"{webgpu} WebGPU"
    adapter = row.get("adapter") if _known(row.get("adapter")) else "no adapter"
    machine = f"{row.get('machine')}: " if _known(row.get("machine")) else ""  # merged runs
    # a browser not launched here: where it ran and how it was reached (manifest cell driver/platform)
    driver = str(row.get("driver")) if _known(row.get("driver")) else ""
    remote = driver.endswith("-remote") or driver == "manual"
    where = (" · " + " ".join(x for x in (str(row.get("platform")) if _known(row.get("platform")) else "",
                                           DRIVEN_BY.get(driver, driver)) if x)) if remote else ""
    name = str(row.get("browser"))
    if name in NOT_A_BROWSER:  # native engines: said wherever a number of theirs is shown
        name = f"{name} ({NOT_A_BROWSER[name]})"
    return f"{machine}{name} {version} · {adapter} · {label}{where}"


#: Engines measured outside any browser (manifest cell ``browser``), in words: harness/drive/dawn.py
#: (``LABEL``) and harness/native/run.py (wgpu-native through wgpu-py).
NOT_A_BROWSER = {"dawn": "native Dawn (Node), not a browser", "native-wgpu": "native wgpu-native (Python), not a browser"}


#: How a cell's browser was driven (manifest cell ``driver``), in words.
DRIVEN_BY = {"webdriver-remote": "via remote WebDriver", "playwright-remote": "via a Playwright server",
             "cdp-remote": "via DevTools (CDP)", "manual": "opened by hand (serve)",
             "playwright": "launched by Playwright", "playwright-chrome": "launched by Playwright (chrome channel)",
             "selenium-webkitgtk": "launched by WebKitWebDriver", "selenium-safari": "launched by safaridriver",
             "playwright-webkit": "launched by Playwright (WebKit)",
             "node-dawn": "native Dawn (Node), not a browser: one Node process per cell (web/dawn/host.js)"}


