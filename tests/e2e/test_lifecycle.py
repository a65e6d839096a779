"""lifecycle: reload and navigate-away cycles of the runner page in one browser context. The cell
must survive every navigation (it ends only on done/error/skip), count one step per page load,
and have process memory sampled after every cycle; in Chromium and WebKitGTK."""

from __future__ import annotations

import pytest

import json

from conftest import load_run, run_cli

pytestmark = pytest.mark.full   # browser runs of its own: make test-full

CYCLES = 3


def _lifecycle_run(tmp_path_factory, browser):
    d = tmp_path_factory.mktemp(f"lifecycle-{browser}") / "run"
    cli = run_cli("run", "--browser", browser, "--workload", "lifecycle", "--tokens", str(CYCLES),
                  "--param", "buffer_mb=4", "--param", "dispatches=16", "--param", "hold_ms=800",
                  "--param", "away_ms=300", run_dir=d)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    return load_run(cli)


def _check(run):
    assert set(run.summary["status"]) == {"ok"}, run.summary[["cell", "status", "reason"]]
    samples = [json.loads(x) for x in (run.dir / "samples.jsonl").read_text().splitlines()]
    for variant in ("reload", "navigate"):
        cell = run.cell(variant)["cell"]
        st = run.cell_steps(variant)
        assert st["step"].tolist() == list(range(CYCLES))
        assert st["extra_cycle"].tolist() == list(range(CYCLES))
        assert st["extra_page_loads"].tolist() == [c + 1 for c in range(CYCLES)]   # one page load per cycle
        want = "reload" if variant == "reload" else "navigate"
        assert st["extra_navigation_type"].tolist() == ["navigate"] + [want] * (CYCLES - 1)
        # every load makes the same WebGPU calls
        assert st["create_bind_group"].nunique() == 1 and st["create_buffer"].nunique() == 1
        assert (st["dispatch_workgroups"] == 16).all()
        envs = [s for s in samples if s["cell"] == cell and s["kind"] == "env"]
        assert len(envs) == CYCLES                                 # a new worker per load
        mem = run.memory[(run.memory["cell"] == cell) & (run.memory["source"] == "psutil")]
        for cycle in range(CYCLES):                                # memory after every cycle
            assert len(mem[mem["token"] == cycle]), (variant, cycle)
        away = [s for s in samples if s["cell"] == cell and s["kind"] == "log" and "away page" in s["message"]]
        assert len(away) == (CYCLES - 1 if variant == "navigate" else 0)
    return samples


def test_chromium_reload_and_navigate_cycles(tmp_path_factory):
    run = _lifecycle_run(tmp_path_factory, "chromium")
    _check(run)
    assert (run.summary["webgpu"] == "real").all()
    assert (run.steps["extra_readback_ok"] == 1).all()
    mem = run.memory[run.memory["source"] == "psutil"]
    assert {"renderer", "gpu-process"} <= set(mem["process_type"])


def test_webkit_reload_and_navigate_cycles(tmp_path_factory):
    run = _lifecycle_run(tmp_path_factory, "webkit")
    _check(run)
    assert (run.summary["webgpu"] == "emulated").all()
    assert "WebKitWebProcess" in set(run.memory["process_type"])


def test_main_thread_with_teardown(tmp_path):
    """main_thread: the device lives on the page itself; teardown=destroy frees it before each reload."""
    r = run_cli("run", "--browser", "chromium", "--workload", "lifecycle", "--variant", "reload", "--tokens", "2",
                "--param", "buffer_mb=4", "--param", "dispatches=8", "--param", "hold_ms=300",
                "--param", "main_thread=true", "--param", "teardown=destroy", run_dir=tmp_path / "r")
    assert r.returncode == 0, r.stdout + r.stderr
    st = load_run(r).cell_steps("reload")
    assert st["extra_thread"].tolist() == ["main", "main"]
    assert st["extra_teardown"].tolist() == ["destroy"] * 2
    assert st["extra_page_loads"].tolist() == [1, 2]
