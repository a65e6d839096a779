"""The results endpoint, its access rules and the static roots, against the real app served by
uvicorn: valid batches, the strict per-sample schema, at-least-once delivery (duplicates, gaps),
hostile requests (no token, DNS rebinding, cross-origin, oversized, slow and half-open
connections, files beside a --model), and generated requests (hypothesis) that must never get
a 5xx or put anything but valid JSON into samples.jsonl."""

from __future__ import annotations

import json
import math
import socket
import time

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.serve import access
from harness.serve import app as app_module
from harness.serve.app import ServerThread, create_app
from harness.serve.samples import MAX_BODY_BYTES, check_sample
from harness.store.store import SampleStore

TOKEN = "t0k3n-of-this-run"
AUTH = {access.TOKEN_HEADER: TOKEN}


@pytest.fixture()
def server(tmp_path, monkeypatch):
    # a batch ahead of a missing one is written (gap recorded) after 0.3 s here, not 10 s
    monkeypatch.setattr(app_module, "REORDER_WAIT_S", 0.3)
    store = SampleStore(tmp_path)
    store.register("c1", {"cell": "c1", "params": {}})
    with ServerThread(create_app(store, token=TOKEN)) as srv:
        yield srv, store
    store.close()


def _lines(tmp_path, kind=None):
    out = [json.loads(x) for x in (tmp_path / "samples.jsonl").read_text().splitlines()]
    return [s for s in out if kind is None or s["kind"] == kind]


def _step(step=0, n=1):
    live = dict(bind_groups_created=3, bind_groups_collected=1, bind_groups_live=2,
                buffers_created=1, buffers_collected=0, buffers_live=1)
    return {"n": n, "kind": "step", "step": step, "token": 5, "logits_hash": "abcd", "cpu_ms": 1.0, "wall_ms": 2.0,
            "t_ms": 10.0 + step, "counters": {"createBindGroup": 3, "dispatchWorkgroups": 3}, "live": live}


def _post(srv, samples, src="w-test", headers=AUTH, **kw):
    return httpx.post(f"{srv.url}/api/cells/c1/samples", json={"src": src, "samples": samples}, headers=headers, **kw)


def test_valid_sample_is_appended_with_sender_and_isolation_headers(server, tmp_path):
    srv, store = server
    r = _post(srv, [_step()])
    assert r.status_code == 200, r.text
    assert r.json()["accepted"] == 1 and r.json()["refused"] == []
    assert r.headers["cross-origin-opener-policy"] == "same-origin"
    assert r.headers["cross-origin-embedder-policy"] == "require-corp"
    line = _lines(tmp_path)[-1]
    assert line["kind"] == "step" and line["counters"]["createBindGroup"] == 3
    assert (line["src"], line["n"], line["queue"]) == ("w-test", 1, 0)
    assert store.cells["c1"].steps == 1


@pytest.mark.parametrize("body", [
    {"src": "w-x", "samples": []},                     # empty batch
    {"samples": [_step()]},                            # no sender
    {"src": "w x/../", "samples": [_step()]},          # sender id not [A-Za-z0-9_-]
    {"src": "w-x", "samples": [_step()], "queue": -1},  # negative queue depth
    {"src": "w-x", "samples": [_step()], "extra": 1},  # unknown envelope key
    {"other": 1},
])
def test_a_body_that_is_not_a_batch_is_rejected_422(server, body, tmp_path):
    srv, _ = server
    r = httpx.post(f"{srv.url}/api/cells/c1/samples", json=body, headers=AUTH)
    assert r.status_code == 422, r.text
    assert not (tmp_path / "samples.jsonl").read_text()


def test_non_json_body_is_rejected_422(server):
    srv, _ = server
    r = httpx.post(f"{srv.url}/api/cells/c1/samples", content=b"{not json", headers={"content-type": "application/json", **AUTH})
    assert r.status_code == 422


