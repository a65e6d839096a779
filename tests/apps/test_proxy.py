"""harness/serve/proxy.py and harness/serve/injection.py over real HTTP (no browser): the
proxy in front of the test-app server, answered byte for byte."""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
import zlib

import httpx
import psutil
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse, Response, StreamingResponse

from harness.serve.injection import MAX_BODY_BYTES, InjectConfig, InjectionCore, check_step_on
from harness.serve.proxy import ReverseProxy, parse_upstream
from server import Served, create_app

CSP = "script-src 'self'; worker-src 'self' blob:"


@pytest.fixture(scope="module")
def proxied():
    """The test apps (COOP/COEP + a CSP) behind the proxy: (app server url, proxy, core)."""
    core = InjectionCore(InjectConfig())
    with Served(create_app(isolated=True, csp=CSP)) as srv, ReverseProxy(srv.url, core) as proxy:
        yield srv.url, proxy, core


def get(url: str, **headers) -> httpx.Response:
    return httpx.get(url, headers=headers, timeout=30)


def test_html_document_gets_the_bootstrap_and_keeps_its_headers(proxied):
    base, proxy, _ = proxied
    direct = get(f"{base}/main-thread/", **{"sec-fetch-dest": "document"})
    via = get(f"{proxy.url}/main-thread/", **{"sec-fetch-dest": "document"})
    tag = b'<script src="/__webgpu_harness__/bootstrap.js?kind=page"></script>'
    assert via.content == direct.content.replace(b"<head>", b"<head>" + tag, 1)
    for h in ("cross-origin-opener-policy", "cross-origin-embedder-policy", "content-security-policy"):
        assert via.headers[h] == direct.headers[h]
    assert via.headers["content-length"] == str(len(via.content))
    assert proxy.requests[-1].injected == "html"


def test_everything_else_passes_byte_for_byte(proxied):
    base, proxy, _ = proxied
    for path, dest in [("/models/qwen2-tiny/onnx/model.onnx", "empty"), ("/shared/compute.js", "script"),
                       ("/main-thread/", "empty"), ("/node_modules/onnxruntime-web/dist/ort.webgpu.min.js", "script")]:
        direct, via = get(base + path, **{"sec-fetch-dest": dest}), get(proxy.url + path, **{"sec-fetch-dest": dest})
        assert via.status_code == direct.status_code == 200
        assert via.content == direct.content, path
        assert via.headers["content-type"] == direct.headers["content-type"]
    assert get(proxy.url + "/nope.js").status_code == 404


def test_worker_scripts_get_the_registered_type(proxied):
    base, proxy, core = proxied
    top = {"sec-fetch-dest": "worker", "sec-fetch-mode": "same-origin"}
    src = get(f"{base}/nested/outer.js").content
    # registered as a module by the Worker wrapper (synchronous POST before the fetch)
    r = httpx.post(f"{proxy.url}/__webgpu_harness__/worker",
                   json={"url": f"{proxy.url}/nested/outer.js", "type": "module", "kind": "worker", "wid": "w1",
                         "token": core.token})
    assert r.status_code == 204
    via = get(f"{proxy.url}/nested/outer.js", **top)
    assert via.content == b'import "/__webgpu_harness__/bootstrap.js?kind=worker&type=module&wid=w1";' + src
    assert "etag" not in via.headers and via.headers["cache-control"] == "no-store"
    # unregistered: the type is guessed from the text (this one is classic)
    via = get(f"{proxy.url}/nested/inner.js", **top)
    assert via.content.startswith(b'importScripts("/__webgpu_harness__/bootstrap.js?kind=worker&type=classic");')
    # a module imported by a module worker has dest worker but mode cors: left alone
    dep = get(f"{proxy.url}/shared/compute.js", **{"sec-fetch-dest": "worker", "sec-fetch-mode": "cors"})
    assert dep.content == get(f"{base}/shared/compute.js").content


