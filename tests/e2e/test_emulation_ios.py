"""Emulated WebGPU in WebKitGTK (web/emulation/): iOS limit profiles, and the page memory budget
with WebKit's lose-device (since late 2024) or the older kill-page, through decode-loop tiny.

A chunk loop's encoder output (`encoder_mib_per_call`, one buffer of `encoder_buffer_mib`) is the
large buffer; `call_ending=leak` makes the modeled bytes grow a known step per generate call.
"""

from __future__ import annotations

import pytest

import json

from conftest import load_run, run_cli

pytestmark = pytest.mark.full   # browser runs of its own: make test-full

MiB = 1 << 20


def _webkit(tmp_path, *args):
    cli = run_cli("run", "--browser", "webkit", "--workload", "decode-loop", "--profile", "tiny", "--variant", "reuse",
                  *args, run_dir=tmp_path / "run")
    return cli, load_run(cli)


def _samples(run, kind):
    return [s for s in map(json.loads, (run.dir / "samples.jsonl").read_text().splitlines()) if s["kind"] == kind]


def test_300_mib_buffer_fails_under_256_mib_limits(tmp_path):
    cli, run = _webkit(tmp_path, "--tokens", "2", "--emulation-option", "limits=ios-2024",
                       "--param", "encoder_mib_per_call=300", "--param", "encoder_buffer_mib=300")
    assert cli.returncode == 1
    cell = run.cell("reuse")
    assert cell["status"] == "failed" and cell["webgpu"] == "emulated"
    assert "createBuffer: size 314572800 exceeds maxBufferSize 268435456" in cell["reason"]
    errors = _samples(run, "uncaptured_error")
    assert errors[0]["message"] == "createBuffer: size 314572800 exceeds maxBufferSize 268435456"
    assert (errors[0]["error_type"], errors[0]["step"]) == ("GPUValidationError", 0)
    st = run.cell_steps("reuse")
    assert st["create_buffer_bytes"].iloc[0] >= 300 * MiB        # asked for, and refused
    assert st["modeled_buffer_bytes"].iloc[0] < 300 * MiB         # never charged


def test_300_mib_buffer_succeeds_under_ios_2025_limits(tmp_path):
    cli, run = _webkit(tmp_path, "--tokens", "2", "--emulation-option", "limits=ios-2025",
                       "--param", "encoder_mib_per_call=300", "--param", "encoder_buffer_mib=300",
                       "--memory-budget", "300MB")
    assert cli.returncode == 0, cli.stdout + cli.stderr
    cell = run.cell("reuse")
    assert cell["status"] == "ok"
    assert _samples(run, "uncaptured_error") == []
    st = run.cell_steps("reuse")
    assert st["extra_encoder_bytes"].iloc[0] == 300 * MiB
    assert st["modeled_buffer_bytes"].iloc[0] >= 300 * MiB
    # the harness's --memory-budget counts the modeled buffer bytes too: 300 MiB > 300 MB at token 0
    assert cell["would_be_killed_at_token"] == 0


BUDGET = 6_000_000


def _budget_run(tmp_path, at_budget):
    return _webkit(tmp_path, "--tokens", "8", "--param", "tokens_per_call=2", "--param", "call_ending=leak",
                   "--param", "encoder_mib_per_call=1", "--emulation-option", f"memoryBudgetBytes={BUDGET}",
                   "--emulation-option", f"atMemoryBudget={at_budget}")


def test_lose_device_at_the_memory_budget_ends_the_cell_device_lost(tmp_path):
    cli, run = _budget_run(tmp_path, "lose-device")
    assert cli.returncode == 1
    cell = run.cell("reuse")
    assert cell["status"] == "device-lost", cell["reason"]
    lost = _samples(run, "device_lost")
    assert len(lost) == 1 and lost[0]["reason"] == "unknown"
    assert "lose-device at the memory budget" in lost[0]["message"] and f"> {BUDGET} bytes" in lost[0]["message"]
    # every step before the loss is kept, each under the budget; the loss fell in the next step
    st = run.cell_steps("reuse")
    assert list(st["step"]) == list(range(lost[0]["step"]))
    modeled = st["modeled_native_bytes"] + st["modeled_buffer_bytes"]
    assert (modeled <= BUDGET).all() and modeled.is_monotonic_increasing
    # with every call leaked, the loss comes at the first step of the call that crosses the budget
    per_call = modeled.iloc[2] - modeled.iloc[0]
    assert st["extra_pos"].iloc[-1] == 1 and modeled.iloc[-1] + per_call > BUDGET


def test_kill_page_at_the_memory_budget_fails_the_cell_and_posts_nothing_after(tmp_path):
    cli, run = _budget_run(tmp_path, "kill-page")
    assert cli.returncode == 1
    cell = run.cell("reuse")
    assert cell["status"] == "failed"
    assert cell["reason"].startswith("workload error: emulated kill-page: webgpu-emulated kill-page at the memory budget")
    assert _samples(run, "device_lost") == []                     # nobody is left to see device.lost
    errors = _samples(run, "error")
    assert len(errors) == 1                                       # the workload's own error was never posted
    assert list(run.cell_steps("reuse")["step"]) == [0, 1, 2, 3]