@pytest.mark.parametrize("bad, where", [
    (dict(_step(), step=-1), "step"),                                         # negative step
    ({"n": 1, "kind": "nonsense"}, "kind"),                                  # unknown kind
    (dict(_step(), counters={"createBindGroup": -4}), "counters.createBindGroup"),  # negative count
    (dict(_step(), counters={"createBindGroup": True}), "counters.createBindGroup"),  # boolean as a number
    (dict(_step(), wall_ms=True), "wall_ms"),
    (dict(_step(), wall_ms="2.0"), "wall_ms"),                                # string as a number
    (dict(_step(), cpu_ms=-0.5), "cpu_ms"),                                   # negative time
    (dict(_step(), t_ms=-3.0), "t_ms"),
    (dict(_step(), extra={"x": math.nan}), "extra.x"),                        # NaN nested in extra
    ({"n": 1, "kind": "done", "result": {"a": [1, math.inf]}}, "result.a[1]"),  # Infinity deep in a result
    ({"n": 1, "kind": "uasm", "bytes": -1}, "bytes"),
    ({"n": 1, "kind": "env", "user_agent": "x", "webgpu": "real", "cell": "other"}, "cell"),  # may not re-file itself
    ({"n": 1, "kind": "env", "user_agent": "x", "webgpu": "real", "seq": -5}, "seq"),
    ({"n": 1, "kind": "log", "message": "x", "src": "p-other"}, "src"),
    ({"kind": "log", "message": "no sequence number"}, "n"),
    ({"n": True, "kind": "log", "message": "boolean n"}, "n"),
])
def test_a_bad_sample_is_refused_alone_with_one_line_of_reason(server, tmp_path, bad, where):
    srv, store = server
    good = dict(_step(0, n=1))
    bad = {**bad, "n": 2} if "n" in bad and bad["n"] is not True else bad
    body = json.dumps({"src": "w-test", "samples": [good, bad]}, allow_nan=True)
    r = httpx.post(f"{srv.url}/api/cells/c1/samples", content=body.encode(),
                   headers={"content-type": "application/json", **AUTH})
    assert r.status_code == 422, r.text
    assert r.json()["accepted"] == 1 and len(r.json()["refused"]) == 1
    lines = _lines(tmp_path)
    assert [s["kind"] for s in lines] == ["step", "refused"]       # the good one is kept
    refused = lines[1]
    assert "\n" not in refused["reason"] and where.split(".")[0] in refused["reason"], refused
    assert store.cells["c1"].refused == 1
    assert "refused" in store.cells["c1"].delivery_problem()


def test_samples_jsonl_never_holds_nan(server, tmp_path):
    srv, _ = server
    body = '{"src":"w-t","samples":[' + json.dumps(_step()).replace('"wall_ms": 2.0', '"wall_ms": Infinity') + "]}"
    r = httpx.post(f"{srv.url}/api/cells/c1/samples", content=body.encode(), headers={"content-type": "application/json", **AUTH})
    assert r.status_code == 422
    text = (tmp_path / "samples.jsonl").read_text()
    assert "Infinity" not in text and "NaN" not in text
    json.loads(text.splitlines()[0], parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))


def test_a_retried_batch_is_written_once(server, tmp_path):
    srv, store = server
    batch = [_step(0, n=1), _step(1, n=2)]
    assert _post(srv, batch).status_code == 200
    again = _post(srv, batch)                  # the first answer was lost: the sink sends it again
    assert again.status_code == 200 and again.json()["duplicates"] == 2 and again.json()["accepted"] == 0
    assert [s["step"] for s in _lines(tmp_path, "step")] == [0, 1]
    assert store.cells["c1"].duplicates == 2 and store.cells["c1"].delivery_problem() is None


def test_a_gap_in_sequence_numbers_is_recorded_and_makes_the_cell_incomplete(server, tmp_path):
    srv, store = server
    assert _post(srv, [_step(0, n=1)]).status_code == 200
    assert _post(srv, [_step(3, n=4)]).status_code == 200   # n 2-3 (steps 1-2) never arrived
    gap = _lines(tmp_path, "gap")
    assert len(gap) == 1 and (gap[0]["src"], gap[0]["first_n"], gap[0]["last_n"]) == ("w-test", 2, 3)
    state = store.cells["c1"]
    assert state.missing_steps == [1, 2] and state.lost_samples == 2
    problem = state.delivery_problem()
    assert "2 step(s) missing (1-2)" in problem and "2 sample(s) lost in delivery (w-test n 2-3)" in problem


@pytest.mark.parametrize("steps, refused_step, why", [
    ([0, 1, 1], 1, "repeats"),
    ([0, 1, 0], 0, "goes back"),
    ([0, 5], 5, "not the next step"),           # nothing was lost that could explain a jump
    ([3], 3, "not the next step"),
])
def test_steps_must_count_up_from_zero(server, tmp_path, steps, refused_step, why):
    srv, store = server
    r = _post(srv, [_step(s, n=i + 1) for i, s in enumerate(steps)])
    assert r.status_code == 422
    refused = _lines(tmp_path, "refused")
    assert len(refused) == 1 and f"step {refused_step} " in refused[0]["reason"] and why in refused[0]["reason"]


