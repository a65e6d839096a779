"""FastAPI app that serves the runner page, worker bootstrap, probes and workloads, and takes
samples.

Every response carries ``Cross-Origin-Opener-Policy: same-origin`` and
``Cross-Origin-Embedder-Policy: require-corp`` so pages are cross-origin isolated (HTML spec
§7.1.3; needed for SharedArrayBuffer, threaded wasm and
``performance.measureUserAgentSpecificMemory``).

Routes:
  GET  /                          index of registered cells (for ``webgpu-harness serve``)
  GET  /web/..., /workloads/..., /node_modules/<name>/..., /ort/<version>/...   static files
                                  (404 outside those roots)
  GET  /api/cells/{cell}          the cell's configuration, read by the worker bootstrap
  POST /api/cells/{cell}/samples  a :class:`harness.serve.samples.SampleBatch`; 413 over
                                  ``MAX_BODY_BYTES``, 422 if malformed, 404 unknown cell
"""

from __future__ import annotations

import html
import mimetypes
import socket
import threading
import time
from pathlib import Path

import uvicorn
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import ValidationError

from harness import locations, npm
from harness.serve.samples import MAX_BODY_BYTES, SampleBatch
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


def default_roots() -> dict[str, Path]:
    """:data:`DEFAULT_ROOTS` and ``node_modules/<name>`` for each pinned npm package found
    (harness/npm.py: ./node_modules, a clone's, the per-user cache)."""
    return {**DEFAULT_ROOTS, **npm.served_roots()}


def create_app(store: SampleStore, roots: dict[str, Path] | None = None) -> FastAPI:
    """Build the app around ``store``. ``roots`` maps URL prefixes to folders (default:
    :func:`default_roots`)."""
    app = FastAPI(title="webgpu-harness", docs_url=None, redoc_url=None)

    @app.middleware("http")
    async def isolation(request: Request, call_next):
        if request.method == "POST":
            origin = request.headers.get("origin")
            if origin and origin.split("://", 1)[-1] != request.headers.get("host"):
                return JSONResponse({"detail": "cross-origin sample posts are refused"}, 403, headers=ISOLATION_HEADERS)
            length = request.headers.get("content-length")
            if length is not None and int(length) > MAX_BODY_BYTES:
                return JSONResponse({"detail": f"body over {MAX_BODY_BYTES} bytes"}, 413,
                                    headers=ISOLATION_HEADERS)
        response = await call_next(request)
        response.headers.update(ISOLATION_HEADERS)
        return response

    @app.get("/", response_class=HTMLResponse)
    def index() -> str:
        rows = "".join(
            f'<li><a href="/web/runner.html?cell={html.escape(c)}">{html.escape(c)}</a></li>'
            for c in store.cells
        )
        return f"<!doctype html><title>webgpu-harness</title><h1>Cells</h1><ul>{rows}</ul>"

    @app.get("/api/cells/{cell}")
    def cell_config(cell: str) -> dict:
        if not store.has_cell(cell):
            raise HTTPException(404, f"unknown cell {cell!r}")
        return store.config(cell)

    @app.post("/api/cells/{cell}/samples")
    async def post_samples(cell: str, request: Request) -> dict:
        chunks, size = [], 0
        async for chunk in request.stream():  # bounded even without Content-Length (chunked)
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise HTTPException(413, f"body over {MAX_BODY_BYTES} bytes")
            chunks.append(chunk)
        body = b"".join(chunks)
        if not store.has_cell(cell):
            raise HTTPException(404, f"unknown cell {cell!r}")
        try:
            batch = SampleBatch.model_validate_json(body)
        except ValidationError as exc:
            raise HTTPException(422, exc.errors(include_url=False, include_input=False, include_context=False)) from None
        seq = store.append(cell, [s.model_dump(exclude_none=False) for s in batch.samples])
        return {"seq": seq}

    # longest prefix first: a user workload's workloads/<name> before the built-in workloads/
    for prefix, folder in sorted((roots or default_roots()).items(), key=lambda kv: -len(kv[0])):
        if Path(folder).is_dir():
            app.mount(f"/{prefix}", StaticFiles(directory=folder, follow_symlink=False), name=prefix)
    return app


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago on ``host``."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


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
        config = uvicorn.Config(app, host=host, port=self.port, log_level="warning",
                                access_log=False, lifespan="off", **ssl)
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
