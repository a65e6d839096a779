"""`serve` takes `run`'s cell options (issue 21, item 5): a `--param` sweep with `--repeat`, the
WebGPU mode and a memory budget; a real Chromium that the harness did not launch opens the printed
index URL, follows each configuration's links, and what it measured lands in the run folder and
is summarised as after `run`. `--param max_pending_dispatches=1` changes the submits per token the
browser measured."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import REPO, load_run

pytestmark = pytest.mark.full

CHROMIUM = "/usr/bin/chromium"


def _read_urls(proc, cells: int, timeout: float = 90) -> tuple[str, list[str], str]:
    """(index URL, runner URLs, what serve printed) once it printed ``cells`` runner URLs."""
    lines: list[str] = []
    index, runners = None, []
    deadline = time.monotonic() + timeout
    while len(runners) < cells:
        line = proc.stdout.readline()
        assert line and time.monotonic() < deadline, "".join(lines) + proc.stderr.read()
        lines.append(line)
        m = re.search(r"index of every configuration: (http://127\.0\.0\.1:\d+/\?token=\S+)", line)
        index = index or (m and m.group(1))
        runners += re.findall(r"(http://127\.0\.0\.1:\d+/web/runner\.html\?cell=\S+)", line)
    return index, runners, "".join(lines)


def test_serve_with_runs_cell_options_measured_by_a_browser_that_opens_its_url(tmp_path):
    from playwright.sync_api import sync_playwright

    d = tmp_path / "s"
    proc = subprocess.Popen([sys.executable, "-m", "harness", "serve", "-w", "decode-loop", "-p", "tiny", "-v", "fresh",
                             "-n", "4", "--param", "max_pending_dispatches=1,16", "--repeat", "2", "--webgpu", "real",
                             "--memory-budget", "2048MB", "--no-qr", "-o", str(d)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        index, runners, printed = _read_urls(proc, 4)
        assert index is not None, printed
        assert "decode-loop/fresh [tiny] max_pending_dispatches=1 r1: http" in printed
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--enable-unsafe-webgpu"])
            try:
                page = browser.new_page()
                page.goto(index)
                rows = page.eval_on_selector_all(
                    "tr", "rows => rows.slice(1).map(r => [...r.cells].map(c => c.textContent))")
                links = page.eval_on_selector_all("td a", "as => as.map(a => a.href)")
                page.close()
                for link in links:  # each repetition in a fresh context, as `run` does
                    context = browser.new_context()
                    p = context.new_page()
                    p.goto(link)
                    p.wait_for_function("document.getElementById('status').textContent === 'done'", timeout=180_000)
                    context.close()
            finally:
                browser.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, out[-3000:] + err[-3000:]

    # the index lists each configuration once, with its repetitions, mode and --param value
    assert rows == [["decode-loop/fresh [tiny] max_pending_dispatches=1", "r0 r1", "4", "real",
                     "max_pending_dispatches=1"],
                    ["decode-loop/fresh [tiny] max_pending_dispatches=16", "r0 r1", "4", "real",
                     "max_pending_dispatches=16"]]
    assert sorted(links) == sorted(runners)

    run = load_run(type("R", (), {"run_dir": d, "stdout": out, "stderr": err})())
    s = run.summary
    assert len(s) == 4 and (s["status"] == "ok").all(), s[["cell", "status", "reason"]]
    assert (s["steps_received"] == 4).all() and (s["memory_budget_bytes"] == 2_048_000_000).all()
    manifest = run.manifest["parameters"]
    assert manifest["repeat"] == 2 and manifest["webgpu"] == "real"
    assert manifest["sweeps"] == {"decode-loop": {"max_pending_dispatches": [1, 16]}}
    sub = {k: g["submits_per_token"].tolist() for k, g in s.groupby(s["cell"].str.contains("max_pending_dispatches-1.", regex=False))}
    one, sixteen = sub[True], sub[False]
    dispatches = s["dispatches_per_token"].iloc[0]
    assert dispatches == 42                                   # tiny: 42 dispatches per token
    # a submit after every dispatch, and one for the logits' readback copy
    assert (one, sixteen) == ([dispatches + 1] * 2, [3, 3]), (one, sixteen)   # 16 per submit: ceil(42 / 16)
    # summarised as after `run`: the per-workload table names both configurations
    assert "max_pending_dispatches=1" in out and "max_pending_dispatches=16" in out and "report: " in out
    for f in ("report.html", "summary.csv", "stats.json", "junit.xml"):
        assert (d / f).exists(), f
    assert json.loads((d / "stats.json").read_text())["groups"]