def test_nothing_is_accepted_after_the_cell_ended(server, tmp_path):
    srv, store = server
    assert _post(srv, [_step(0, n=1), {"n": 2, "kind": "done", "result": {}}]).status_code == 200
    late = _post(srv, [_step(1, n=1)], src="p-page")
    assert late.status_code == 422 and "already ended" in late.json()["refused"][0]["reason"]
    assert store.cells["c1"].steps == 1
    # a late page sample is recorded, but does not make a finished cell incomplete
    assert store.cells["c1"].late == 1 and store.cells["c1"].delivery_problem() is None
    store.end("c1", "failed")
    assert _post(srv, [{"n": 2, "kind": "log", "message": "x"}], src="p-page").status_code == 422


def test_heartbeats_and_steps_are_progress_logs_and_page_memory_are_not(server):
    srv, store = server
    state = store.cells["c1"]
    before = state.last_progress_monotonic
    time.sleep(0.02)
    _post(srv, [{"n": 1, "kind": "log", "message": "x"}, {"n": 2, "kind": "uasm", "bytes": 10}])
    assert state.last_progress_monotonic == before
    _post(srv, [{"n": 3, "kind": "heartbeat", "what": "compiling"}])
    assert state.last_progress_monotonic > before


# ------------------------------------------------------------------------------------ access

def test_without_the_token_nothing_is_read_or_written(server, tmp_path):
    srv, _ = server
    for headers in ({}, {access.TOKEN_HEADER: "wrong"}, {access.TOKEN_HEADER: TOKEN[:-1]}):
        assert _post(srv, [_step()], headers=headers).status_code == 403
        assert httpx.get(f"{srv.url}/api/cells/c1", headers=headers).status_code == 403
    assert httpx.get(f"{srv.url}/").status_code == 403
    assert not (tmp_path / "samples.jsonl").read_text()
    # the token as a query parameter (page URLs, plain GETs) works too
    assert httpx.get(f"{srv.url}/api/cells/c1", params={"token": TOKEN}).json()["cell"] == "c1"
    index = httpx.get(f"{srv.url}/", params={"token": TOKEN})
    assert index.status_code == 200 and f"token={TOKEN}" in index.text


def test_a_post_without_origin_still_needs_the_token(server, tmp_path):
    srv, store = server
    r = _post(srv, [{"n": 1, "kind": "done", "result": {}}], headers={})
    assert r.status_code == 403 and store.cells["c1"].outcome is None


def test_dns_rebinding_host_is_refused(server, tmp_path):
    srv, store = server
    evil = {"host": f"rebind.attacker.example:{srv.port}", "origin": f"http://rebind.attacker.example:{srv.port}"}
    r = _post(srv, [_step()], headers={**AUTH, **evil})
    assert r.status_code == 400
    assert httpx.get(f"{srv.url}/api/cells/c1", headers={**AUTH, **evil}).status_code == 400
    assert httpx.get(f"{srv.url}/web/worker.js", headers=evil).status_code == 400
    assert not (tmp_path / "samples.jsonl").read_text()
    ok = httpx.get(f"http://localhost:{srv.port}/api/cells/c1", headers=AUTH)
    assert ok.status_code == 200


def test_cross_origin_post_is_refused(server):
    srv, _ = server
    r = _post(srv, [_step()], headers={**AUTH, "origin": "http://evil.example"})
    assert r.status_code == 403
    same = _post(srv, [_step()], headers={**AUTH, "origin": srv.url})
    assert same.status_code == 200


