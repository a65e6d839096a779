"""FastAPI app that serves the runner page, worker bootstrap, probes and workloads, and takes
samples.

Every response carries ``Cross-Origin-Opener-Policy: same-origin`` and
``Cross-Origin-Embedder-Policy: require-corp`` so pages are cross-origin isolated (HTML spec
§7.1.3; needed for SharedArrayBuffer, threaded wasm and
``performance.measureUserAgentSpecificMemory``).

Routes:
  GET  /                          index of registered cells by configuration, a link per repetition
                                  (for ``webgpu-harness serve``; token)
  GET  /web/..., /workloads/..., /node_modules/<name>/..., /ort/<version>/...   static files
                                  (404 outside those roots)
  GET  /<prefix>/<name>           single files (``files``: a ``--model`` and the external data
                                  it names, nothing else of its folder; token)
  GET  /api/cells/{cell}          the cell's configuration, read by the worker bootstrap (token)
  POST /api/cells/{cell}/samples  a :class:`harness.serve.samples.SampleBatch` (token); 200
                                  with what was accepted, 422 when the body is not a batch or a
                                  sample was refused (the others are kept), 413 over
                                  ``MAX_BODY_BYTES``, 404 unknown cell, 408 body too slow, 503
                                  when the disk is full (nothing of the batch kept; the sink
                                  retries it)

Batches of one sender may be in flight together (web/probes/sink.js): one that arrives before
the batches ahead of it (its first ``n`` beyond the next one expected) waits up to
:data:`REORDER_WAIT_S` for them, so ``samples.jsonl`` keeps each sender's order; after that it is
written anyway and the store records the gap.

Access (harness/serve/access.py): the run's token on every API call, Host names of the bound
address only (DNS rebinding), cross-origin posts refused. Slow clients: a request head must
arrive within :data:`HEAD_TIMEOUT_S`, a body within :data:`BODY_TIMEOUT_S`, and at most
:data:`MAX_CONNECTIONS` connections are served at once (more get 503, which the sink retries).
"""

from __future__ import annotations

import asyncio
import html
import json
import mimetypes
import re
import socket
import threading
import time
from pathlib import Path
from urllib.parse import parse_qs, unquote

import uvicorn
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import ValidationError
from starlette.middleware.trustedhost import TrustedHostMiddleware
from uvicorn.protocols.http.h11_impl import H11Protocol

from harness import locations, npm
from harness.serve import access
from harness.serve.samples import MAX_BODY_BYTES, SampleBatch
from harness.store.files import DiskFull
from harness.store.store import SampleStore

mimetypes.add_type("text/javascript", ".js")
mimetypes.add_type("text/javascript", ".mjs")
mimetypes.add_type("application/wasm", ".wasm")
mimetypes.add_type("text/plain", ".wgsl")

ISOLATION_HEADERS = {
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "require-corp",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-store",
}

#: URL prefix → folder served under it: the harness's own files (harness/locations.py).
DEFAULT_ROOTS = {
    "web": locations.web_dir(),
    "workloads": locations.workloads_dir(),
}
#: Seconds a client has to send a whole request head (slow-loris guard).
HEAD_TIMEOUT_S = 10.0
#: Seconds a client has to send a whole request body.
BODY_TIMEOUT_S = 30.0
#: Connections (and requests in progress) served at once; uvicorn answers 503 beyond.
MAX_CONNECTIONS = 100
#: Seconds a batch that overtook an earlier one of its sender waits for it (module docstring):
#: longer than the sink's longest back-off (2 s) and a loaded machine's scheduling delays.
REORDER_WAIT_S = 10.0


def default_roots() -> dict[str, Path]:
    """:data:`DEFAULT_ROOTS` and ``node_modules/<name>`` for each pinned npm package found
    (harness/npm.py: ./node_modules, a clone's, the per-user cache)."""
    return {**DEFAULT_ROOTS, **npm.served_roots()}


