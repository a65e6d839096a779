"""The results endpoint and static roots, against the real app served by uvicorn."""

from __future__ import annotations

import json

import httpx
import pytest

from harness.serve.samples import MAX_BODY_BYTES
from harness.serve.app import ServerThread, create_app
from harness.store.store import SampleStore


@pytest.fixture()
def server(tmp_path):
    store = SampleStore(tmp_path)
    store.register("c1", {"cell": "c1", "params": {}})
    with ServerThread(create_app(store)) as srv:
        yield srv, store
    store.close()


def _step(step=0):
    live = dict(bind_groups_created=3, bind_groups_collected=1, bind_groups_live=2,
                buffers_created=1, buffers_collected=0, buffers_live=1)
    return {"kind": "step", "step": step, "token": 5, "logits_hash": "abcd", "cpu_ms": 1.0, "wall_ms": 2.0,
            "counters": {"createBindGroup": 3, "dispatchWorkgroups": 3}, "live": live}


def test_valid_sample_is_appended_with_isolation_headers(server, tmp_path):
    srv, store = server
    r = httpx.post(f"{srv.url}/api/cells/c1/samples", json={"samples": [_step()]})
    assert r.status_code == 200, r.text
    assert r.headers["cross-origin-opener-policy"] == "same-origin"
    assert r.headers["cross-origin-embedder-policy"] == "require-corp"
    lines = [json.loads(x) for x in (tmp_path / "samples.jsonl").read_text().splitlines()]
    assert lines[-1]["kind"] == "step" and lines[-1]["counters"]["createBindGroup"] == 3
    assert store.cells["c1"].steps == 1


@pytest.mark.parametrize("body", [
    {"samples": [{"kind": "step", "step": -1}]},          # missing fields, negative step
    {"samples": [{"kind": "nonsense"}]},                   # unknown kind
    {"samples": []},                                       # empty batch
    {"samples": [dict(_step(), counters={"createBindGroup": -4})]},  # negative count
    {"other": 1},
])
def test_malformed_sample_is_rejected_422(server, body, tmp_path):
    srv, _ = server
    r = httpx.post(f"{srv.url}/api/cells/c1/samples", json=body)
    assert r.status_code == 422, r.text
    assert not (tmp_path / "samples.jsonl").read_text()


def test_non_json_body_is_rejected_422(server):
    srv, _ = server
    r = httpx.post(f"{srv.url}/api/cells/c1/samples", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 422


def test_oversized_body_is_rejected_413(server, tmp_path):
    srv, _ = server
    big = {"samples": [{"kind": "log", "message": "x" * 10_000}] * ((MAX_BODY_BYTES // 10_000) + 5)}
    r = httpx.post(f"{srv.url}/api/cells/c1/samples", content=json.dumps(big).encode(),
                   headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert not (tmp_path / "samples.jsonl").read_text()


def test_unknown_cell_is_404(server):
    srv, _ = server
    assert httpx.post(f"{srv.url}/api/cells/nope/samples", json={"samples": [_step()]}).status_code == 404
    assert httpx.get(f"{srv.url}/api/cells/nope").status_code == 404


@pytest.mark.parametrize("path", ["/web/../pyproject.toml", "/web/%2e%2e/pyproject.toml",
                                  "/workloads/../../etc/passwd", "/pyproject.toml", "/harness/server.py",
                                  "/web/..%2fharness%2fserver.py"])
def test_paths_outside_roots_are_404(server, path):
    srv, _ = server
    r = httpx.get(srv.url + path)
    assert r.status_code == 404, (path, r.status_code, r.text[:200])


def test_static_files_are_served_as_javascript(server):
    srv, _ = server
    r = httpx.get(f"{srv.url}/web/worker.js")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/javascript")
    assert "installProbes" in r.text


def test_chunked_oversized_body_is_cut_at_the_limit(server, tmp_path):
    srv, _ = server
    chunk = b"x" * 65536
    sent = {"n": 0}

    def body():  # no Content-Length: the server must stop reading at MAX_BODY_BYTES itself
        for _ in range(64):
            sent["n"] += 1
            yield chunk

    try:
        r = httpx.post(f"{srv.url}/api/cells/c1/samples", content=body(), headers={"content-type": "application/json"})
        assert r.status_code == 413
    except httpx.HTTPError:
        pass  # the server may close the connection once it has answered 413
    assert not (tmp_path / "samples.jsonl").read_text()


def test_cross_origin_post_is_refused(server):
    srv, _ = server
    r = httpx.post(f"{srv.url}/api/cells/c1/samples", json={"samples": [_step()]}, headers={"origin": "http://evil.example"})
    assert r.status_code == 403
    same = httpx.post(f"{srv.url}/api/cells/c1/samples", json={"samples": [_step()]},
                      headers={"origin": srv.url})
    assert same.status_code == 200


@pytest.mark.parametrize("sample", [
    {"kind": "env", "user_agent": "x", "webgpu": "real", "cell": "other"},   # may not re-file itself
    {"kind": "env", "user_agent": "x", "webgpu": "real", "seq": -5},
])
def test_sample_cannot_set_harness_keys(server, sample, tmp_path):
    srv, _ = server
    r = httpx.post(f"{srv.url}/api/cells/c1/samples", json={"samples": [sample]})
    assert r.status_code == 422
    assert not (tmp_path / "samples.jsonl").read_text()


def test_non_finite_numbers_are_rejected(server):
    srv, _ = server
    body = '{"samples": [' + json.dumps(_step()).replace('"wall_ms": 2.0', '"wall_ms": Infinity') + "]}"
    r = httpx.post(f"{srv.url}/api/cells/c1/samples", content=body.encode(), headers={"content-type": "application/json"})
    assert r.status_code == 422
