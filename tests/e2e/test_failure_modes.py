"""Failure modes of emulated WebGPU that real apps hit (issue 21 item 4; web/emulation/README.md,
"Failure modes"), in Chromium's worker on the emulation: createBuffer refused with an
out-of-memory error past the page's budget while the workload keeps going
(decode-loop ``on_gpu_error=continue``) — errors counted per step, ``uncaptured_error`` samples
recorded, and the consequence visible: tokens emitted from work that never ran, dispatches
dropped — and a storage binding past maxStorageBufferBindingSize rejected as a validation error.

tiny profile, reuse variant, a generate call every 2 tokens that leaks its buffers: the modeled
bytes grow by ~975 kB a call (286,760 bytes of buffers and 42 bind groups of 16 KiB), so a
4,000,000-byte budget is passed during the third call (step 4)."""

from __future__ import annotations

import json

import pytest

from conftest import load_run, run_cli

pytestmark = pytest.mark.full

N = 8
DISPATCHES = 42
OOM = ["--webgpu", "emulated", "--variant", "reuse", "--tokens", str(N), "--param", "tokens_per_call=2",
       "--param", "call_ending=leak", "--emulation-option", "memoryBudgetBytes=4000000",
       "--emulation-option", "atMemoryBudget=out-of-memory"]


def _run(tmp_path_factory, name, *args):
    d = tmp_path_factory.mktemp(name) / "run"
    return run_cli("run", "--browser", "chromium", "--workload", "decode-loop", "--profile", "tiny", *args, run_dir=d)


@pytest.fixture(scope="module")
def oom_run(tmp_path_factory):
    cli = _run(tmp_path_factory, "oom", *OOM, "--param", "on_gpu_error=continue")
    assert cli.returncode == 0, cli.stdout + cli.stderr
    return load_run(cli)


def test_out_of_memory_errors_counted_per_step_and_recorded(oom_run):
    st = oom_run.cell_steps("reuse")
    assert oom_run.cell("reuse")["status"] == "ok" and list(st["step"]) == list(range(N))  # it kept going
    before, after = st[st["step"] < 4], st[st["step"] >= 4]
    assert (before["uncaptured_errors"] == 0).all() and (before["extra_output_untrusted"] == 0).all()
    assert st["uncaptured_out_of_memory_errors"].iloc[4] > 0  # the third call's first step
    # the probe's per-step count, the workload's own and the emulation's ledger agree
    assert list(st["uncaptured_errors"]) == list(st["extra_gpu_errors"])
    assert st["uncaptured_out_of_memory_errors"].sum() == st["out_of_memory_errors"].iloc[-1]
    assert (st["uncaptured_errors"] == st["uncaptured_out_of_memory_errors"] + st["uncaptured_validation_errors"]).all()
    samples = [json.loads(x) for x in (oom_run.dir / "samples.jsonl").read_text().splitlines()]
    errs = [s for s in samples if s["kind"] == "uncaptured_error"]
    assert any(s["error_type"] == "GPUOutOfMemoryError" and "out of memory" in s["message"] and s["step"] == 4 for s in errs)
    env = next(s for s in samples if s["kind"] == "env")
    assert any(m.startswith("out-of-memory-at-budget (a model)") for m in env["emulation_models"])


def test_the_consequence_is_visible_tokens_from_work_that_never_ran(oom_run):
    st = oom_run.cell_steps("reuse")
    after = st[st["step"] >= 4]
    assert (after["extra_output_untrusted"] == 1).all()  # every token from then on came from failed work
    dropped = list(st["dispatches_dropped"])
    assert dropped[:4] == [0] * 4 and all(b > a for a, b in zip(dropped[3:], dropped[4:]))
    assert st["command_buffers_rejected"].iloc[-1] > 0
    html = (oom_run.dir / "report.html").read_text()
    section = html[html.index('id="failures"'):]
    assert "tokens emitted from failed work" in section and "out-of-memory-at-budget (a model)" in section


def test_without_continue_the_first_error_fails_the_cell(tmp_path_factory):
    cli = _run(tmp_path_factory, "oom-fail", *OOM)
    run = load_run(cli)
    row = run.cell("reuse")
    assert cli.returncode == 1 and row["status"] == "failed"
    # the errors of token 4 are delivered a task after its calls: the check at the end of token 4
    # or 5 sees them, and the run stops there
    assert "WebGPU error: createBuffer: out of memory" in row["reason"], row["reason"]
    assert row["reason"].startswith(("workload error: decode-loop token 4:", "workload error: decode-loop token 5:"))
    assert row["steps_received"] <= 6


def test_a_binding_past_max_storage_buffer_binding_size_is_a_validation_error(tmp_path_factory):
    # a device with the spec's default 128 MiB binding limit (the emulation's default preset,
    # webkit-apple7, allows more); every activation at least 128 MiB + 4 bytes, bucketed to
    # 160 MiB (no bytes are kept: contents=none)
    cli = _run(tmp_path_factory, "binding", "--webgpu", "emulated", "--variant", "fresh", "--tokens", "2",
               "--param", "storage_buffer_min_bytes=134217732", "--param", "on_gpu_error=continue",
               "--emulation-option", "contents=none", "--emulation-option", "limits.maxStorageBufferBindingSize=134217728")
    assert cli.returncode == 0, cli.stdout + cli.stderr
    run = load_run(cli)
    st = run.cell_steps("fresh")
    assert (st["uncaptured_validation_errors"] > 0).all() and (st["uncaptured_out_of_memory_errors"] == 0).all()
    assert (st["extra_output_untrusted"] == 1).all() and st["dispatches_dropped"].iloc[-1] > 0
    samples = [json.loads(x) for x in (run.dir / "samples.jsonl").read_text().splitlines()]
    assert any(s["kind"] == "uncaptured_error" and "> maxStorageBufferBindingSize" in s["message"] for s in samples)