def test_bootstrap_and_samples_are_answered_by_the_proxy(proxied):
    _, proxy, core = proxied
    # as a worker's importScripts loads it (Sec-Fetch-Dest: script; see the next test for fetch())
    js = get(f"{proxy.url}/__webgpu_harness__/bootstrap.js?kind=worker&type=classic&wid=abc", **{"sec-fetch-dest": "script"})
    assert js.status_code == 200 and js.headers["content-type"].startswith("text/javascript")
    assert js.headers["cross-origin-embedder-policy"] == "require-corp"  # WebKitGTK, isolated module workers
    assert js.text.startswith("(function __webgpuHarnessBootstrap(config, scope) {")
    assert '"realm": {"kind": "worker", "type": "classic", "wid": "abc"}' in js.text
    assert '"stepOn": "mapAsync"' in js.text
    assert f'"token": "{core.token}"' in js.text  # every realm's bootstrap carries the run's token
    n = len(core.samples)
    samples = f"{proxy.url}/__webgpu_harness__/samples"
    ok = httpx.post(samples, json={"token": core.token, "samples": [{"kind": "step", "step": 0}]})
    assert ok.status_code == 204 and core.samples[n]["kind"] == "step" and "received_s" in core.samples[n]
    assert httpx.post(samples, content=b"{").status_code == 400
    assert httpx.post(samples, json={"token": core.token, "samples": [{"no": "kind"}]}).status_code == 400
    big = json.dumps({"token": core.token, "samples": [{"kind": "log", "message": "x" * MAX_BODY_BYTES}]})
    assert httpx.post(samples, content=big).status_code == 413
    # forged: without the token, with another, or as a worker registration: refused, nothing kept
    forged = {"samples": [{"kind": "device", "realm": "deadbeef", "n": 1}] + [
        {"kind": "step", "step": i, "realm": "deadbeef", "n": i + 2} for i in range(40)]}
    assert httpx.post(samples, json=forged).status_code == 403
    assert httpx.post(samples, json={**forged, "token": "x" * len(core.token)}).status_code == 403
    assert httpx.post(f"{proxy.url}/__webgpu_harness__/worker", json={"url": f"{proxy.url}/x.js"}).status_code == 403
    assert len(core.samples) == n + 1


def test_the_bootstrap_and_its_token_are_not_readable_by_the_apps_own_scripts(proxied):
    # issue 23: a page read the token out of the bootstrap with fetch() and flooded the run.
    # A page's fetch/XHR is Sec-Fetch-Dest "empty" (a header no script can set): refused, no token
    _, proxy, core = proxied
    url = f"{proxy.url}/__webgpu_harness__/bootstrap.js?kind=page"
    for dest in ("empty", None, "document", "iframe", "image"):
        r = get(url, **({"sec-fetch-dest": dest} if dest else {}))
        assert r.status_code == 403, dest
        assert core.token not in r.text and "script loads only" in r.text
    for dest in ("script", "worker", "sharedworker", "serviceworker"):  # what runs it, never hands it over
        r = get(url, **{"sec-fetch-dest": dest})
        assert r.status_code == 200 and f'"token": "{core.token}"' in r.text, dest


def test_the_proxy_answers_only_loopback_host_names(proxied):
    # a page elsewhere that rebinds its DNS name to 127.0.0.1 sends its own Host: refused
    _, proxy, core = proxied
    assert get(f"{proxy.url}/main-thread/", host="evil.example").status_code == 400
    r = httpx.post(f"{proxy.url}/__webgpu_harness__/samples", headers={"host": "evil.example"},
                   json={"token": core.token, "samples": [{"kind": "log", "message": "x", "n": 1}]})
    assert r.status_code == 400
    assert get(f"http://localhost:{proxy.port}/main-thread/").status_code == 200