def configuration_of(config: dict) -> str:
    """``decode-loop/fresh [tiny] max_pending_dispatches=1``: a registered cell's configuration
    (its cell config, harness/drive/runner.py ``cell_config``) without the repetition."""
    p = config.get("params") or {}
    profile = f" [{p['profileName']}]" if p.get("profileName") else ""
    sweep = ",".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in (config.get("sweep") or {}).items())
    return f"{p.get('workload')}/{p.get('variant')}{profile}" + (f" {sweep}" if sweep else "")


def index_page(store: SampleStore, token: str | None) -> str:
    """The serve index: one row per configuration (workload, variant, profile, sweep point) with
    a link per repetition, the tokens, the WebGPU mode and the --param values it was given."""
    groups: dict[str, list[tuple[int, str, dict]]] = {}
    for cell in store.cells:
        config = store.config(cell)
        groups.setdefault(configuration_of(config), []).append((config.get("repetition") or 0, cell, config))
    rows = []
    for name, cells in groups.items():
        first = cells[0][2]
        links = " ".join(f'<a href="{html.escape(access.runner_url("", cell, token))}" title="{html.escape(cell)}">'
                         f'r{rep}</a>' for rep, cell, _ in sorted(cells))
        given = ", ".join(f"{k}={v}" for k, v in (first.get("given_params") or {}).items()) or "defaults"
        webgpu = first.get("webgpu", "auto") + ("" if first.get("probes", True) else ", probes off")
        rows.append(f"<tr><td>{html.escape(name)}</td><td>{links}</td>"
                    f"<td>{html.escape(str((first.get('params') or {}).get('tokens', '')))}</td>"
                    f"<td>{html.escape(webgpu)}</td><td>{html.escape(given)}</td></tr>")
    return ("<!doctype html><meta charset=utf-8><title>webgpu-harness</title>"
            f"<h1>Configurations ({len(groups)}; {len(store.cells)} cells)</h1>"
            "<p>Open each repetition once; its samples go to the run folder of <code>webgpu-harness serve</code>.</p>"
            "<table border=1 cellpadding=4><tr><th>configuration</th><th>repetitions</th><th>tokens</th>"
            "<th>WebGPU</th><th>--param</th></tr>" + "".join(rows) + "</table>")


def _token_of(request: Request) -> str | None:
    return request.headers.get(access.TOKEN_HEADER) or request.query_params.get(access.TOKEN_PARAM)


