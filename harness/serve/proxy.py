"""Recording reverse proxy in front of a user's app: injects the bootstrap, streams the rest.

The browser opens the app through the proxy (``http://127.0.0.1:PROXY/path`` for
``UPSTREAM/path``). Every request is forwarded to the one upstream origin given at start —
never anywhere else: only the path and query of a request are used, so an absolute-form request
line or a forged Host cannot point it at another server — and the answer is streamed back with
its headers, except:
  - HTML documents and worker scripts (by ``Sec-Fetch-Dest``, see harness/serve/rewrite.py) are
    held, decoded (Content-Encoding gzip or deflate; the request asks the upstream for nothing
    else), up to :data:`INJECT_CAP_BYTES` decoded bytes, and rewritten; Content-Length/Encoding
    are dropped. One that goes past the cap (a huge page, a compression bomb) or comes in an
    encoding the proxy cannot decode is streamed on unchanged, as the upstream sent it, and its
    request record says why it was not injected (``note``): that realm is not instrumented;
  - ``/__webgpu_harness__/...`` is answered by :class:`InjectionCore` (bootstrap, worker
    registry, samples) and never reaches the upstream;
  - hop-by-hop headers (RFC 9110 §7.6.1) are dropped both ways; ``Location`` headers naming the
    upstream origin are turned into the proxy's, and ``Origin``/``Referer`` naming the proxy into
    the upstream's, so the app sees its own origin.
Everything else — COOP/COEP/CORP, CSP, cookies, caching headers, status codes — passes as is.
WebSocket upgrades are not proxied.

Each forwarded request is recorded in :attr:`ReverseProxy.requests` (method, path, status,
Sec-Fetch-Dest, content type, what was injected, ms to response headers, and ``error`` when the
upstream failed: unreachable, or the connection broke mid-body). An upstream failure is never a
traceback: before the answer started it is a 502 with one line; after (while streaming) the
connection to the browser is cut, as the upstream's was, and the record says so
(harness/drive/app_runner.py makes it the cell's reason: "the app's page failed: …").
"""

from __future__ import annotations

import logging
import threading
import time
import zlib
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import Response, StreamingResponse
from starlette.background import BackgroundTask

from harness.serve.access import allowed_hosts, is_loopback
from harness.serve.injection import PREFIX, InjectionCore
from harness.serve.rewrite import DOCUMENT_DESTS, WORKER_DESTS, is_html, is_javascript, looks_like_module, \
    prefix_worker_script, inject_html

#: RFC 9110 §7.6.1 connection-specific headers, plus Host (set by the HTTP client)
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
                        "trailer", "transfer-encoding", "upgrade", "proxy-connection", "host"})
#: request headers dropped on GETs that may be injected
CONDITIONAL = frozenset({"if-none-match", "if-modified-since", "if-match", "if-unmodified-since", "if-range"})
#: response headers that no longer describe an injected body (it is new, decoded, uncacheable)
DROPPED_WHEN_INJECTED = frozenset({"content-length", "content-encoding", "etag", "last-modified",
                                   "cache-control", "expires", "content-md5", "digest"})
#: Most bytes (decoded) of an HTML document or worker script held to inject the bootstrap; past
#: it the response streams on unchanged and that page or worker is not instrumented. An app's
#: page is KiBs, a bundled worker (Transformers.js with onnxruntime-web's glue) a few MiB.
INJECT_CAP_BYTES = 8 << 20
#: Content-Encoding values the proxy decodes (RFC 9110 §8.4.1); what it asks the upstream for
#: on requests it may inject.
DECODED_ENCODINGS = ("", "gzip", "x-gzip", "deflate", "identity")
ACCEPT_ENCODING = "gzip, deflate"


class UpstreamBroke(Exception):
    """The upstream's connection broke while its answer was streamed to the browser: raised to
    cut the browser's connection too (a truncated body must not look complete). Not logged
    (:class:`_QuietUpstream`); the request record holds the error."""