def test_an_absolute_form_request_is_refused(proxied):
    base, proxy, _ = proxied
    n = len(proxy.requests)
    with socket.create_connection((proxy.host, proxy.port), timeout=10) as s:
        s.sendall(b"GET http://example.invalid/main-thread/ HTTP/1.1\r\nHost: example.invalid\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    assert data.startswith(b"HTTP/1.1 400") and b"only origin-form requests" in data
    assert len(proxy.requests) == n  # nothing was forwarded


def test_redirects_cookies_and_encodings_pass():
    app = FastAPI()

    @app.get("/go")
    def go(request: Request):
        return RedirectResponse(f"{request.url.scheme}://{request.headers['host']}/there", 302)

    @app.get("/cookies")
    def cookies():
        r = Response("ok")
        r.set_cookie("a", "1")
        r.set_cookie("b", "2")
        return r

    @app.get("/page")
    def page():
        return Response(gzip.compress(b"<html><head></head>hi</html>"), media_type="text/html",
                        headers={"content-encoding": "gzip"})

    @app.get("/{rest:path}")
    def echo(request: Request):  # the path exactly as it reached the upstream
        return Response(request.scope["raw_path"] + b"?" + request.scope["query_string"])

    core = InjectionCore()
    with Served(app) as up, ReverseProxy(up.url, core) as proxy:
        # paths pass as the browser sent them: encoded slashes and dots are not decoded, a
        # leading // is not read as a host
        for path in ("/%40scope%2Fpkg/index.js?v=1", "/%2e%2e/%2e%2e/etc/passwd?", "//evil.example/x.json?a=%20b"):
            with socket.create_connection((proxy.host, proxy.port), timeout=10) as s:
                s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{proxy.port}\r\nConnection: close\r\n\r\n".encode())
                data = b""
                while chunk := s.recv(65536):
                    data += chunk
            assert data.split(b"\r\n\r\n", 1)[1] == path.encode(), (path, data[-200:])
        r = httpx.get(f"{proxy.url}/go", follow_redirects=False)
        assert r.status_code == 302 and r.headers["location"] == f"{proxy.url}/there"
        r = httpx.get(f"{proxy.url}/cookies")
        assert r.headers.get_list("set-cookie") == ["a=1; Path=/; SameSite=lax", "b=2; Path=/; SameSite=lax"]
        raw = httpx.get(f"{proxy.url}/page", headers={"accept-encoding": "gzip"})  # passes encoded
        assert raw.headers["content-encoding"] == "gzip" and b"__webgpu_harness__" not in raw.content
        doc = httpx.get(f"{proxy.url}/page", headers={"accept-encoding": "gzip", "sec-fetch-dest": "document"})
        assert "content-encoding" not in doc.headers  # decoded, injected
        assert doc.content == b'<html><head><script src="/__webgpu_harness__/bootstrap.js?kind=page"></script></head>hi</html>'


def test_bad_upstreams_and_binds_are_refused():
    core = InjectionCore()
    with pytest.raises(ValueError, match="http:// or https://"):
        ReverseProxy("ftp://127.0.0.1/", core)
    with pytest.raises(ValueError, match="loopback"):
        ReverseProxy("http://127.0.0.1:1/", core, host="0.0.0.0")
    assert parse_upstream("http://localhost/app/?x=1") == "http://localhost:80"
    with ReverseProxy("http://127.0.0.1:9/", core) as proxy:  # nothing listens on the discard port
        r = httpx.get(proxy.url + "/")
        assert r.status_code == 502 and "unreachable" in r.text
        with pytest.raises(ValueError, match="not on the proxied origin"):
            proxy.url_for("http://127.0.0.2:9/")


@pytest.mark.parametrize("spec", ["mapAsync", "mapAsync:3", "mark:token", "console:^tok \\d+", "interval:250"])
def test_step_on_forms(spec):
    assert check_step_on(spec) == spec


@pytest.mark.parametrize("spec", ["", "mapasync", "mapAsync:0", "interval:0", "interval:x", "console:(", "every:3"])
def test_bad_step_on_names_the_valid_forms(spec):
    with pytest.raises(ValueError, match="mapAsync, mapAsync:N, mark:NAME, console:REGEX or interval:MS|bad regular"):
        check_step_on(spec)


# ------------------------------------------------------------ issue 23, item 2: the proxy streams

HUGE = 64 << 20   # an HTML document 8× the injection cap
BOMB = 256 << 20  # what a ~0.25 MB gzip page expands to


def _bomb() -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip
    zeros = bytes(1 << 20)
    return c.compress(b"<html><head></head><body>") + b"".join(c.compress(zeros) for _ in range(BOMB >> 20)) + c.flush()


@pytest.fixture(scope="module")
def hostile_upstream():
    """An upstream with a huge page, a gzip bomb, and pages whose connection breaks mid-body."""
    bomb = _bomb()
    app = FastAPI()
    chunk = b"<p>" + b"x" * ((1 << 20) - 8) + b"</p>\n"  # 1 MiB

    @app.get("/huge")
    def huge():
        return StreamingResponse(iter([b"<html><head></head><body>"] + [chunk] * (HUGE >> 20)), media_type="text/html")

    @app.get("/small-gzip")
    def small_gzip():  # a gzip document within the injection cap once inflated (1 MiB)
        return Response(gzip.compress(b"<html><head></head><body>" + b"z" * (1 << 20)), media_type="text/html",
                        headers={"content-encoding": "gzip"})

    @app.get("/bomb")
    def bomb_page():
        return Response(bomb, media_type="text/html", headers={"content-encoding": "gzip"})

    broken = socket.socket()
    broken.bind(("127.0.0.1", 0))
    broken.listen(8)

    def serve_broken():  # answers 200 with Content-Length 100000, sends 1000 bytes, closes
        while True:
            try:
                conn, _ = broken.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                kind = b"text/html"
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: " + kind + b"\r\nContent-Length: 100000\r\n\r\n"
                             + b"<html>" + b"y" * 994)

    threading.Thread(target=serve_broken, daemon=True).start()
    with Served(app) as up:
        yield up.url, bomb, f"http://127.0.0.1:{broken.getsockname()[1]}"
    broken.close()


def _rss() -> int:
    return psutil.Process().memory_info().rss