def create_app(store: SampleStore, roots: dict[str, Path] | None = None, token: str | None = None,
               hosts: list[str] | None = None) -> FastAPI:
    """Build the app around ``store``. ``roots`` maps URL prefixes to folders (served whole;
    default: :func:`default_roots`) or to single files (served alone, with the token);
    ``token``: the run's token (None: no token asked, for tests of other things); ``hosts``:
    Host names answered (default: loopback's)."""
    app = FastAPI(title="webgpu-harness", docs_url=None, redoc_url=None)

    def refuse(status: int, detail: str) -> JSONResponse:
        return JSONResponse({"detail": detail}, status, headers=ISOLATION_HEADERS)

    @app.middleware("http")
    async def isolation(request: Request, call_next):
        if request.method == "POST":
            origin = request.headers.get("origin")
            if origin and origin.split("://", 1)[-1] != request.headers.get("host"):
                return refuse(403, "cross-origin sample posts are refused")
            length = request.headers.get("content-length")
            if length is not None and (not length.isdigit() or int(length) > MAX_BODY_BYTES):
                return refuse(413, f"body over {MAX_BODY_BYTES} bytes")
        guarded = request.url.path.startswith("/api/") or request.url.path == "/" or request.url.path in files
        if guarded and not access.token_ok(_token_of(request), token):
            return refuse(403, f"missing or wrong token (the runner page's URL carries it as ?{access.TOKEN_PARAM}=)")
        response = await call_next(request)
        response.headers.update(ISOLATION_HEADERS)
        return response

    @app.get("/", response_class=HTMLResponse)
    def index() -> str:
        return index_page(store, token)

    @app.get("/api/cells/{cell}")
    def cell_config(cell: str) -> dict:
        if not store.has_cell(cell):
            raise HTTPException(404, f"unknown cell {cell!r}")
        return store.config(cell)

    files: dict[str, Path] = {}
    # longest prefix first: a user workload's workloads/<name> before the built-in workloads/
    for prefix, target in sorted((roots or default_roots()).items(), key=lambda kv: -len(kv[0])):
        target = Path(target)
        if target.is_file():
            files[f"/{prefix.strip('/')}"] = target
        elif target.is_dir():
            app.mount(f"/{prefix}", StaticFiles(directory=target, follow_symlink=False), name=prefix)

    if files:
        @app.get("/{path:path}", include_in_schema=False)
        def single_file(path: str):
            target = files.get(f"/{path}")
            if target is None:
                raise HTTPException(404, "not found")
            return FileResponse(target)

    # sample posts are answered by a plain ASGI layer before the per-request middleware and the
    # router: on a loaded machine each extra hop of the event loop costs a wait for the CPU and
    # the GIL, which is what delayed delivery (issue 19)
    app.add_middleware(SamplePosts, store=store, token=token)
    # outermost: a Host of another name (DNS rebinding) never reaches a route
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=hosts or access.allowed_hosts("127.0.0.1"))
    return app


_SAMPLES_PATH = re.compile(r"^/api/cells/([^/]+)/samples$")