class _QuietUpstream(logging.Filter):
    """Drops uvicorn's traceback for :class:`UpstreamBroke` (already in the request record)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, UpstreamBroke)


_quiet = _QuietUpstream()


class _Decoder:
    """Content-Encoding gzip/deflate decoding with bounded output (a compression bomb never
    expands past what the caller asks for). Raises ValueError on a body that does not decode."""

    def __init__(self, encoding: str):
        enc = encoding.strip().lower()
        self.identity = enc in ("", "identity")
        self._deflate = enc == "deflate"  # gzip and x-gzip otherwise
        self._z = None if self.identity else zlib.decompressobj(16 + zlib.MAX_WBITS if not self._deflate else zlib.MAX_WBITS)
        self._first = True

    def feed(self, data: bytes, room: int) -> tuple[bytes, bool]:
        """Decoded bytes of ``data`` (at most ``room``) and whether more would have come."""
        if self.identity:
            return data[:room], len(data) > room
        try:
            out = self._z.decompress(data, room)
        except zlib.error:
            if self._deflate and self._first:  # raw deflate without the zlib wrapper (RFC 9110 allows neither, servers send both)
                self._z = zlib.decompressobj(-zlib.MAX_WBITS)
                self._first = False
                return self.feed(data, room)
            raise ValueError("the body does not decode as its Content-Encoding says") from None
        self._first = False
        return out, bool(self._z.unconsumed_tail)

    def finish(self, room: int) -> tuple[bytes, bool]:
        if self.identity:
            return b"", False
        try:
            out = self._z.flush() if room > 0 else b""
        except zlib.error:
            raise ValueError("the body does not decode as its Content-Encoding says") from None
        return out[:room], len(out) > room


def parse_upstream(url: str) -> str:
    """``http(s)://host[:port][/...]`` → its origin ``scheme://host:port``. Raises ValueError."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"the app URL must be http:// or https:// with a host, got {url!r}")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host}:{port}"


@dataclass
class RequestRecord:
    method: str
    path: str
    status: int
    dest: str | None
    content_type: str | None
    injected: str | None  # "html", "worker-classic", "worker-module" or None
    ms: float
    t_s: float = field(default=0.0)
    #: why an HTML document or worker script was passed on without the bootstrap ("" otherwise)
    note: str = ""
    #: how the upstream failed ("" when it answered whole)
    error: str = ""
    #: body bytes the upstream sent so far (raw), its Content-Length, whether the body ended
    got: int = 0
    length: str | None = None
    whole: bool = False


