"""Recording reverse proxy in front of a user's app: injects the bootstrap, streams the rest.

The browser opens the app through the proxy (``http://127.0.0.1:PROXY/path`` for
``UPSTREAM/path``). Every request is forwarded to the one upstream origin given at start —
never anywhere else: only the path and query of a request are used, so an absolute-form request
line or a forged Host cannot point it at another server — and the answer is streamed back with
its headers, except:
  - HTML documents and worker scripts (by ``Sec-Fetch-Dest``, see harness/serve/rewrite.py) are
    read whole, decoded (Content-Encoding) and rewritten; Content-Length/Encoding are dropped;
  - ``/__webgpu_harness__/...`` is answered by :class:`InjectionCore` (bootstrap, worker
    registry, samples) and never reaches the upstream;
  - hop-by-hop headers (RFC 9110 §7.6.1) are dropped both ways; ``Location`` headers naming the
    upstream origin are turned into the proxy's, and ``Origin``/``Referer`` naming the proxy into
    the upstream's, so the app sees its own origin.
Everything else — COOP/COEP/CORP, CSP, cookies, caching headers, status codes — passes as is.
WebSocket upgrades are not proxied.

Each forwarded request is recorded in :attr:`ReverseProxy.requests` (method, path, status,
Sec-Fetch-Dest, content type, what was injected, ms to response headers).
"""

from __future__ import annotations

import threading
import time
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

    @app.middleware("http")
    async def origin_form_only(request: Request, call_next):
        # An absolute-form request line (GET http://elsewhere/ HTTP/1.1, forward-proxy style)
        # is refused: this proxy talks to one upstream, chosen at start.
        if not request.scope.get("raw_path", b"/").startswith(b"/"):
            return Response(f"webgpu-harness proxy: only origin-form requests; this proxy forwards to {origin} only",
                            400, media_type="text/plain")
        return await call_next(request)

    @app.api_route("/{path:path}", methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
    async def forward(request: Request, path: str):
        own = f"{request.url.scheme}://{request.headers.get('host', '')}"
        url_path = request.url.path
        query = request.url.query
        if url_path.startswith(PREFIX):
            body = await request.body()
            status, headers, out = core.handle(request.method, url_path, query, body)
            return Response(out, status, headers=headers)
        dest = request.headers.get("sec-fetch-dest")
        may_inject = request.method == "GET" and (dest in DOCUMENT_DESTS or dest in WORKER_DESTS or dest is None)
        headers = []
        for k, v in request.headers.items():
            lk = k.lower()
            if lk in HOP_BY_HOP or (may_inject and lk in CONDITIONAL):
                continue  # conditional GETs dropped: a 304 would reuse an earlier injected copy
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
            records.append(RequestRecord(request.method, target, 502, dest, None, None,
                                         round((time.monotonic() - started) * 1000, 2), round(started - t0, 3)))
            return Response(f"webgpu-harness proxy: upstream {origin} unreachable: {type(exc).__name__}: {exc}",
                            502, media_type="text/plain")
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
                               round((time.monotonic() - started) * 1000, 2), round(started - t0, 3))
        records.append(record)
        if injected is None:
            return _respond(StreamingResponse(resp.aiter_raw(), resp.status_code,
                                              background=BackgroundTask(resp.aclose)), out_headers)
        raw = await resp.aread()  # decoded per Content-Encoding
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

    return app


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
