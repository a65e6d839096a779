"""What a worker is told about ``--gc-checkpoints`` (harness/drive/runner.py ``cell_config``):
it waits at its checkpoints only where the cell's driver can force a collection in it (the
waiting itself, in real Chromium: tests/e2e/test_memory_classes.py)."""

from __future__ import annotations

from harness.drive.registry import driver_for
from harness.drive.remote import RemoteTarget
from harness.drive.runner import GC_CHECKPOINT_WAIT_S, cell_config
from harness.plan import RunPlan
from harness.workloads import discover


def _config(browser: str, remote=None, workload="decode-loop", **plan_kw):
    wl = discover()[workload]
    plan = RunPlan(browsers=[browser], workloads=[wl], variants={wl.name: [wl.default_variants[0]]},
                   profiles={wl.name: next(iter(wl.profiles), None)}, remote=remote, **plan_kw)
    cell = plan.cells()[0]
    return cell_config(cell, wl, plan, forces_collections=driver_for(browser, remote).forces_collections)


def test_chromium_workers_wait_at_most_10_s_and_half_the_step_timeout():
    cfg = _config("chromium", gc_checkpoints=4)
    assert cfg["gc_checkpoints"] == 4 and cfg["gc_checkpoint_wait_s"] == GC_CHECKPOINT_WAIT_S == 10.0
    assert _config("chrome", gc_checkpoints=4)["gc_checkpoint_wait_s"] == 10.0
    assert _config("chromium", gc_checkpoints=4, step_timeout_s=6.0)["gc_checkpoint_wait_s"] == 3.0


def test_workers_no_driver_can_collect_in_never_wait():
    for browser in ("webkit", "safari", "dawn"):
        cfg = _config(browser, gc_checkpoints=4)
        assert cfg["gc_checkpoints"] == 4 and cfg["gc_checkpoint_wait_s"] == 0.0, browser
    webdriver = {"chromium": RemoteTarget("webdriver", "http://127.0.0.1:4444", "chromium")}
    assert _config("chromium", remote=webdriver, gc_checkpoints=4)["gc_checkpoint_wait_s"] == 0.0
    cdp = {"chromium": RemoteTarget("cdp", "http://127.0.0.1:9222", "chromium")}
    assert _config("chromium", remote=cdp, gc_checkpoints=4)["gc_checkpoint_wait_s"] == 10.0


def test_a_cell_on_the_page_main_thread_never_waits():
    # no worker target there to collect in (lifecycle main_thread=true)
    cfg = _config("chromium", workload="lifecycle", gc_checkpoints=2,
                  workload_params={"lifecycle": {"main_thread": True}})
    assert cfg["params"]["main_thread"] is True and cfg["gc_checkpoint_wait_s"] == 0.0
    assert _config("chromium", workload="lifecycle", gc_checkpoints=2)["gc_checkpoint_wait_s"] == 10.0


def test_off_by_default_the_config_is_unchanged():
    cfg = _config("chromium")
    assert "gc_checkpoints" not in cfg and "gc_checkpoint_wait_s" not in cfg