def _through(url: str, dest: str) -> tuple[int, bytes | None, int]:
    """(status, body — None when the connection broke —, peak RSS growth) of one GET through the proxy."""
    before, peak, got = _rss(), 0, []
    try:
        with httpx.stream("GET", url, headers={"sec-fetch-dest": dest, "accept-encoding": "gzip"}, timeout=60) as r:
            kept = 0
            for part in r.iter_raw():
                if kept < (1 << 20):  # keep the first MiB only
                    got.append(part)
                    kept += len(part)
                peak = max(peak, _rss() - before)
            status = r.status_code
            size = r.num_bytes_downloaded
    except httpx.HTTPError:
        return -1, None, peak
    return status, (b"".join(got), size), peak


def test_a_huge_page_and_a_gzip_bomb_stream_through_unchanged_in_bounded_memory(hostile_upstream):
    # issue 23: a 512 MB page took the proxy from 60 to 1,414 MB, a 0.5 MB gzip bomb to 2,353 MB
    from harness.serve.proxy import INJECT_CAP_BYTES

    base, bomb, _ = hostile_upstream
    with ReverseProxy(base, InjectionCore()) as proxy:
        status, (head, size), peak = _through(f"{proxy.url}/huge", "document")
        assert status == 200 and size == len(b"<html><head></head><body>") + HUGE
        assert b"__webgpu_harness__" not in head  # streamed as sent: this page is not instrumented
        rec = proxy.requests[-1]
        assert rec.injected is None and "over the proxy's 8 MiB injection cap" in rec.note and not rec.error
        assert peak < INJECT_CAP_BYTES + (24 << 20), f"RSS grew {peak >> 20} MiB for a {HUGE >> 20} MiB page"
        status, (head, size), peak = _through(f"{proxy.url}/bomb", "document")
        assert status == 200 and size == len(bomb)  # the gzip bytes as sent (the browser inflates them)
        assert head == bomb[: len(head)]
        rec = proxy.requests[-1]
        assert rec.injected is None and "injection cap" in rec.note
        assert peak < INJECT_CAP_BYTES + (24 << 20), f"RSS grew {peak >> 20} MiB for a {BOMB >> 20} MiB bomb"
        # within the cap a gzip document is still decoded and injected
        r = get(f"{proxy.url}/small-gzip", **{"sec-fetch-dest": "document"})
        assert r.status_code == 200 and "__webgpu_harness__" in r.text and r.text.endswith("z" * 1000)
        rec = proxy.requests[-1]
        assert rec.injected is not None and not rec.error, (rec.injected, rec.note, rec.error)


def test_an_upstream_that_dies_mid_page_is_a_recorded_error_never_a_traceback(hostile_upstream, capfd):
    # issue 23: an upstream that died mid-page gave a 500 with tracebacks on the console
    _, _, broken = hostile_upstream
    with ReverseProxy(broken, InjectionCore()) as proxy:
        r = get(f"{proxy.url}/index.html", **{"sec-fetch-dest": "document"})  # held to inject: a 502
        assert r.status_code == 502 and "failed mid-body" in r.text
        assert proxy.requests[-1].status == 502 and "failed mid-body" in proxy.requests[-1].error
        status, body, _ = _through(f"{proxy.url}/app.js", "script")  # streamed: the connection is cut too
        assert status == -1 or (body is not None and body[1] < 100000)
        deadline = time.monotonic() + 5
        while not proxy.requests[-1].error and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "connection broke mid-body" in proxy.requests[-1].error
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception in ASGI application" not in err, err[-2000:]


def test_the_proxy_records_how_much_of_a_body_came_and_whether_it_ended(proxied):
    # an upstream that sends its headers and 50 of 100,000 bytes, then nothing: the record says
    # so while the body is awaited (the app runner names the stall when the page load gives up)
    base, proxy, _ = proxied
    get(f"{proxy.url}/main-thread/", **{"sec-fetch-dest": "document"})
    whole = proxy.requests[-1]
    assert whole.whole and whole.got > 0 and not whole.error
    upstream = socket.socket()
    upstream.bind(("127.0.0.1", 0))
    upstream.listen(4)
    held = []

    def stall():
        conn, _ = upstream.accept()
        held.append(conn)
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n" + b"y" * 50)

    threading.Thread(target=stall, daemon=True).start()
    with ReverseProxy(f"http://127.0.0.1:{upstream.getsockname()[1]}", InjectionCore(InjectConfig())) as p:
        with pytest.raises(httpx.ReadTimeout):
            httpx.get(f"{p.url}/", headers={"sec-fetch-dest": "document"}, timeout=2)
        (r,) = p.requests
        assert (r.status, r.got, r.length, r.whole, r.error) == (200, 50, "100000", False, "")
        for c in held:
            c.close()
    upstream.close()