def _error_text(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def create_proxy_app(upstream: str, core: InjectionCore, records: list[RequestRecord] | None = None,
                     client: httpx.AsyncClient | None = None, hosts: list[str] | None = None) -> FastAPI:
    """The ASGI app of the proxy for ``upstream`` (an origin; see :func:`parse_upstream`).
    ``hosts``: the Host names it answers (Starlette's TrustedHostMiddleware: any other is a 400,
    so a DNS-rebinding page cannot talk to it); None answers any (tests through ASGI)."""
    from starlette.middleware.trustedhost import TrustedHostMiddleware

    origin = parse_upstream(upstream)
    records = records if records is not None else []
    t0 = time.monotonic()
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    if hosts is not None:
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=hosts)
    holder: dict[str, httpx.AsyncClient] = {}

    def http() -> httpx.AsyncClient:
        if client is not None:
            return client
        if "c" not in holder:  # made on first use, inside the server's event loop
            holder["c"] = httpx.AsyncClient(base_url=origin, follow_redirects=False, trust_env=False,
                                            timeout=httpx.Timeout(30.0, read=None))
        return holder["c"]

    @app.api_route("/{path:path}", methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
    async def forward(request: Request, path: str):
        own = f"{request.url.scheme}://{request.headers.get('host', '')}"
        url_path = request.url.path
        query = request.url.query
        if url_path.startswith(PREFIX):
            body = await request.body()
            status, headers, out = core.handle(request.method, url_path, query, body,
                                               request.headers.get("sec-fetch-dest"))
            return Response(out, status, headers=headers)
        dest = request.headers.get("sec-fetch-dest")
        may_inject = request.method == "GET" and (dest in DOCUMENT_DESTS or dest in WORKER_DESTS or dest is None)
        headers = []
        for k, v in request.headers.items():
            lk = k.lower()
            if lk in HOP_BY_HOP or (may_inject and lk in CONDITIONAL):
                continue  # conditional GETs dropped: a 304 would reuse an earlier injected copy
            if may_inject and lk == "accept-encoding":
                v = ACCEPT_ENCODING  # what the proxy can decode to inject (the browser gets it decoded)
            if lk in ("origin", "referer") and v.startswith(own):
                v = origin + v[len(own):]
            headers.append((k, v))
        # the path as the browser sent it (percent-encoding kept: %2F stays %2F, %2e%2e is not
        # resolved), always under the one upstream origin
        raw = request.scope.get("raw_path") or url_path.encode("utf-8")
        raw_query = request.scope.get("query_string") or b""
        target = raw.decode("latin-1") + (f"?{raw_query.decode('latin-1')}" if raw_query else "")
        body = request.stream() if request.method not in ("GET", "HEAD") else None
        started = time.monotonic()
        req = http().build_request(request.method, httpx.URL(origin).copy_with(raw_path=target.encode("latin-1")),
                                   headers=headers, content=body)
        try:
            resp = await http().send(req, stream=True)
        except httpx.HTTPError as exc:
            error = f"upstream {origin} unreachable ({_error_text(exc)})"
            records.append(RequestRecord(request.method, target, 502, dest, None, None,
                                         round((time.monotonic() - started) * 1000, 2), round(started - t0, 3),
                                         error=error))
            return Response(f"webgpu-harness proxy: {error}", 502, media_type="text/plain")
        ctype = resp.headers.get("content-type")
        out_headers = []
        for k, v in resp.headers.multi_items():
            if k.lower() in HOP_BY_HOP:
                continue
            if k.lower() == "location" and v.startswith(origin):
                v = own + v[len(origin):]
            out_headers.append((k, v))
        # A worker's top-level script is fetched with mode same-origin; the modules it imports
        # have the same destination but mode cors (HTML spec, "fetch a single module script").
        top_level = request.headers.get("sec-fetch-mode") in (None, "same-origin")
        entry = core.take_worker(str(request.url)) if top_level and (dest in WORKER_DESTS or dest is None) else None
        injected = None
        if may_inject and 200 <= resp.status_code < 300:
            if dest in DOCUMENT_DESTS and is_html(ctype):
                injected = "html"
            elif top_level and (dest in WORKER_DESTS or entry) and (is_javascript(ctype) or not ctype):
                injected = "worker"
        record = RequestRecord(request.method, target, resp.status_code, dest, ctype, None,
                               round((time.monotonic() - started) * 1000, 2), round(started - t0, 3),
                               length=resp.headers.get("content-length"))
        records.append(record)
        chunks = resp.aiter_raw()
        if injected is None:
            return _respond(StreamingResponse(_relay(chunks, record, None, resp.headers.get("content-length")), resp.status_code,
                                              background=BackgroundTask(resp.aclose)), out_headers)
        encoding = resp.headers.get("content-encoding", "")
        if encoding.strip().lower() not in DECODED_ENCODINGS:
            record.note = f"not injected: Content-Encoding {encoding!r} is not decoded by the proxy"
            return _respond(StreamingResponse(_relay(chunks, record, None, resp.headers.get("content-length")), resp.status_code,
                                              background=BackgroundTask(resp.aclose)), out_headers)
        try:
            raw, held = await _hold(chunks, _Decoder(encoding), INJECT_CAP_BYTES, record)
        except (httpx.HTTPError, ValueError) as exc:
            await resp.aclose()
            record.status, record.error = 502, f"upstream {origin} failed mid-body ({_error_text(exc)})"
            return Response(f"webgpu-harness proxy: {record.error}", 502, media_type="text/plain")
        if raw is None:  # past the cap: what was held, then the rest, as the upstream sent them
            what = "HTML document" if injected == "html" else "worker script"
            record.note = (f"not injected: the {what} is over the proxy's {INJECT_CAP_BYTES >> 20} MiB injection cap "
                           "(decoded); passed on unchanged, this page or worker is not instrumented")
            return _respond(StreamingResponse(_relay(chunks, record, held, resp.headers.get("content-length")), resp.status_code,
                                              background=BackgroundTask(resp.aclose)), out_headers)
        await resp.aclose()
        if injected == "html":
            out = inject_html(raw, core.bootstrap_url("", {"kind": "page"}))
        else:
            kind = (entry or {}).get("type") or ("module" if looks_like_module(raw.decode("utf-8", "replace")) else "classic")
            hints = {"kind": (entry or {}).get("kind") or (dest if dest in WORKER_DESTS else "worker"),
                     "type": kind, "wid": (entry or {}).get("wid") or ""}
            out = prefix_worker_script(raw, kind, core.bootstrap_url("", hints))
            injected = f"worker-{kind}"
        record.injected = injected
        kept = [(k, v) for k, v in out_headers if k.lower() not in DROPPED_WHEN_INJECTED]
        kept.append(("cache-control", "no-store"))
        return _respond(Response(out, resp.status_code), kept, len(out))

    # An absolute-form request line (GET http://elsewhere/ HTTP/1.1, forward-proxy style) is
    # refused: this proxy talks to one upstream, chosen at start. A plain ASGI layer (not
    # Starlette's BaseHTTPMiddleware, which would turn a cut stream into a traceback).
    app.add_middleware(_OriginFormOnly, origin=origin)
    return app


class _OriginFormOnly:
    def __init__(self, app, origin: str) -> None:
        self.app, self.origin = app, origin

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and not scope.get("raw_path", b"/").startswith(b"/"):
            await Response(f"webgpu-harness proxy: only origin-form requests; this proxy forwards to {self.origin} only",
                           400, media_type="text/plain")(scope, receive, send)
            return
        await self.app(scope, receive, send)


async def _hold(chunks, decoder: _Decoder, cap: int, record: RequestRecord) -> tuple[bytes | None, list[bytes]]:
    """Read ``chunks`` (the upstream's raw body iterator) while its decoded size stays within
    ``cap``: (decoded body, raw chunks) when it fits, (None, raw chunks read so far) when it goes
    past, the rest left in ``chunks`` (memory stays within ``cap`` decoded plus what was read
    raw). Raises httpx errors, ValueError (a body that does not decode)."""
    raw: list[bytes] = []
    out: list[bytes] = []
    size = 0
    async for chunk in chunks:
        raw.append(chunk)
        record.got += len(chunk)  # what a stalled upstream sent is said (app_runner.py)
        piece, more = decoder.feed(chunk, cap - size + 1)
        out.append(piece)
        size += len(piece)
        if more or size > cap:
            return None, raw
    piece, more = decoder.finish(cap - size + 1)
    size += len(piece)
    if more or size > cap:
        return None, raw
    out.append(piece)
    record.whole = True
    return b"".join(out), raw


async def _relay(chunks, record: RequestRecord, held: list[bytes] | None = None, length: str | None = None):
    """The upstream's body as it sent it (``held``: chunks already read from the raw body
    iterator ``chunks``); a connection that breaks midway — an error, or fewer bytes than its
    Content-Length ``length`` said — is recorded and raised as :class:`UpstreamBroke` (the
    browser's is cut too, so a truncated body never looks whole)."""
    sent = 0
    for chunk in held or ():
        sent += len(chunk)
        yield chunk
    try:
        async for chunk in chunks:
            sent += len(chunk)
            record.got = sent
            yield chunk
    except httpx.HTTPError as exc:
        record.error = f"the upstream's connection broke mid-body ({_error_text(exc)}; {sent} bytes passed on)"
        raise UpstreamBroke(record.error) from None
    if length is not None and length.isdigit() and sent < int(length):
        record.error = f"the upstream's connection broke mid-body ({sent} of its {length} bytes came)"
        raise UpstreamBroke(record.error)
    record.whole = True


def _respond(response: Response, pairs: list[tuple[str, str]], length: int | None = None) -> Response:
    """Give ``response`` exactly these headers (repeated names such as Set-Cookie kept)."""
    raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in pairs]
    if length is not None:
        raw.append((b"content-length", str(length).encode()))
    response.raw_headers = raw
    return response


