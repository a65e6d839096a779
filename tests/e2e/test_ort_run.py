"""ort-run: any ONNX model with the real onnxruntime-web WebGPU EP; here the conv detector fixture
(workloads/ort-run/make_model.py), in Chromium (real WebGPU) and WebKitGTK (emulated)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import REPO, load_run, run_cli

pytestmark = pytest.mark.full   # browser runs of its own: make test-full

FIXTURE = REPO / "workloads" / "ort-run" / "models" / "conv-tiny"
RUNS, SESSIONS = 3, 2


def _runs(steps: pd.DataFrame) -> pd.DataFrame:
    return steps[steps["extra_phase"].isin(["first-run", "steady"])]


@pytest.fixture(scope="module")
def npy_run(tmp_path_factory):
    """Two sessions of three runs each on the fixture's input.npy given as a file of this machine
    (outside the served folders: the harness serves that one file), ORT's own device."""
    base = tmp_path_factory.mktemp("ort-run")
    frame = base / "frame.npy"
    frame.write_bytes((FIXTURE / "input.npy").read_bytes())
    d = base / "run"
    cli = run_cli("run", "--browser", "chromium", "--workload", "ort-run", "--tokens", str(RUNS),
                  "--param", f"sessions={SESSIONS}", "--param", f"inputs=image={frame}",
                  "--param", "settle_ms=800", run_dir=d)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    return load_run(cli)


def test_same_bind_groups_every_run_one_per_dispatch(npy_run):
    row = npy_run.cell("default")
    assert row["status"] == "ok" and row["webgpu"] == "real"
    assert row["engine"].startswith("onnxruntime-web 1.31.0-dev.20260914-8d85527a0 (webgpu bundle)")
    runs = _runs(npy_run.cell_steps("default"))
    assert len(runs) == RUNS * SESSIONS
    assert runs["create_bind_group"].nunique() == 1, runs[["step", "create_bind_group"]]
    assert (runs["create_bind_group"] > 0).all()
    assert (runs["create_bind_group"] == runs["dispatch_workgroups"]).all()


def test_phases_in_order_and_pipelines_built_in_each_first_run(npy_run):
    st = npy_run.cell_steps("default")
    want = (["create", "first-run"] + ["steady"] * (RUNS - 1) + ["release"]) * SESSIONS
    assert st["extra_phase"].tolist() == want
    assert st["extra_cycle"].tolist() == [c for c in range(SESSIONS) for _ in range(RUNS + 2)]
    pipelines = st["create_compute_pipeline"] + st["create_compute_pipeline_async"]
    first = pipelines[st["extra_phase"] == "first-run"]
    assert (first > 0).all() and first.nunique() == 1          # rebuilt by every session
    assert (pipelines[st["extra_phase"] == "steady"] == 0).all()
    assert (st.loc[st["extra_phase"] == "release", "buffer_destroy"] > 0).all()
    ttfr = st.loc[st["extra_phase"] == "first-run", "extra_time_to_first_result_ms"]
    assert (ttfr > st.loc[st["extra_phase"] == "first-run", "wall_ms"].values).all()


def test_outputs_match_the_numpy_reference(npy_run):
    expected = json.loads((FIXTURE / "expected.json").read_text())["outputs"]
    runs = _runs(npy_run.cell_steps("default"))
    assert runs["logits_hash"].nunique() == 1                   # same input, same bytes every run
    for i, name in enumerate(["boxes", "scores"]):
        assert runs[f"extra_output_{i}_sum"].tolist() == pytest.approx([expected[name]["sum"]] * len(runs), abs=1e-3)


def test_memory_sampled_after_each_release(npy_run):
    st = npy_run.cell_steps("default")
    m = npy_run.memory[(npy_run.memory["source"] == "psutil") & (npy_run.memory["cell"] == npy_run.cell("default")["cell"])]
    for step in st.loc[st["extra_phase"] == "release", "step"]:
        tagged = m[m["token"] == step]
        assert len(tagged) and set(tagged["process_type"]) >= {"renderer", "gpu-process"}, step


def test_user_model_per_session_device_batch_dim_and_new_frames(tmp_path):
    """--model with a non-decoder ONNX file, a new device per session, batch=2, new data per run."""
    r = run_cli("run", "--browser", "chromium", "--workload", "ort-run", "--model", str(FIXTURE / "model.onnx"),
                "--tokens", "2", "--param", "sessions=2", "--param", "device=per-session", "--param", "dims=batch=2",
                "--param", "settle_ms=0", run_dir=tmp_path / "r")
    assert r.returncode == 0, r.stdout + r.stderr
    run = load_run(r)
    assert run.manifest["parameters"]["params"]["model"].endswith("/model.onnx")
    st = run.cell_steps("default")
    runs = _runs(st)
    assert runs["create_bind_group"].nunique() == 1 and (runs["create_bind_group"] > 0).all()
    assert runs.groupby("extra_cycle")["logits_hash"].nunique().tolist() == [2, 2]   # frames=new
    assert runs.groupby("extra_run")["logits_hash"].nunique().tolist() == [1, 1]     # same seed per run index
    done = [json.loads(x) for x in (tmp_path / "r" / "samples.jsonl").read_text().splitlines() if '"kind":"done"' in x]
    assert done[0]["result"]["inputs"] == [{"name": "image", "type": "float32", "dims": [2, 3, 64, 64], "source": "generated"}]


def test_webkit_emulated_same_bind_groups_every_run(tmp_path):
    r = run_cli("run", "--browser", "webkit", "--workload", "ort-run", "--tokens", "3", "--param", "settle_ms=0",
                run_dir=tmp_path / "r")
    assert r.returncode == 0, r.stdout + r.stderr
    run = load_run(r)
    assert run.cell("default")["webgpu"] == "emulated"
    runs = _runs(run.cell_steps("default"))
    assert len(runs) == 3 and runs["create_bind_group"].nunique() == 1
    assert (runs["create_bind_group"] == runs["dispatch_workgroups"]).all() and (runs["create_bind_group"] > 0).all()