def test_only_the_model_and_its_external_data_are_served(tmp_path):
    folder = tmp_path / "home"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"onnx")
    (folder / "model.onnx.data").write_bytes(b"weights")
    (folder / "id_ed25519").write_text("PRIVATE KEY")
    store = SampleStore(tmp_path / "run")
    roots = {"user-model/k/model.onnx": folder / "model.onnx", "user-model/k/model.onnx.data": folder / "model.onnx.data"}
    with ServerThread(create_app(store, roots, token=TOKEN)) as srv:
        got = httpx.get(f"{srv.url}/user-model/k/model.onnx", params={"token": TOKEN})
        assert got.status_code == 200 and got.content == b"onnx"
        assert httpx.get(f"{srv.url}/user-model/k/model.onnx.data", params={"token": TOKEN}).content == b"weights"
        for path in ("/user-model/k/id_ed25519", "/user-model/k/", "/user-model/k/../k/id_ed25519",
                     "/user-model/k/%2e%2e/home/id_ed25519"):
            r = httpx.get(srv.url + path, params={"token": TOKEN})
            assert r.status_code == 404 and b"PRIVATE" not in r.content, path
        assert httpx.get(f"{srv.url}/user-model/k/model.onnx").status_code == 403   # no token
    store.close()


def test_allowed_hosts_and_the_warning_beyond_loopback():
    assert set(access.allowed_hosts("127.0.0.1")) >= {"127.0.0.1", "localhost"}
    assert "rebind.attacker.example" not in access.allowed_hosts("0.0.0.0")
    assert "127.0.0.1" in access.allowed_hosts("0.0.0.0")
    assert access.public_warning("127.0.0.1") is None and access.public_warning("localhost") is None
    assert "beyond this machine" in access.public_warning("0.0.0.0")
    url = access.runner_url("http://127.0.0.1:5", "chromium.decode-loop.fresh.tiny.r0", "a b")
    assert url == "http://127.0.0.1:5/web/runner.html?cell=chromium.decode-loop.fresh.tiny.r0&token=a%20b"
    assert len(access.new_token()) >= 22 and access.new_token() != access.new_token()


# -------------------------------------------------------------------------- sizes and slowness