class SamplePosts:
    """``POST /api/cells/{cell}/samples`` as one plain ASGI handler (the module docstring's
    contract: token, same origin, body cap and deadline, the batch envelope, the reorder wait,
    the store's answer); every other request goes on to ``app``."""

    def __init__(self, app, store: SampleStore, token: str | None) -> None:
        self.app, self.store, self.token = app, store, token
        #: (cell, sender) → set when a batch of that sender was written (wakes batches waiting their turn)
        self.turns: dict[tuple[str, str], asyncio.Event] = {}

    async def __call__(self, scope, receive, send) -> None:
        m = _SAMPLES_PATH.match(scope.get("path", "")) if scope["type"] == "http" else None
        if m is None or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        status, body = await self.handle(unquote(m.group(1)), scope, receive)
        if status is None:
            return  # the client went away mid-body: nothing to answer
        raw = json.dumps(body, separators=(",", ":"), default=str).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode())]
        headers += [(k.lower().encode(), v.encode()) for k, v in ISOLATION_HEADERS.items()]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": raw})

    async def handle(self, cell: str, scope, receive) -> tuple[int | None, dict]:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        origin = headers.get("origin")
        if origin and origin.split("://", 1)[-1] != headers.get("host"):
            return 403, {"detail": "cross-origin sample posts are refused"}
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY_BYTES):
            return 413, {"detail": f"body over {MAX_BODY_BYTES} bytes"}
        given = headers.get(access.TOKEN_HEADER.lower())
        if given is None:
            given = next(iter(parse_qs(scope.get("query_string", b"").decode("latin-1")).get(access.TOKEN_PARAM, [])), None)
        if not access.token_ok(given, self.token):
            return 403, {"detail": f"missing or wrong token (the runner page's URL carries it as ?{access.TOKEN_PARAM}=)"}
        chunks, size = [], 0
        try:
            async with asyncio.timeout(BODY_TIMEOUT_S):
                while True:  # bounded even without Content-Length (chunked)
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return None, {}  # the page went away mid-body (closed, crashed): nothing was received
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > MAX_BODY_BYTES:
                        return 413, {"detail": f"body over {MAX_BODY_BYTES} bytes"}
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            return 408, {"detail": f"body not received within {BODY_TIMEOUT_S:g} s"}
        raw = b"".join(chunks)
        if not self.store.has_cell(cell):
            return 404, {"detail": f"unknown cell {cell!r}"}
        try:
            batch = SampleBatch.model_validate_json(raw)
        except ValidationError as exc:
            return 422, {"detail": exc.errors(include_url=False, include_input=False, include_context=False)}
        await self.in_turn(cell, batch.src, batch.samples)
        try:
            result = self.store.append_batch(cell, batch.src, batch.samples, batch.queue, nbytes=len(raw))
        except DiskFull as exc:  # nothing kept: the sink retries (503), the runner ends the cell
            return 503, {"detail": str(exc)}
        finally:
            turn = self.turns.pop((cell, batch.src), None)
            if turn is not None:
                turn.set()
        return (422 if result["refused"] else 200), result

    async def in_turn(self, cell: str, src: str, samples: list) -> None:
        """Wait (up to :data:`REORDER_WAIT_S`) until the batches of ``src`` ahead of this one
        were written: its first ``n`` is the next one the store expects, or lower."""
        ns = [s.get("n") for s in samples if isinstance(s, dict) and isinstance(s.get("n"), int)]
        if not ns:
            return
        first = min(ns)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + REORDER_WAIT_S
        while self.store.expected_n(cell, src) < first:
            left = deadline - loop.time()
            if left <= 0:
                return
            turn = self.turns.setdefault((cell, src), asyncio.Event())
            try:
                async with asyncio.timeout(left):
                    await turn.wait()
            except TimeoutError:
                return


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago on ``host``."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request head: a connection that has not
    sent a whole head :data:`HEAD_TIMEOUT_S` after it opened (or after its last response) is
    closed, so half-open connections do not pile up (uvicorn's own keep-alive timeout covers
    only idle connections between requests)."""

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_deadline()

    def _arm_head_deadline(self) -> None:
        cycle = self.cycle
        self._head_timer = self.loop.call_later(HEAD_TIMEOUT_S, lambda: self._head_deadline(cycle))

    def _head_deadline(self, cycle_at_arm) -> None:
        waiting = self.cycle is cycle_at_arm and (self.cycle is None or self.cycle.response_complete)
        if waiting and not self.transport.is_closing():
            self.transport.close()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm_head_deadline()

    def connection_lost(self, exc) -> None:
        timer = getattr(self, "_head_timer", None)
        if timer is not None:
            timer.cancel()
        super().connection_lost(exc)


class ServerThread:
    """Runs the app with uvicorn in a daemon thread. Use as a context manager.

    Raises ``RuntimeError`` if the server does not start within ``timeout_s``.
    """

    def __init__(self, app: FastAPI, host: str = "127.0.0.1", port: int = 0, timeout_s: float = 10,
                 tls: tuple[Path, Path] | None = None):
        """``tls``: (certificate, private key) PEM files to serve https (harness/serve/tls.py)."""
        self.host = host
        self.port = port or free_port(host)
        self.timeout_s = timeout_s
        self.scheme = "https" if tls else "http"
        ssl = {"ssl_certfile": str(tls[0]), "ssl_keyfile": str(tls[1])} if tls else {}
        config = uvicorn.Config(app, host=host, port=self.port, log_level="warning", access_log=False,
                                lifespan="off", http=GuardedH11Protocol, ws="none",
                                limit_concurrency=MAX_CONNECTIONS, timeout_keep_alive=5, **ssl)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="harness-server", daemon=True)

    @property
    def url(self) -> str:
        """Base URL for a browser on this machine (loopback when bound to every interface)."""
        from harness.serve.urls import local_base

        return local_base(self.scheme, self.host, self.port)

    def __enter__(self) -> "ServerThread":
        self.thread.start()
        deadline = time.monotonic() + self.timeout_s
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"server did not start on {self.host}:{self.port}")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=5)
