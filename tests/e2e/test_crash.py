"""A browser killed mid-run: every sample received stays on disk and the cell is marked failed."""

from __future__ import annotations

import pytest

import json
import os
import signal
import subprocess
import sys
import time

import psutil

from conftest import REPO, CliResult, load_run

pytestmark = pytest.mark.full   # browser runs of its own: make test-full


def _steps_in(path, cell_prefix):
    if not path.exists():
        return 0
    n = 0
    for line in path.read_text().splitlines():
        try:
            s = json.loads(line)
        except ValueError:
            continue
        n += s.get("kind") == "step" and s["cell"].startswith(cell_prefix)
    return n


def test_browser_killed_mid_run_keeps_samples_and_marks_failed(tmp_path):
    run_dir = tmp_path / "r"
    cmd = [sys.executable, "-m", "harness", "run", "--browser", "chromium", "--workload", "decode-loop",
           "--profile", "tiny", "--variant", "fresh,reuse", "--tokens", "200", "--output", str(run_dir)]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    samples = run_dir / "samples.jsonl"
    deadline = time.monotonic() + 180
    while _steps_in(samples, "chromium.decode-loop.fresh") < 5:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no steps arrived"
        time.sleep(0.2)
    browsers = [p for p in psutil.Process(proc.pid).children(recursive=True)
                if "chrom" in p.name().lower() and not any(a.startswith("--type=") for a in p.cmdline())]
    assert len(browsers) == 1, browsers
    kept_before_kill = _steps_in(samples, "chromium.decode-loop.fresh")
    os.kill(browsers[0].pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=400)
    assert proc.returncode == 1, out + err
    run = load_run(CliResult(proc.returncode, out, err, run_dir))
    fresh, reuse = run.cell("fresh"), run.cell("reuse")
    assert fresh["status"] == "failed"
    assert "browser" in fresh["reason"]
    assert fresh["steps_received"] >= kept_before_kill >= 5
    assert len(run.cell_steps("fresh")) == fresh["steps_received"]
    # the next cell got a fresh browser and completed
    assert reuse["status"] == "ok" and reuse["steps_received"] == 200
    statuses = [json.loads(x) for x in samples.read_text().splitlines() if '"cell_status"' in x]
    assert [s["status"] for s in statuses] == ["failed", "ok"]