def test_oversized_body_is_rejected_413(server, tmp_path):
    srv, _ = server
    big = {"src": "w-t", "samples": [{"n": 1, "kind": "log", "message": "x" * 10_000}] * ((MAX_BODY_BYTES // 10_000) + 5)}
    r = httpx.post(f"{srv.url}/api/cells/c1/samples", content=json.dumps(big).encode(),
                   headers={"content-type": "application/json", **AUTH})
    assert r.status_code == 413
    assert not (tmp_path / "samples.jsonl").read_text()


def test_chunked_oversized_body_is_cut_at_the_limit(server, tmp_path):
    srv, _ = server
    chunk = b"x" * 65536

    def body():  # no Content-Length: the server must stop reading at MAX_BODY_BYTES itself
        for _ in range(64):
            yield chunk

    try:
        r = httpx.post(f"{srv.url}/api/cells/c1/samples", content=body(), headers={"content-type": "application/json", **AUTH})
        assert r.status_code == 413
    except httpx.HTTPError:
        pass  # the server may close the connection once it has answered 413
    assert not (tmp_path / "samples.jsonl").read_text()


def test_unknown_cell_is_404(server):
    srv, _ = server
    assert httpx.post(f"{srv.url}/api/cells/nope/samples", json={"src": "w-t", "samples": [_step()]}, headers=AUTH).status_code == 404
    assert httpx.get(f"{srv.url}/api/cells/nope", headers=AUTH).status_code == 404


@pytest.mark.parametrize("path", ["/web/../pyproject.toml", "/web/%2e%2e/pyproject.toml",
                                  "/workloads/../../etc/passwd", "/pyproject.toml", "/harness/server.py",
                                  "/web/..%2fharness%2fserver.py"])
def test_paths_outside_roots_are_404(server, path):
    srv, _ = server
    r = httpx.get(srv.url + path)
    assert r.status_code == 404, (path, r.status_code, r.text[:200])


def test_static_files_are_served_as_javascript_without_a_token(server):
    srv, _ = server
    r = httpx.get(f"{srv.url}/web/worker.js")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/javascript")
    assert "installProbes" in r.text


def _closed_by_server(sock: socket.socket, within_s: float) -> bool:
    sock.settimeout(within_s)
    try:
        return sock.recv(1024) == b"" or True   # EOF, or the 4xx/5xx uvicorn sends before closing
    except TimeoutError:
        return False
    except OSError:
        return True


def test_half_open_connections_are_closed_and_do_not_starve_the_server(tmp_path, monkeypatch):
    monkeypatch.setattr(app_module, "HEAD_TIMEOUT_S", 0.5)
    monkeypatch.setattr(app_module, "MAX_CONNECTIONS", 4)
    store = SampleStore(tmp_path)
    store.register("c1", {"cell": "c1"})
    with ServerThread(create_app(store, token=TOKEN)) as srv:
        socks = []
        for i in range(6):   # more half-open connections than the server serves at once
            s = socket.create_connection(("127.0.0.1", srv.port))
            s.sendall(b"GET /api/cells/c1 HTTP/1.1\r\nHost: 127.0.0.1\r\n")   # the head never ends
            socks.append(s)
        assert all(_closed_by_server(s, 5) for s in socks)
        r = httpx.get(f"{srv.url}/api/cells/c1", headers=AUTH, timeout=5)
        assert r.status_code == 200
        for s in socks:
            s.close()
    store.close()


def test_a_body_that_never_ends_gets_408(tmp_path, monkeypatch):
    monkeypatch.setattr(app_module, "BODY_TIMEOUT_S", 0.5)
    store = SampleStore(tmp_path)
    store.register("c1", {"cell": "c1"})
    with ServerThread(create_app(store, token=TOKEN)) as srv:
        s = socket.create_connection(("127.0.0.1", srv.port))
        s.sendall(f"POST /api/cells/c1/samples HTTP/1.1\r\nHost: 127.0.0.1\r\n{access.TOKEN_HEADER}: {TOKEN}\r\n"
                  "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"src\":".encode())
        s.settimeout(5)
        assert s.recv(1024).startswith(b"HTTP/1.1 408")
        s.close()
    assert not (tmp_path / "samples.jsonl").read_text()
    store.close()


# ------------------------------------------------------------------- generated (hypothesis)

_json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40), st.floats(allow_nan=True, allow_infinity=True),
                       st.text(max_size=20))
_json = st.recursive(_json_leaf, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                          st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                     max_leaves=12)
_TEMPLATES = [
    _step(0), {"kind": "env", "user_agent": "ua", "webgpu": "real"}, {"kind": "log", "message": "m"},
    {"kind": "error", "message": "e"}, {"kind": "skip", "reason": "r"}, {"kind": "done", "result": {}},
    {"kind": "uasm", "bytes": 5}, {"kind": "heartbeat", "what": "w"}, {"kind": "device_lost", "reason": "unknown"},
    {"kind": "uncaptured_error", "message": "m"},
]


@st.composite
def _near_valid(draw):
    """A valid sample of some kind with one field replaced by arbitrary JSON (or dropped)."""
    s = json.loads(json.dumps(draw(st.sampled_from(_TEMPLATES))))
    key = draw(st.sampled_from(sorted(s) + ["n", "t_ms", "kind", "extra", "step"]))
    if draw(st.booleans()):
        s[key] = draw(_json)
    else:
        s.pop(key, None)
    s.setdefault("n", draw(st.integers(1, 50)))
    return s


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory):
    """One server for every generated request; each example posts to a cell of its own. A
    generated batch may start at any ``n``: it waits for the batches ahead of it (that never
    come) only briefly here."""
    d = tmp_path_factory.mktemp("generated")
    store = SampleStore(d)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(app_module, "REORDER_WAIT_S", 0.01)
        with ServerThread(create_app(store, token=TOKEN)) as srv, httpx.Client() as client:
            yield srv, store, d, client
    store.close()


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(samples=st.lists(st.one_of(_near_valid(), _json), min_size=1, max_size=5), src=st.one_of(st.just("w-h"), _json))
def test_generated_batches_never_get_a_5xx_nor_store_anything_invalid(shared_server, samples, src):
    srv, store, d, client = shared_server
    cell = f"g{len(store.cells)}"
    store.register(cell, {"cell": cell})
    size = (d / "samples.jsonl").stat().st_size
    body = json.dumps({"src": src, "samples": samples}, allow_nan=True)
    r = client.post(f"{srv.url}/api/cells/{cell}/samples", content=body.encode(),
                    headers={"content-type": "application/json", **AUTH})
    assert r.status_code in (200, 413, 422), r.text
    with (d / "samples.jsonl").open(encoding="utf-8") as fh:
        fh.seek(size)
        new = fh.read().splitlines()
    for line in new:
        s = json.loads(line, parse_constant=lambda c: pytest.fail(f"{c} in samples.jsonl"))
        assert s["cell"] == cell
        if s["kind"] in ("refused", "gap"):
            continue
        raw = {k: v for k, v in s.items() if k not in ("seq", "cell", "received_s", "src", "queue")}
        check_sample(raw)   # what was kept passes the schema again


