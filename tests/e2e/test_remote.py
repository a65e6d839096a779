"""Remote browsers through real endpoints started on loopback: chromedriver and WebKitWebDriver
(W3C WebDriver), a Selenium Grid 4 standalone (when its jar and Java are here), a Playwright
server (`playwright run-server --unsafe`) and a Chromium's DevTools endpoint. Each run's WebGPU
call counts are asserted equal, step by step, to the local drivers' for the same cells, and each
cell records how it was driven and what memory was measurable."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import load_run, run_cli

pytestmark = pytest.mark.full   # browser runs of its own: make test-full

CELL = ["-w", "decode-loop", "-p", "tiny", "-v", "fresh", "-n", "3"]
COUNTS = ["create_bind_group", "dispatch_workgroups", "submit", "write_buffer"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def server(cmd: list[str], ready_url: str, env: dict | None = None, timeout: float = 90):
    """Start ``cmd`` in its own process group, wait until ``ready_url`` answers 200, kill the
    group afterwards (a Playwright server's node child survives its python parent otherwise)."""
    log = open(os.devnull, "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=log, start_new_session=True, env={**os.environ, **(env or {})})
    try:
        deadline = time.monotonic() + timeout
        while True:
            assert proc.poll() is None, f"{cmd[0]} exited with {proc.returncode}"
            try:
                with urllib.request.urlopen(ready_url, timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, f"{cmd[0]} did not answer {ready_url}"
            time.sleep(0.5)
        yield proc
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(10)
        log.close()


@contextmanager
def xvfb():
    from harness.drive.xvfb import Xvfb

    x = Xvfb()
    try:
        yield x.start()
    finally:
        x.stop()


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    """The same cell launched here, in Chromium (Playwright) and WebKitGTK (WebKitWebDriver)."""
    r = run_cli("run", "-b", "chromium,webkit", *CELL, run_dir=tmp_path_factory.mktemp("local") / "run")
    assert r.returncode == 0, r.stdout + r.stderr
    return load_run(r)


def per_step(run, browser: str) -> list[tuple]:
    """(step, counts...) of the run's fresh cell of ``browser``: what must equal across drivers."""
    st = run.steps[(run.steps["browser"] == browser) & (run.steps["variant"] == "fresh")].sort_values("step")
    return [tuple(int(v) for v in row) for row in st[["step", *COUNTS]].itertuples(index=False)]


def remote_run(tmp_path, *args):
    r = run_cli("run", *CELL, *args, run_dir=tmp_path / "run")
    assert r.returncode == 0, r.stdout + r.stderr
    return load_run(r)


def cell(run, browser: str) -> dict:
    return next(c for c in run.manifest["cells"] if c["browser"] == browser)


def psutil_types(run, browser: str) -> set[str]:
    cid = cell(run, browser)["cell"]
    m = run.memory
    return set(m[(m["cell"] == cid) & (m["source"] == "psutil")]["process_type"])


def test_chromedriver_endpoint_reaching_the_harness_by_its_network_address(local, tmp_path):
    """As a browser on another machine would: the harness bound beyond loopback, the browser
    sent to --public-url over --https (generated certificate, acceptInsecureCerts)."""
    from harness.serve.urls import lan_addresses

    port, lan = free_port(), (lan_addresses() or ["127.0.0.1"])[0]
    url, public = f"http://127.0.0.1:{port}", f"https://{lan}:{free_port()}"
    with server(["chromedriver", f"--port={port}", "--allowed-ips=127.0.0.1"], url + "/status"):
        run = remote_run(tmp_path, "-b", "chromium", "--webdriver-url", url, "--browser-path", "/usr/bin/chromium",
                         "--host", "0.0.0.0" if lan != "127.0.0.1" else "127.0.0.1", "--public-url", public, "--https")
    assert run.manifest["parameters"]["public_url"] == public and run.manifest["parameters"]["https"] is True
    samples = [json.loads(x) for x in (run.dir / "samples.jsonl").read_text().splitlines()]
    env = next(x for x in samples if x["kind"] == "env")
    assert env["cross_origin_isolated"] is True and env["webgpu"] == "real"  # a secure context at the LAN address
    assert per_step(run, "chromium") == per_step(local, "chromium") and len(per_step(run, "chromium")) == 3
    c = cell(run, "chromium")
    assert (c["status"], c["driver"], c["endpoint"], c["platform"]) == ("ok", "webdriver-remote", url, "linux")
    assert c["webgpu"] == "real" and c["browser_version"] == cell(local, "chromium")["browser_version"]
    # on this machine: the browser is found by the profile folder its capabilities name
    assert "--user-data-dir=" in c["memory"] and {"browser", "renderer", "gpu-process"} <= psutil_types(run, "chromium")
    sent = run.manifest["browsers"]["chromium"]["capabilities"]["goog:chromeOptions"]
    assert sent["binary"] == "/usr/bin/chromium" and "--enable-unsafe-webgpu" in sent["args"]


def test_webkitwebdriver_endpoint(local, tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with xvfb() as display, server(["WebKitWebDriver", f"--port={port}", "--host=127.0.0.1"], url + "/status",
                                   env={"DISPLAY": display}):
        run = remote_run(tmp_path, "-b", "webkit", "--webdriver-url", url)
    assert per_step(run, "webkit") == per_step(local, "webkit") and len(per_step(run, "webkit")) == 3
    c = cell(run, "webkit")
    assert (c["status"], c["driver"], c["webgpu"]) == ("ok", "webdriver-remote", "emulated")
    assert c["browser_version"] == cell(local, "webkit")["browser_version"]
    assert "WebKitWebProcess" in psutil_types(run, "webkit") and f"port {port}" in c["memory"]


def grid_jar() -> str | None:
    jar = os.environ.get("SELENIUM_SERVER_JAR")
    if jar:
        return jar
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "webgpu-harness" / "selenium"
    found = sorted(cache.glob("selenium-server-*.jar"))
    return str(found[-1]) if found else None


def test_selenium_grid_standalone(local, tmp_path):
    jar = grid_jar()
    # scripts/setup-tests.sh (make test, make test-full) installs both: a missing one is a failure
    assert shutil.which("java") is not None and jar is not None, \
        "Selenium Grid not here: needs java (17+) and the jar (scripts/setup-tests.sh, or $SELENIUM_SERVER_JAR)"
    wk_port, grid_port = free_port(), free_port()
    (tmp_path / "grid.toml").write_text(f"""
[server]
host = "127.0.0.1"
port = {grid_port}
[node]
detect-drivers = false
selenium-manager = false
max-sessions = 2
[[node.driver-configuration]]
display-name = "Debian Chromium"
webdriver-executable = "/usr/bin/chromedriver"
max-sessions = 1
stereotype = '{{"browserName": "chrome", "platformName": "linux", "goog:chromeOptions": {{"binary": "/usr/bin/chromium"}}}}'
[relay]
url = "http://127.0.0.1:{wk_port}"
status-endpoint = "/status"
configs = ["1", '{{"browserName": "MiniBrowser", "platformName": "linux"}}']
""")
    chrome = tmp_path / "chrome.json"
    chrome.write_text(json.dumps({"browserName": "chrome", "platformName": "linux", "goog:chromeOptions": {
        "binary": "/usr/bin/chromium", "args": ["--headless=new", "--no-sandbox", "--enable-unsafe-webgpu"]}}))
    mini = tmp_path / "minibrowser.json"
    mini.write_text(json.dumps({"browserName": "MiniBrowser", "platformName": "linux",
                                "webkitgtk:browserOptions": {"args": ["--automation"]}}))
    url = f"http://127.0.0.1:{grid_port}"
    with xvfb() as display, \
            server(["WebKitWebDriver", f"--port={wk_port}", "--host=127.0.0.1"], f"http://127.0.0.1:{wk_port}/status",
                   env={"DISPLAY": display}), \
            server(["java", "-jar", jar, "standalone", "--config", str(tmp_path / "grid.toml")], url + "/readyz",
                   timeout=180):
        run = remote_run(tmp_path, "--webdriver-url", url, "--capabilities", str(chrome), "--capabilities", str(mini))
    # browserName chrome → cells labelled chrome; MiniBrowser → webkit
    assert per_step(run, "chrome") == per_step(local, "chromium")
    assert per_step(run, "webkit") == per_step(local, "webkit")
    ch, wk = cell(run, "chrome"), cell(run, "webkit")
    assert ch["status"] == wk["status"] == "ok" and ch["endpoint"] == wk["endpoint"] == url
    assert "renderer" in psutil_types(run, "chrome")
    # the relayed WebKitWebDriver is not under the Grid's process: memory not measurable, never 0
    assert wk["memory"].startswith("not measurable remotely") and psutil_types(run, "webkit") == set()
    row = run.summary[run.summary["browser"] == "webkit"].iloc[0]
    assert row["memory"] == wk["memory"] and pd_missing(row.get("content_rss_bytes_max"))
    assert "not measurable remotely" in (run.dir / "report.html").read_text()


def pd_missing(v) -> bool:
    return v is None or v != v


def test_playwright_server(local, tmp_path):
    port = free_port()
    with server([sys.executable, "-m", "playwright", "run-server", "--port", str(port), "--host", "127.0.0.1",
                 "--unsafe"], f"http://127.0.0.1:{port}/json"):
        run = remote_run(tmp_path, "-b", "chromium", "--connect", f"ws://127.0.0.1:{port}/",
                         "--browser-path", "/usr/bin/chromium")
    assert per_step(run, "chromium") == per_step(local, "chromium")
    c = cell(run, "chromium")
    assert (c["status"], c["driver"]) == ("ok", "playwright-remote")
    assert "SystemInfo.getProcessInfo" in c["memory"] and "renderer" in psutil_types(run, "chromium")
    assert (run.memory["source"] == "cdp").any()  # the worker's JS heap, from the browser


def test_cdp_endpoint_and_the_browser_outlives_the_run(local, tmp_path):
    port = free_port()
    cmd = ["/usr/bin/chromium", "--headless=new", "--no-sandbox", "--enable-unsafe-webgpu",
           f"--remote-debugging-port={port}", f"--user-data-dir={tmp_path / 'profile'}", "about:blank"]
    url = f"http://127.0.0.1:{port}"
    with server(cmd, url + "/json/version") as proc:
        run = remote_run(tmp_path, "--cdp-url", url)
        assert proc.poll() is None  # the harness closed its context, not the browser
    assert per_step(run, "chromium") == per_step(local, "chromium")
    c = cell(run, "chromium")
    assert (c["status"], c["driver"], c["endpoint"]) == ("ok", "cdp-remote", url)
    assert "gpu-process" in psutil_types(run, "chromium")
