"""`make run` (README, "From a clone"): its phases print in order — the set-up's lines (.venv,
system packages, npm packages, `setup: done`), then the run's — and the run's `done: …` line is
the last one (issue 20, item 8). Run folders go to a temporary $WEBGPU_HARNESS_RUNS."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from conftest import REPO

pytestmark = pytest.mark.full


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_run_prints_its_phases_in_order_and_done_last(tmp_path):
    env = {**os.environ, "WEBGPU_HARNESS_RUNS": str(tmp_path), "COLUMNS": "200"}
    r = subprocess.run(["make", "--no-print-directory", "run"], cwd=REPO, capture_output=True, text=True, env=env,
                       timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    lines = [x for x in r.stdout.splitlines() if x.strip()]
    phases = ["setup: .venv: ", "setup: Debian packages: ", "setup: npm packages: ", "setup: done",
              "run: webgpu-harness run", "report: ", "done: "]
    at = []
    for p in phases:
        found = [i for i, x in enumerate(lines) if x.startswith(p)]
        assert len(found) == 1, (p, r.stdout)
        at.append(found[0])
    assert at == sorted(at), list(zip(phases, at))
    run_dir = next(p for p in tmp_path.iterdir() if p.is_dir())
    assert lines[-1] == lines[at[-1]] and lines[-1].endswith(f"; report: {run_dir / 'report.html'}"), lines[-3:]
    assert lines[-1].startswith("done: 4 of 4 cells ok in ")   # decode-loop fresh, reuse × Chromium, WebKitGTK
    assert "make[" not in r.stdout and "./scripts/setup.sh" not in r.stdout   # make does not echo its commands
