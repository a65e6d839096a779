"""Skipped cells and failures through the real CLI (bad input: tests/cli/test_cli_bad_input.py,
in process)."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import load_run, run_cli


@pytest.mark.full
def test_no_webgpu_adapter_is_recorded_as_skipped(tmp_path):
    # Without --enable-unsafe-webgpu, Linux Chromium exposes navigator.gpu but gives no adapter.
    r = run_cli("run", "--browser", "chromium", "--workload", "decode-loop", "--profile", "tiny",
                "--tokens", "4", "--without-flag=--enable-unsafe-webgpu", run_dir=tmp_path / "r")
    # nothing was measured: CI must not go green on that (--allow-skipped when it is expected)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "every cell (2) was skipped: nothing was measured" in r.stderr
    run = load_run(r)
    assert (run.summary["status"] == "skipped").all()
    assert run.summary["reason"].str.contains("adapter").all()
    assert len(run.steps) == 0
    assert (tmp_path / "r" / "report.html").exists()


@pytest.mark.full
def test_workload_exception_is_recorded_with_stack_and_other_cells_continue(tmp_path):
    # decode-loop's test-only fault throws inside the worker at step 2; gc-retention (which does
    # not declare that parameter) runs on after it in the same browser
    r = run_cli("run", "--browser", "chromium", "--workload", "decode-loop,gc-retention", "--profile", "tiny",
                "--variant", "fresh,minimal", "--tokens", "3", "--param", "test_throw_at_step=2",
                "--param", "dispatches_per_token=16", run_dir=tmp_path / "r")
    assert r.returncode == 1, r.stdout + r.stderr
    run = load_run(r)
    dl, gc = run.summary[run.summary["workload"] == "decode-loop"], run.summary[run.summary["workload"] == "gc-retention"]
    assert dl["status"].tolist() == ["failed"] and dl["reason"].str.contains("injected failure").all()
    assert dl["steps_received"].tolist() == [2]                       # steps 0 and 1 kept
    assert gc["status"].tolist() == ["ok"] and gc["steps_received"].tolist() == [3]
    samples = (tmp_path / "r" / "samples.jsonl").read_text()
    assert '"kind":"error"' in samples and ".js:" in samples          # the stack came back
    assert "failed" in r.stderr


@pytest.mark.full
def test_duplicate_names_run_once(tmp_path):
    r = run_cli("run", "--browser", "chromium,chromium", "--workload", "decode-loop", "--profile", "tiny",
                "--variant", "fresh,fresh", "--tokens", "2", run_dir=tmp_path / "r")
    assert r.returncode == 0, r.stderr
    run = load_run(r)
    assert run.summary["cell"].tolist() == ["chromium.decode-loop.fresh.tiny.r0"]
    assert len(run.steps) == 2


@pytest.mark.full
def test_no_probes_records_counts_as_missing_not_zero(tmp_path):
    r = run_cli("run", "--browser", "chromium", "--workload", "decode-loop", "--profile", "tiny", "--variant", "fresh",
                "--tokens", "4", "--no-probes", "--budget", "decode-loop/fresh: bind_groups_per_token <= 1",
                run_dir=tmp_path / "r")
    run = load_run(r)
    assert run.summary["status"].tolist() == ["ok"]
    assert run.steps["create_bind_group"].isna().all() and run.steps["wall_ms"].notna().all()
    assert pd.isna(run.summary["bind_groups_per_token"].iloc[0])
    assert r.returncode == 1  # the budget has no data to pass on


@pytest.mark.full
def test_interrupted_run_keeps_samples_and_writes_a_report(tmp_path):
    import json
    import signal
    import subprocess
    import sys
    import time

    from conftest import REPO

    d = tmp_path / "r"
    proc = subprocess.Popen([sys.executable, "-m", "harness", "run", "--browser", "chromium", "--workload", "decode-loop",
                             "--profile", "tiny", "--variant", "fresh,reuse", "--tokens", "250", "--output", str(d)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (d / "samples.jsonl").exists() or (d / "samples.jsonl").read_text().count('"kind":"step"') < 5:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, out + err
    run = load_run(type("R", (), {"run_dir": d, "stdout": out, "stderr": err})())
    assert (run.summary["status"] == "failed").all()
    assert run.summary["reason"].str.contains("interrupted").all()
    assert run.summary["steps_received"].iloc[0] >= 5 and len(run.steps) >= 5
    assert (d / "report.html").exists()
    statuses = [json.loads(x)["status"] for x in (d / "samples.jsonl").read_text().splitlines() if '"cell_status"' in x]
    assert statuses == ["failed", "failed"]


@pytest.mark.full
def test_ctrl_c_to_the_process_group_prints_the_one_interrupted_line_and_no_asyncio_noise(tmp_path):
    # Ctrl-C reaches the whole foreground process group, Playwright's node driver included: its
    # closed connection must not surface as "Future exception was never retrieved"
    import os
    import signal
    import subprocess
    import sys
    import time

    from conftest import REPO

    d = tmp_path / "r"
    proc = subprocess.Popen([sys.executable, "-m", "harness", "run", "--browser", "chromium", "--workload", "decode-loop",
                             "--profile", "tiny", "--variant", "fresh", "--tokens", "250", "--output", str(d)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while not (d / "samples.jsonl").exists() or (d / "samples.jsonl").read_text().count('"kind":"step"') < 5:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.1)
    # as `timeout -s INT` does: the harness, then its whole process group (one interrupt, twice)
    os.kill(proc.pid, signal.SIGINT)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, out + err
    both = " ".join((out + err).split())  # rich wraps lines at 80 columns off a terminal
    assert f"interrupted: partial results and report in {d}" in both
    for noise in ("Future exception was never retrieved", "Connection closed while reading from the driver",
                  "Traceback", "interrupted again"):
        assert noise not in both, both
