"""Realms and the step timeline, read from recorded real runs (tests/analysis/app-runs/ and
tests/analysis/runs/, re-recorded by tests/analysis/record.py; no browser here).

``chromium-app-realms`` is ``webgpu-harness app`` on tests/apps/ in Chromium, both injection
paths: page-and-worker (the worker ends a step per 4 bind groups, the page adds 1 per step on its
own device and ends no step of its own), frames (all GPU work in an about:blank frame), data-worker
(all GPU work in a data: worker: not measured) and throws (the page throws at once). The older
recordings have no round trips and no time origins: their step times fall back to delivery lags.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest

from harness import pipeline
from harness import tables as T

RUNS = Path(__file__).resolve().parent / "runs"
APP = Path(__file__).resolve().parent / "app-runs" / "chromium-app-realms"


@pytest.fixture(scope="module")
def app():
    return pipeline.analyse(APP)


def cells_of(analysis, variant: str) -> dict[str, dict]:
    return {c["profile"]: c for c in analysis.tables.manifest["cells"] if c["variant"] == variant}


def steps_of(analysis, cell: str) -> pd.DataFrame:
    s = analysis.tables.steps
    return s[s["cell"] == cell].sort_values("step")


def test_page_and_worker_counts_are_both_on_every_step(app):
    for path, cell in cells_of(app, "page-and-worker").items():
        assert cell["status"] == "ok" and cell["realm_kind"] == "worker", (path, cell["reason"])
        s = steps_of(app, cell["cell"])
        assert len(s) == 12
        after = s[s["step"] > 0]  # step 0: both devices' set-up
        # the worker's 4 bind groups per step and the page's 1, made after the worker's previous step
        assert after["realm_worker_create_bind_group"].tolist() == [4] * 11, path
        assert after["realm_page_create_bind_group"].tolist() == [1] * 11, path
        assert after["create_bind_group"].tolist() == [5] * 11, path
        assert after["dispatch_workgroups"].tolist() == [5] * 11, path
        assert (after["submit"] == 2).all(), path
        # live bind groups: both realms' wrappers (none collected in a 12-step run)
        assert s["bind_groups_live"].iloc[-1] == s["create_bind_group"].sum(), path
        row = app.tables.summary.set_index("cell").loc[cell["cell"]]
        assert row["bind_groups_per_token"] == 5
        shares = dict(re.findall(r"(worker|page) (\d+)%", row["realms"]))
        total = s["create_bind_group"].sum()
        assert int(shares["page"]) == round(100 * s["realm_page_create_bind_group"].sum() / total), row["realms"]
        assert int(shares["worker"]) == round(100 * s["realm_worker_create_bind_group"].sum() / total), row["realms"]
        assert row["realms"].endswith("of createBindGroup") and "worker" in row["realms"].split(",")[0]


def test_step_times_by_round_trip_and_steps_in_order(app):
    s = app.tables.summary
    ok = s[s["status"] == "ok"]
    assert len(ok) == 6
    assert ok["clock"].str.startswith("round-trip ±").all(), ok["clock"].tolist()
    assert (ok["clock_uncertainty_ms"] < 50).all()
    for cell in ok["cell"]:
        st = steps_of(app, cell)
        assert st["end_s"].is_monotonic_increasing and st["end_s"].notna().all()
        # a step ends before its sample arrives (within the mapping's uncertainty)
        unc = float(ok.set_index("cell").loc[cell, "clock_uncertainty_ms"]) / 1000
        assert ((st["received_s"] - st["end_s"]) >= -unc - 1e-4).all()


def test_a_frame_the_network_never_serves_is_measured(app):
    for path, cell in cells_of(app, "frames").items():
        assert cell["status"] == "ok" and cell["realm_kind"] == "frame" and cell["warnings"] == [], (path, cell)
        s = steps_of(app, cell["cell"])
        assert s["create_bind_group"].tolist() == [3] * 12, path
        assert app.tables.summary.set_index("cell").loc[cell["cell"], "realms"] == "frame 100% of createBindGroup"


def test_a_data_worker_doing_the_gpu_work_fails_the_cell_naming_it(app):
    for path, cell in cells_of(app, "data-worker").items():
        assert cell["status"] == "failed", path
        assert cell["reason"].startswith("no instrumented realm made a GPUDevice")
        assert "not measured: worker data:text/javascript" in cell["reason"] and "opaque origin" in cell["reason"]
        assert cell["warnings"] and cell["warnings"][0].startswith("not measured: worker data:")
        assert any(f"⚠ `{cell['cell']}`: not measured: worker data:" in n for n in app.measurement)


def test_a_page_that_throws_fails_with_its_error(app):
    for path, cell in cells_of(app, "throws").items():
        assert cell["status"] == "failed", path
        assert cell["reason"].startswith("the app failed before any realm made a GPUDevice: error: TypeError: "
                                         "app failed at start: config.model is undefined at "), cell["reason"]
        ev = app.tables.events
        errors = ev[(ev["cell"] == cell["cell"]) & (ev["kind"] == "app_error")]
        assert len(errors) == 1 and errors["message"].iloc[0].startswith("[page] error: TypeError")


def test_summary_md_and_report_say_what_was_measured(app, tmp_path):
    a = pipeline.analyse(APP, out_dir=tmp_path)
    paths = pipeline.write(a)
    md = paths["summary.md"].read_text()
    html = paths["report.html"].read_text()
    for cell in cells_of(app, "page-and-worker").values():
        line = next(n for n in a.measurement if n.startswith(f"`{cell['cell']}`: realms: "))
        assert line in md and line.replace("`", "") in html
    for cell in cells_of(app, "data-worker").values():
        assert f"⚠ `{cell['cell']}`: not measured: worker data:" in md
    assert "step times on the harness clock by round trips to the page" in md
    assert "What was measured, and what was not" in html


def _check_placement(t: T.Tables) -> int:
    """Every memory sample's step and position agree with its time and the steps' spans;
    returns how many were placed inside a step."""
    placed = 0
    for cell, m in t.memory.groupby("cell"):
        st = t.steps[t.steps["cell"] == cell].sort_values("end_s")
        m = m.dropna(subset=["time_s"]).sort_values("time_s")
        inside = m[m["step"].notna()]
        placed += len(inside)
        assert inside["step_pos"].is_monotonic_increasing, cell
        assert (inside["step_pos"].apply(math.floor) == inside["step"]).all(), cell
        ends = dict(zip(st["step"], st["end_s"]))
        for _, r in inside.iterrows():
            assert r["time_s"] <= ends[int(r["step"])] + 1e-6, (cell, r["time_s"])
            if pd.notna(r["token"]):
                assert ends[int(r["token"])] <= r["time_s"] + 1e-6 and r["token"] < r["step"], cell
    return placed


def test_memory_samples_sit_on_the_step_running_when_taken(app):
    assert _check_placement(app.tables) > 0


@pytest.mark.parametrize("name", ["chromium-decode-loop", "webkit-decode-loop", "mixed-decode-loop"])
def test_older_runs_fall_back_to_delivery_lags(name):
    t = T.build(RUNS / name)
    assert t.summary["clock"].str.startswith("delivery-lag").all()
    assert t.summary["clock_uncertainty_ms"].isna().all()
    assert _check_placement(t) > 0


def test_a_device_lost_and_made_again_is_said_and_the_counts_span_all(app):
    for path, cell in cells_of(app, "device-again").items():
        assert cell["status"] == "ok" and cell["realm_kind"] == "page", (path, cell["reason"])
        s = steps_of(app, cell["cell"])
        assert s["create_bind_group"].tolist() == [3] * 12, path      # 6 steps on each computing device
        assert s["create_compute_pipeline"].sum() == 2, path             # one pipeline per computing device
        (page,) = cell["realms"]
        assert (page["devices"], page["devices_lost"]) == (3, 1), page
        assert cell["warnings"] == [
            "page: GPUDevice lost at step 6 (destroyed: device.destroy() was called at step 6, then the device was "
            "used (GPUDevice.createBuffer))",
            "page: made 3 GPUDevices (a device made again: counts span all of them)"], cell["warnings"]
        ev = app.tables.events
        lost = ev[(ev["cell"] == cell["cell"]) & (ev["kind"] == "device_lost")]
        assert len(lost) == 1 and lost["message"].iloc[0].startswith("[page] device.destroy() was called at step 6")
        assert sum(f"⚠ `{cell['cell']}`: page: made 3 GPUDevices" in n for n in app.measurement) == 1
