"""ort-decode: the real onnxruntime-web WebGPU EP decoding the built-in ONNX model in Chromium."""

from __future__ import annotations

import json

import pytest

from conftest import REPO, load_run, run_cli

MODELS = REPO / "workloads" / "ort-decode" / "models"


def _expected(name: str) -> list[int]:
    """Greedy tokens onnxruntime (CPU EP) produced for the fixture (make_model.py)."""
    return json.loads((MODELS / name / "expected.json").read_text())["tokens"]


@pytest.fixture(scope="module")
def ort_run(shared_ort):
    """ort-decode tiny, 48 tokens, default / bind-group-cache / force-gc, kvCache=static (the cache's
    ≥ 99% hits need a static KV cache: README), Chromium: the session's shared recording
    (tests/shared_run.py)."""
    return shared_ort


def test_default_creates_one_bind_group_per_dispatch_every_token(ort_run):
    st = ort_run.cell_steps("default")
    assert len(st) == 48
    assert (st["dispatch_workgroups"] > 0).all()
    assert (st["create_bind_group"] == st["dispatch_workgroups"]).all()
    row = ort_run.cell("default")
    assert row["status"] == "ok" and row["webgpu"] == "real"
    assert row["engine"].startswith("onnxruntime-web 1.31.0-dev.20260914-8d85527a0 (webgpu bundle)")


def test_tokens_match_onnxruntime_cpu_and_agree_across_variants(ort_run):
    expected = _expected("tiny")[:48]
    for variant in ("default", "bind-group-cache", "force-gc"):
        assert ort_run.cell_steps(variant)["token"].tolist() == expected, variant
    # the cache hands ORT the very bind groups it would have built: bit-identical logits
    assert ort_run.cell_steps("default")["logits_hash"].tolist() == ort_run.cell_steps("bind-group-cache")["logits_hash"].tolist()
    assert set(ort_run.summary["tokens_identical"]) == {"yes"}


def test_bind_group_cache_hits_over_last_half(ort_run):
    st = ort_run.cell_steps("bind-group-cache")
    last = st[st["step"] >= 24]
    hits, misses = last["extra_bind_group_cache_hits"].sum(), last["extra_bind_group_cache_misses"].sum()
    assert hits / (hits + misses) >= 0.99, (hits, misses)
    # what the probe saw agrees: ORT asked for bind groups, the device made (almost) none
    assert last["create_bind_group"].sum() == misses
    assert (st["extra_bind_group_cache_size"] <= st["extra_bind_group_cache_max_entries"]).all()


def test_force_gc_collects_bind_groups(ort_run):
    st = ort_run.cell_steps("force-gc")
    assert st["bind_groups_collected"].iloc[-1] > 0
    assert (st["bind_groups_live"] == st["bind_groups_created"] - st["bind_groups_collected"]).all()


@pytest.mark.full
def test_cache_size_never_exceeds_a_small_cap(tmp_path):
    r = run_cli("run", "--browser", "chromium", "--workload", "ort-decode", "--profile", "tiny", "--tokens", "6",
                "--variant", "bind-group-cache", "--param", "bindGroupCacheMaxEntries=8", run_dir=tmp_path / "r")
    assert r.returncode == 0, r.stderr
    st = load_run(r).cell_steps("bind-group-cache")
    assert (st["extra_bind_group_cache_size"] <= 8).all()
    assert st["extra_bind_group_cache_evictions"].sum() > 0
    assert st["token"].tolist() == _expected("tiny")[:6]


@pytest.mark.full
def test_user_model_with_other_io_names_runs(tmp_path):
    model = MODELS / "tiny-alt-io" / "model.onnx"
    r = run_cli("run", "--browser", "chromium", "--workload", "ort-decode", "--model", str(model), "--tokens", "8",
                "--variant", "default", run_dir=tmp_path / "r")
    assert r.returncode == 0, r.stdout + r.stderr
    run = load_run(r)
    assert run.summary["status"].tolist() == ["ok"]
    assert run.cell_steps("default")["token"].tolist() == _expected("tiny-alt-io")[:8]
    assert run.manifest["parameters"]["params"]["model"].endswith("/model.onnx")


@pytest.mark.full
def test_model_ort_rejects_fails_its_cell_with_ort_message(tmp_path):
    import onnx
    from onnx import TensorProto, helper

    # parses as ONNX and has the right names, but uses an operator no execution provider has
    node = helper.make_node("NoSuchDecoderOp", ["input_ids"], ["logits"], domain="com.example")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "s"])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, "s", 8])])
    path = tmp_path / "model.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)]), str(path))
    r = run_cli("run", "--browser", "chromium", "--workload", "ort-decode", "--model", str(path), "--tokens", "2",
                "--variant", "default", "--step-timeout-s", "60", run_dir=tmp_path / "r")
    assert r.returncode == 1
    row = load_run(r).summary.iloc[0]
    assert row["status"] == "failed"
    assert "NoSuchDecoderOp" in row["reason"] or "session" in row["reason"]


CACHE_CHECK_JS = """(async () => {
  const { checkBindGroupCache } = await import('/workloads/ort-decode/bind-group-cache-check.js');
  return await checkBindGroupCache(await navigator.gpu.requestAdapter());
})()"""


@pytest.mark.full
def test_bind_group_cache_shim_in_the_browser():
    from harness.drive.chromium import ChromiumDriver
    from harness.drive.doctor import evaluate_on_local_page

    _, report = evaluate_on_local_page(ChromiumDriver(), CACHE_CHECK_JS, extra_args=["--js-flags=--expose-gc"])
    checks = {c["name"]: c for c in report["checks"]}
    assert any("destroy" in n for n in checks), list(checks)
    failed = {n: c for n, c in checks.items() if c["ok"] is False}
    assert not failed, failed
    assert sum(c["ok"] is True for c in checks.values()) >= 5


@pytest.mark.full
def test_user_model_with_external_data_runs(tmp_path):
    import onnx

    # the tiny fixture re-saved the way large models ship: graph in model.onnx, weights beside it
    model = onnx.load(str(MODELS / "tiny" / "model.onnx"))
    folder = tmp_path / "ext"
    folder.mkdir()
    onnx.save_model(model, str(folder / "model.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="model.onnx_data", size_threshold=1024)  # small constants stay inline, as exporters do
    assert (folder / "model.onnx_data").stat().st_size > (folder / "model.onnx").stat().st_size
    r = run_cli("run", "--browser", "chromium", "--workload", "ort-decode", "--model", str(folder / "model.onnx"),
                "--tokens", "4", "--variant", "default", run_dir=tmp_path / "r")
    assert r.returncode == 0, r.stdout + r.stderr
    run = load_run(r)
    assert run.cell_steps("default")["token"].tolist() == _expected("tiny")[:4]
    # and without its data file it is bad input, found before any browser starts
    (folder / "model.onnx_data").unlink()
    r = run_cli("run", "--browser", "chromium", "--workload", "ort-decode", "--model", str(folder / "model.onnx"),
                run_dir=tmp_path / "r2")
    assert r.returncode == 2 and "external data file model.onnx_data is missing" in r.stderr


def test_worker_heap_and_page_memory_are_sampled(ort_run):
    m = ort_run.memory
    heap = m[(m["source"] == "cdp") & (m["process_type"] == "worker")]
    assert len(heap) > 0 and (heap["js_heap_bytes"] > 100_000).all()   # CDP Runtime.getHeapUsage of the worker
    page = m[(m["source"] == "uasm") & (m["process_type"] == "page")]
    assert len(page) > 0 and (page["js_heap_bytes"] > 100_000).all()   # measureUserAgentSpecificMemory