class ReverseProxy:
    """The proxy in a uvicorn thread (context manager). ``url`` is its origin once started;
    :meth:`url_for` maps an app URL onto it. Binds to loopback unless ``allow_remote``.

    Raises ValueError for a non-http(s) upstream or a non-loopback ``host`` without
    ``allow_remote``; RuntimeError if the server does not start in 15 s."""

    def __init__(self, upstream: str, core: InjectionCore, host: str = "127.0.0.1", port: int = 0,
                 allow_remote: bool = False) -> None:
        self.upstream = parse_upstream(upstream)
        if not allow_remote and not is_loopback(host):
            raise ValueError(f"the proxy binds to loopback only (got {host!r}); pass allow_remote to change that")
        import socket

        if not port:
            with socket.socket() as s:
                s.bind((host, 0))
                port = s.getsockname()[1]
        self.host, self.port, self.core = host, port, core
        self.requests: list[RequestRecord] = []
        # the Host names the run's server answers when bound to the same address (harness/serve/access.py)
        app = create_proxy_app(self.upstream, core, self.requests, hosts=allowed_hosts(host))
        self.server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning",
                                                    access_log=False, lifespan="off"))
        logging.getLogger("uvicorn.error").addFilter(_quiet)  # once: the filter is one object
        self.thread = threading.Thread(target=self.server.run, name="webgpu-harness-proxy", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def url_for(self, app_url: str) -> str:
        """``UPSTREAM/path?q`` → ``PROXY/path?q``. Raises ValueError for another origin."""
        if parse_upstream(app_url) != self.upstream:
            raise ValueError(f"{app_url} is not on the proxied origin {self.upstream}")
        parts = urlsplit(app_url)
        return self.url + (parts.path or "/") + (f"?{parts.query}" if parts.query else "")

    def __enter__(self) -> "ReverseProxy":
        self.thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"proxy did not start on {self.host}:{self.port}")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=5)
