#!/usr/bin/env python3
"""A plain static server for the test apps: what a user's own app server would be.

Serves ``tests/apps/`` at ``/`` and the repo's ``node_modules/`` at ``/node_modules/`` (the pinned
``@huggingface/transformers`` and ``onnxruntime-web``). Knows nothing about the harness: the apps
run unmodified when opened here directly, and the injection (proxy or Chromium route) sits in
front of it.

    .venv/bin/python tests/apps/server.py --port 8100                 # no isolation headers
    .venv/bin/python tests/apps/server.py --port 8100 --isolated      # COOP/COEP (crossOriginIsolated)
    .venv/bin/python tests/apps/server.py --port 8100 --isolated --csp "script-src 'self'; worker-src 'self' blob:"

App pages: /transformers/, /ort-classic/, /ort-blob/, /main-thread/, /nested/, /eager-module/,
/eager-blob/, /no-device/, /interactive/, /render/, /page-and-worker/, /data-worker/, /frames/,
/throws/, /device-again/.
"""

from __future__ import annotations

import argparse
import mimetypes
import socket
import threading
import time
from pathlib import Path

import uvicorn
from fastapi import FastAPI, Request
from fastapi.staticfiles import StaticFiles

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

mimetypes.add_type("text/javascript", ".js")
mimetypes.add_type("text/javascript", ".mjs")
mimetypes.add_type("application/wasm", ".wasm")

#: COOP/COEP as a cross-origin-isolated app serves them (HTML spec §7.1.3, "cross-origin isolation")
ISOLATION_HEADERS = {
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "require-corp",
    "Cross-Origin-Resource-Policy": "same-origin",
}

#: The app pages, each a folder under tests/apps/ with an index.html.
APPS = ("transformers", "ort-classic", "ort-blob", "main-thread", "nested", "eager-module", "eager-blob", "no-device",
        "page-and-worker", "data-worker", "frames", "throws", "device-again")
#: Apps that draw instead of computing (steps on ``performance.mark('frame')``, not on mapAsync).
RENDER_APPS = ("render",)


def create_app(isolated: bool = False, csp: str | None = None) -> FastAPI:
    """The static app server. ``isolated`` adds COOP/COEP/CORP; ``csp`` sets a
    Content-Security-Policy header on every response."""
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)

    @app.middleware("http")
    async def headers(request: Request, call_next):
        response = await call_next(request)
        response.headers["Cache-Control"] = "no-store"
        if isolated:
            response.headers.update(ISOLATION_HEADERS)
        if csp:
            response.headers["Content-Security-Policy"] = csp
        return response

    app.mount("/node_modules", StaticFiles(directory=REPO / "node_modules"), name="node_modules")
    app.mount("/", StaticFiles(directory=HERE, html=True), name="apps")
    return app


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class Served:
    """Runs an ASGI app with uvicorn in a daemon thread (context manager); ``url`` once started."""

    def __init__(self, app, host: str = "127.0.0.1", port: int = 0):
        self.host, self.port = host, port or free_port(host)
        self.server = uvicorn.Server(uvicorn.Config(app, host=host, port=self.port, log_level="warning",
                                                    access_log=False, lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> "Served":
        self.thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"server did not start on {self.host}:{self.port}")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=5)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8100)
    ap.add_argument("--isolated", action="store_true", help="send COOP/COEP/CORP")
    ap.add_argument("--csp", help="Content-Security-Policy header value")
    args = ap.parse_args()
    print(f"apps at http://{args.host}:{args.port}/ : " + ", ".join(f"/{a}/" for a in APPS + RENDER_APPS))
    uvicorn.run(create_app(args.isolated, args.csp), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
