"""An app that renders (tests/apps/render/: a render loop on the page, no compute), measured by
``webgpu-harness app`` in Chromium on real WebGPU: its draws, render passes, pipelines, bind
group calls with dynamic offsets and labelled buffers by usage are counted exactly, so it is
not reported as "0 dispatches" with nothing else (issue 21, item 3)."""

from __future__ import annotations

import sys

import pandas as pd
import pytest

from conftest import REPO, load_run, run_cli

sys.path.insert(0, str(REPO / "tests" / "apps"))
from server import Served, create_app  # noqa: E402

pytestmark = pytest.mark.full

N = 4
#: tests/apps/render/page.js: every frame
PER_FRAME = {"begin_render_pass": 1, "draw": 1, "draw_indexed": 1, "draw_indirect": 1, "draw_indexed_indirect": 1,
             "set_bind_group": 2, "set_bind_group_dynamic_offsets": 2, "write_buffer": 1, "write_buffer_bytes": 16,
             "submit": 1, "dispatch_workgroups": 0, "begin_compute_pass": 0, "create_bind_group": 0}
#: frame 0 only: set-up
SETUP = {"create_shader_module": 1, "create_render_pipeline": 1, "create_render_pipeline_async": 1,
         "create_buffer": 4, "create_buffer_bytes_vertex": 24, "create_buffer_bytes_index": 8,
         "create_buffer_bytes_indirect": 36, "create_buffer_bytes_storage": 0}


@pytest.fixture(scope="module")
def render_run(tmp_path_factory):
    with Served(create_app()) as srv:
        d = tmp_path_factory.mktemp("render") / "run"
        r = run_cli("app", f"{srv.url}/render/?steps={N}", "-b", "chromium", "--inject", "cdp",
                    "--step-on", "mark:frame", "--steps", str(N), run_dir=d, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return load_run(r)


def test_render_work_is_counted_exactly_per_frame(render_run):
    st = render_run.steps.sort_values("step")
    assert list(st["step"]) == list(range(N))
    # step 0 also uploads the geometry (3 more writeBuffer, 68 bytes) and creates the bind group
    first = {**PER_FRAME, "write_buffer": 4, "write_buffer_bytes": 16 + 24 + 8 + 36, "create_bind_group": 1}
    for col, want in PER_FRAME.items():
        assert list(st[col]) == [first[col]] + [want] * (N - 1), (col, list(st[col]))
    for col, want in SETUP.items():
        assert list(st[col]) == [want] + [0] * (N - 1), (col, list(st[col]))
    uniform = 2 * 256  # two 256-byte dynamic-offset slots (minUniformBufferOffsetAlignment on SwiftShader)
    assert list(st["create_buffer_bytes_uniform"]) == [uniform] + [0] * (N - 1)
    # every buffer of the app has COPY_DST: the bytes of all four
    assert st["create_buffer_bytes_copy_dst"].iloc[0] == 24 + 8 + 36 + uniform


def test_summary_and_report_show_draws_not_zero_dispatches(render_run):
    row = render_run.summary.iloc[0]
    assert row["dispatches_per_token"] == 0 and row["draws_per_token"] == 4
    assert row["render_passes_per_token"] == 1 and row["set_bind_groups_per_token"] == 2
    assert row["pipelines_created"] == 2 and row["write_buffer_bytes_per_token"] == 16
    html = (render_run.dir / "report.html").read_text()
    assert "draws / step" in html and "render passes / step" in html
    assert "draws/step" in render_run.cli.stdout


def test_buffers_by_label_and_usage(render_run):
    b = pd.read_csv(render_run.dir / "buffers.csv", keep_default_na=False)
    got = {(r["label"], r["usage_flags"], r["buffers"]) for _, r in b.iterrows()}
    assert got == {("triangle.vertices", "COPY_DST|VERTEX", 1), ("triangle.indices", "COPY_DST|INDEX", 1),
                   ("triangle.indirect", "COPY_DST|INDIRECT", 1), ("frame.uniforms", "COPY_DST|UNIFORM", 1)}
    assert set(b["step"]) == {0}
    assert "Buffers created, by usage and label" in (render_run.dir / "report.html").read_text()
