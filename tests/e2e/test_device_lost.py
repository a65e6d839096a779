"""decode-loop's test-only faults in real Chromium, and device loss: a device destroyed mid-run
ends the cell ``device-lost`` with every earlier sample kept; a hang or a busy worker times out;
a throw fails. Every run: tiny profile, 4 tokens, the fault at step 2."""

from __future__ import annotations

import json

import pytest

from conftest import load_run, run_cli

pytestmark = pytest.mark.full   # browser runs of its own: make test-full

FAULT_STEP = 2


def _samples(run_dir, kind):
    out = []
    for line in (run_dir / "samples.jsonl").read_text().splitlines():
        s = json.loads(line)
        if s["kind"] == kind:
            out.append(s)
    return out


def _fault_run(tmp_path, param, *extra):
    cli = run_cli("run", "--browser", "chromium", "--workload", "decode-loop", "--profile", "tiny", "--variant", "fresh",
                  "--tokens", "4", "--param", f"{param}={FAULT_STEP}", *extra, run_dir=tmp_path / "run")
    return cli, load_run(cli)


def test_destroy_device_mid_run_ends_the_cell_device_lost(tmp_path):
    cli, run = _fault_run(tmp_path, "test_destroy_device_at_step")
    assert cli.returncode == 1, cli.stdout + cli.stderr               # not ok, like a failed cell
    cell = run.cell("fresh")
    assert cell["status"] == "device-lost", cell["reason"]
    assert cell["reason"].startswith(f"device lost at step {FAULT_STEP} (destroyed: device.destroy() was called at step {FAULT_STEP}")
    assert "2 steps were received and kept" in cell["reason"]
    # every step before the loss is kept, with its counters
    st = run.cell_steps("fresh")
    assert list(st["step"]) == list(range(FAULT_STEP))
    assert (st["dispatch_workgroups"] == 42).all()
    lost = _samples(run.dir, "device_lost")
    assert len(lost) == 1
    assert (lost[0]["reason"], lost[0]["step"], lost[0]["destroy_step"]) == ("destroyed", FAULT_STEP, FAULT_STEP)
    # the loss is recorded before the workload's own error, and the cell's status after both
    kinds = [json.loads(x)["kind"] for x in (run.dir / "samples.jsonl").read_text().splitlines()]
    kinds = [k for k in kinds if k in ("device_lost", "error", "cell_status")]
    assert kinds == ["device_lost", "error", "cell_status"]
    assert run.manifest["cells"][0]["status"] == "device-lost"
    # the report's events table lists the loss
    assert '<td class="l">device_lost</td>' in (run.dir / "report.html").read_text()


def test_a_workload_that_destroys_its_device_at_the_end_is_ok(tmp_path):
    """decode-loop destroys its device after the last token: not a loss."""
    cli = run_cli("run", "--browser", "chromium", "--workload", "decode-loop", "--profile", "tiny", "--variant", "reuse",
                  "--tokens", "2", run_dir=tmp_path / "run")
    assert cli.returncode == 0, cli.stdout + cli.stderr
    run = load_run(cli)
    assert run.cell("reuse")["status"] == "ok"
    assert _samples(run.dir, "device_lost") == []


@pytest.mark.parametrize("fault", ["test_hang_at_step", "test_busy_at_step"])
def test_hang_or_busy_worker_times_out_with_earlier_steps_kept(tmp_path, fault):
    cli, run = _fault_run(tmp_path, fault, "--step-timeout-s", "5")
    assert cli.returncode == 1
    cell = run.cell("fresh")
    assert cell["status"] == "failed"
    assert cell["reason"].startswith("timed out: no progress (a new step or a heartbeat) for 5 s after step"), cell["reason"]
    assert "processes alive: " in cell["reason"] and "renderer" in cell["reason"]
    st = run.cell_steps("fresh")
    # a hung worker still posts what it made; a busy one may lose the step whose post was queued
    expected = [0, 1] if fault == "test_hang_at_step" else None
    if expected:
        assert list(st["step"]) == expected
    else:
        assert list(st["step"]) in ([0], [0, 1])
    assert _samples(run.dir, "device_lost") == []


def test_throw_fails_the_cell_with_the_injected_error(tmp_path):
    cli, run = _fault_run(tmp_path, "test_throw_at_step")
    assert cli.returncode == 1
    cell = run.cell("fresh")
    assert (cell["status"], cell["reason"]) == ("failed", f"workload error: test_throw_at_step={FAULT_STEP}: injected failure")
    assert list(run.cell_steps("fresh")["step"]) == [0, 1]
    # decode-loop's cleanup destroys the device after the error: that is not a device loss
    assert _samples(run.dir, "device_lost") == []
