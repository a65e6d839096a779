"""gc-retention workload and its report section, in real WebKitGTK (MiniBrowser under Xvfb,
JavaScriptCore + the emulated WebGPU of web/emulation/) through the CLI.

What must hold whatever the GC does: every token makes one new bind group per dispatch (317,
the onnxruntime field report's count, references.md), 20 submits (16 dispatches per command
buffer) and one mapAsync; live = created − collected at every step; the modeled native bytes
are one 16 KiB page per live native bind group (WebKit BindGroup.mm, web/emulation/
memory-model.js); and the two patterns that allocate on purpose (js-churn, force-gc) see the
engine's GC collect bind groups. Bad parameters fail the cell with a one-line reason.
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from conftest import load_run, run_cli

pytestmark = pytest.mark.full   # browser runs of its own: make test-full

TOKENS = 24
FORCE_EVERY = 4
CHURN_KB = 2048


@pytest.fixture(scope="module")
def wk_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("gcr") / "run"
    cli = run_cli("run", "--browser", "webkit", "--workload", "gc-retention", "--variant", "minimal,js-churn,force-gc",
                  "--tokens", str(TOKENS), "--param", f"force_gc_every={FORCE_EVERY}", "--param", f"churn_kb={CHURN_KB}",
                  run_dir=d)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    return load_run(cli)


def _collection_events(st: pd.DataFrame) -> int:
    c = st["bind_groups_collected"]
    rose = c.diff()
    rose.iloc[0] = c.iloc[0]
    return int((rose > 0).sum())


def test_every_cell_ran_on_emulated_webgpu(wk_run):
    s = wk_run.summary
    assert sorted(s["variant"]) == ["force-gc", "js-churn", "minimal"]
    assert (s["status"] == "ok").all(), s[["cell", "status", "reason"]]
    assert (s["webgpu"] == "emulated").all()
    assert re.match(r"^\d+\.\d+", str(s["browser_version"].iloc[0]))


def test_same_webgpu_calls_per_token_in_every_pattern(wk_run):
    for variant in ("minimal", "js-churn", "force-gc"):
        st = wk_run.cell_steps(variant)
        assert len(st) == TOKENS
        assert (st["create_bind_group"] == 317).all()
        assert (st["create_bind_group"] == st["dispatch_workgroups"]).all()
        assert (st["submit"] == 20).all()  # ceil(317 / 16)
        assert (st["map_async"] == 1).all()
        assert (st["write_buffer"] == 317).all()  # one uniform write per dispatch
        # the uniform free list is filled during token 0 (16 in flight per command buffer), then reused
        assert st["create_buffer"].iloc[0] == 16 and (st["create_buffer"].iloc[1:] == 0).all()
        assert (st["extra_pattern"] == variant).all()


def test_live_is_created_minus_collected_and_modeled_bytes_per_native_bind_group(wk_run):
    for variant in ("minimal", "js-churn", "force-gc"):
        st = wk_run.cell_steps(variant)
        assert (st["bind_groups_live"] == st["bind_groups_created"] - st["bind_groups_collected"]).all()
        assert list(st["bind_groups_created"]) == [317 * (i + 1) for i in range(TOKENS)]
        assert (st["modeled_bytes_per_compute_bind_group"] == 16384).all()
        assert (st["modeled_native_bytes"] == st["native_bind_groups_live"] * 16384).all()
        assert (st["native_bind_groups_live"] <= st["bind_groups_created"]).all()
        assert st["modeled_native_bytes"].max() > 0


def test_churn_and_forced_gc_drive_collections(wk_run):
    churn, forced = wk_run.cell_steps("js-churn"), wk_run.cell_steps("force-gc")
    assert _collection_events(churn) > 0 and churn["bind_groups_collected"].iloc[-1] > 0
    assert _collection_events(forced) > 0 and forced["bind_groups_collected"].iloc[-1] > 0
    assert (churn["extra_churn_objects"] == CHURN_KB * 1024 // 64).all()
    expect = [32 * 2**20 if t > 0 and t % FORCE_EVERY == 0 else 0 for t in range(TOKENS)]
    assert list(forced["extra_forced_gc_bytes"]) == expect
    assert (wk_run.cell_steps("minimal")["extra_forced_gc_bytes"] == 0).all()


def test_report_has_the_calibration_section(wk_run):
    html = (wk_run.dir / "report.html").read_text()
    sec = re.search(r'<section id="gc-retention">(.*?)</section>', html, re.S)
    assert sec, "no gc-retention section"
    body = sec.group(1)
    assert "reported, not measured here" in body.lower()
    assert "150,000" in body and "250–7,000" in body
    assert "not Safari" in body
    assert "Verdict" in body and "minimal" in body
    for variant in ("js-churn", "force-gc"):
        assert f"<code>{variant}</code>" in body
    data = json.loads(re.search(r'id="chart-data">(.*?)</script>', html, re.S).group(1).replace("<\\/", "</"))
    traces = data["gc_retention_live"]["data"]
    cells = [t for t in traces if "cell" in (t.get("meta") or {})]
    assert {t["meta"]["variant"] for t in cells} == {"minimal", "js-churn", "force-gc"}
    field = [t for t in traces if t.get("legendgroup") == "field-report"]
    assert {t["y"][0] for t in field} == {250, 7_000, 150_000}  # the report's figures, beside the curves
    assert "not measured here" in field[0]["legendgrouptitle"]["text"]
    assert "gc_retention_modeled" in data


def test_section_figures_match_the_steps(wk_run):
    from harness import tables
    from harness.stats.workloads import gc_retention as g

    confs, _ = g.configurations(tables.build(wk_run.dir))
    by_variant = {c["variant"]: c for c in confs}
    for variant, c in by_variant.items():
        st = wk_run.cell_steps(variant)
        assert c["mean"]["live_max"] == st["bind_groups_live"].max()
        assert c["mean"]["live_end"] == st["bind_groups_live"].iloc[-1]
        assert c["mean"]["events"] == _collection_events(st)
        assert c["mean"]["modeled_max"] == st["modeled_native_bytes"].max()
    base = by_variant["minimal"]["mean"]["live_max"]
    assert by_variant["force-gc"]["ratio"] == pytest.approx(by_variant["force-gc"]["mean"]["live_max"] / base)
    assert g.classify(by_variant["minimal"], by_variant["minimal"])[0] == "none"
