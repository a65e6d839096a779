"""`webgpu-harness serve`: a browser the harness did not launch runs a cell; samples, tables and
the report are written when serve is stopped."""

from __future__ import annotations

import pytest

import re
import signal
import subprocess
import sys
import time

from conftest import REPO, load_run

pytestmark = pytest.mark.full   # browser runs of its own: make test-full


def test_serve_records_a_cell_run_in_a_browser_we_open(tmp_path):
    from harness.drive.chromium import ChromiumDriver

    d = tmp_path / "s"
    proc = subprocess.Popen([sys.executable, "-m", "harness", "serve", "--workload", "decode-loop", "--profile", "tiny",
                             "--variant", "fresh,reuse", "--tokens", "5", "--output", str(d)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    urls = []
    deadline = time.monotonic() + 60
    while len(urls) < 2:
        line = proc.stdout.readline()
        assert line and time.monotonic() < deadline, proc.stderr.read()
        urls += re.findall(r"(http://127\.0\.0\.1:\d+/web/runner\.html\?cell=\S+)", line)
    fresh_url = next(u for u in urls if ".fresh." in u)
    driver = ChromiumDriver()
    session = driver.launch(driver.locate())
    try:
        session.open(fresh_url)
        deadline = time.monotonic() + 90
        while '"kind":"done"' not in (d / "samples.jsonl").read_text():
            assert time.monotonic() < deadline
            session.pump(0.2)
        status = session.evaluate("document.getElementById('status').textContent")
    finally:
        session.close()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, out + err
    assert status == "done"   # the page says when its cell is over
    run = load_run(type("R", (), {"run_dir": d, "stdout": out, "stderr": err})())
    fresh, reuse = run.cell("fresh"), run.cell("reuse")
    assert fresh["status"] == "ok" and fresh["steps_received"] == 5
    assert (run.cell_steps("fresh")["create_bind_group"] == run.cell_steps("fresh")["dispatch_workgroups"]).all()
    assert str(fresh["browser_version"]).startswith("156") or re.match(r"^\d+\.", str(fresh["browser_version"]))
    assert reuse["status"] == "skipped" and "never opened" in reuse["reason"]
    for f in ("report.html", "summary.csv", "stats.json", "junit.xml"):
        assert (d / f).exists(), f