def test_a_refused_end_sample_still_ends_the_cell(server, tmp_path):
    srv, store = server
    r = httpx.post(f"{srv.url}/api/cells/c1/samples", headers={"content-type": "application/json", **AUTH},
                   content=b'{"src":"w-t","samples":[{"n":1,"kind":"done","result":{"x":Infinity}}]}')
    assert r.status_code == 422
    state = store.cells["c1"]
    assert state.finished.is_set() and state.outcome == "error"
    assert state.reason.startswith("its done sample was refused: result.x: not a finite number")


# ------------------------------------------------------------ issue 19, item 4: more than one batch in flight

def test_a_batch_that_overtook_an_earlier_one_waits_for_it_and_the_file_keeps_the_senders_order(server, tmp_path,
                                                                                                   monkeypatch):
    srv, store = server
    monkeypatch.setattr(app_module, "REORDER_WAIT_S", 10.0)
    later = {}
    t = __import__("threading").Thread(target=lambda: later.update(r=_post(srv, [_step(s, n=s + 1) for s in range(10, 20)],
                                                                           timeout=30)))
    t.start()          # n 11-20 leaves on its own connection and arrives first
    time.sleep(0.5)
    assert _lines(tmp_path, "step") == []   # held: n 1-10 are still on their way
    first = _post(srv, [_step(s, n=s + 1) for s in range(10)])
    t.join(30)
    assert first.status_code == 200 and later["r"].status_code == 200, later["r"].text
    assert [s["step"] for s in _lines(tmp_path, "step")] == list(range(20))
    assert _lines(tmp_path, "gap") == [] and store.cells["c1"].delivery_problem() is None


def test_a_batch_whose_predecessor_never_comes_is_written_after_the_wait_with_the_gap(server, tmp_path):
    srv, store = server   # REORDER_WAIT_S is 0.3 s in this fixture
    t0 = time.monotonic()
    assert _post(srv, [_step(0, n=1)]).status_code == 200
    r = _post(srv, [_step(3, n=4)])           # n 2-3 were lost (a final 4xx, a crashed sender)
    assert r.status_code == 200 and time.monotonic() - t0 >= 0.3
    gap = _lines(tmp_path, "gap")
    assert [(g["first_n"], g["last_n"]) for g in gap] == [(2, 3)]
    late = _post(srv, [_step(1, n=2), _step(2, n=3)])  # they come after all: a second copy of nothing
    assert late.json()["duplicates"] == 2 and [s["step"] for s in _lines(tmp_path, "step")] == [0, 3]


# ------------------------------------------------------------ issue 23, item 3: sample limits

def test_a_flooding_sender_is_cut_off_with_one_refused_record_and_the_cell_says_so(tmp_path):
    from harness.store.limits import parse

    store = SampleStore(tmp_path, parse(["realm.samples-per-s=20", "realm.samples=5000"]))  # 200 at once, 20/s
    store.register("c1", {"cell": "c1"})
    with ServerThread(create_app(store, token=TOKEN)) as srv, httpx.Client() as client:
        n, answers = 0, []
        for _ in range(40):   # 40 batches × 50 logs = 2,000 samples as fast as they go (bounded)
            batch = [{"n": n + i + 1, "kind": "log", "message": "flood"} for i in range(50)]
            n += 50
            answers.append(client.post(f"{srv.url}/api/cells/c1/samples", json={"src": "p-flood", "samples": batch},
                                       headers=AUTH).status_code)
        done = client.post(f"{srv.url}/api/cells/c1/samples", headers=AUTH,
                           json={"src": "p-flood", "samples": [{"n": n + 1, "kind": "done", "result": {}}]})
    assert set(answers) <= {200, 422} and 422 in answers
    assert done.status_code == 200   # an end sample is never refused for the limits: the cell ends as its worker said
    refused = _lines(tmp_path, "refused")
    assert len(refused) == 1, refused   # one record, the rest counted
    assert "over the sample limits: more than 20 samples/s" in refused[0]["reason"]
    assert "--sample-limit realm.samples-per-s" in refused[0]["reason"]
    logs = len(_lines(tmp_path, "log"))
    state = store.cells["c1"]
    assert logs + state.over_limits == 2000 and logs <= 400 and state.over_limits >= 1600, (logs, state.over_limits)
    problem = state.delivery_problem()
    assert f"{state.over_limits:,} sample(s) over the sample limits refused" in problem and "p-flood" in problem
    assert state.outcome == "done"
    store.close()


def test_bad_sample_limit_options_name_the_valid_keys():
    from harness.store.limits import SampleLimits, parse

    assert parse(["cell.bytes=2GiB", "realm.samples-per-s=1e4"]) == SampleLimits(cell_bytes=2 * 2**30,
                                                                                 realm_samples_per_s=10_000)
    for bad in ("realm.samples", "nope=3", "realm.samples=-1", "realm.samples=0", "realm.samples=3MB", "cell.bytes=lots"):
        with pytest.raises(ValueError, match="--sample-limit"):
            parse([bad])


# ------------------------------------------------------------ issue 23, item 7: integers beyond 2^53

@pytest.mark.parametrize("where, sample", [
    ("token", {**_step(0), "token": 10**40}),
    ("extra.big", {**_step(0), "extra": {"big": -(2**53 + 1)}}),
    ("breakdown[0].x", {"kind": "uasm", "bytes": 5, "breakdown": [{"x": 2**64}]}),
])
def test_integers_beyond_2_53_are_refused_per_sample(server, tmp_path, where, sample):
    srv, store = server
    r = _post(srv, [{**sample, "n": 1}, {"n": 2, "kind": "log", "message": "kept"}])
    assert r.status_code == 422
    refused = _lines(tmp_path, "refused")
    assert len(refused) == 1 and refused[0]["reason"] == f"{where}: an integer beyond 2^53 (no JSON reader holds it exactly)"
    assert [s["message"] for s in _lines(tmp_path, "log")] == ["kept"]   # the rest of the batch is kept
    assert _post(srv, [{**_step(0), "token": 2**53, "n": 3}]).status_code == 200   # 2^53 itself is exact


def test_a_sequence_number_past_the_largest_is_refused_and_moves_nothing(server, tmp_path):
    # n = 2^40 + 5 was refused, yet it moved the sender's sequence: the valid n=1 beside it and
    # every later sample were dropped as duplicates, and a trillion samples were said lost
    srv, store = server
    r = _post(srv, [{**_step(0), "n": (1 << 40) + 5}, {**_step(0), "n": 1}])
    assert r.status_code == 422
    refused = _lines(tmp_path, "refused")
    assert len(refused) == 1 and refused[0]["reason"].startswith("n: the sender's sequence number (an integer from 1 to "
                                                                 "1,099,511,627,776) is 1099511627781"), refused
    assert _post(srv, [{**_step(1), "n": 2}]).status_code == 200
    assert [s["step"] for s in _lines(tmp_path, "step")] == [0, 1]   # both kept: no duplicate, no gap
    assert not _lines(tmp_path, "gap")


# ------------------------------------------------------------ issue 23, item 6: a full disk

def test_a_full_disk_is_a_503_the_sink_retries_and_what_was_written_stays_whole(tmp_path):
    import subprocess

    mnt = tmp_path / "small"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if r.returncode:
        pytest.fail(f"cannot mount a 2 MiB tmpfs ({r.stderr.strip()}): run as root")
    try:
        store = SampleStore(mnt / "run")
        store.register("c1", {"cell": "c1"})
        with ServerThread(create_app(store, token=TOKEN)) as srv:
            assert _post(srv, [_step(0, n=1)]).status_code == 200
            n, statuses = 1, []
            for _ in range(200):   # bounded: 1 MiB of steps per ~30 posts until the disk is full
                batch = [{**_step(n + i, n=n + i + 1), "extra": {"pad": "x" * 900}} for i in range(40)]
                r = _post(srv, batch)
                statuses.append(r.status_code)
                if r.status_code == 503:
                    break
                n += 40
            assert statuses[-1] == 503 and "samples.jsonl: no space left on device" in r.json()["detail"], statuses[-5:]
            assert _post(srv, batch).status_code == 503   # and again: the sink's retry
            assert str(store.full) == f"{mnt / 'run' / 'samples.jsonl'}: no space left on device"
            store.append("c1", [{"kind": "cell_status", "status": "failed", "reason": str(store.full)}])
        lines = (mnt / "run" / "samples.jsonl").read_text().splitlines()
        parsed = [json.loads(x) for x in lines]   # every line whole: a failed write was cut back
        steps = [s["step"] for s in parsed if s["kind"] == "step"]
        assert steps == list(range(len(steps))) and len(steps) == n
        assert parsed[-1]["kind"] == "cell_status"   # from the reserve freed when the disk filled
        store.close()
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)
