"""Chromium injection paths that were tried and NOT chosen, kept to re-measure the evidence
(tests/apps/prove_injection.py --paths chromium:route,chromium:autoattach).

  route       Playwright ``context.route`` rewriting announced worker scripts + the page init
              script (blob: workers handled by the in-page wrapper). Playwright routes the
              requests of pages and of workers started by pages, but not the script fetch of a
              worker started by another worker: the nested app's inner worker is never seen.
  autoattach  A second DevTools session on the page: ``Target.setAutoAttach`` with
              ``waitForDebuggerOnStart``, then in each attached worker ``Runtime.evaluate`` of the
              bootstrap and ``Runtime.runIfWaitingForDebugger``. Playwright's own session has
              already resumed the worker, so app code runs before (or while) the bootstrap lands.
              Nested workers are attached without pausing (a second session asking a worker to
              pause them left them paused for good) and get the bootstrap when they attach.
              Measured here (Chromium 156): in one run every app counted exactly (the workers'
              first WebGPU call comes after async requestAdapter/requestDevice, which the
              evaluate beat); in another the Python driver hung inside Playwright after the
              nested app's workers attached (no timeout fired). Timing-dependent either way.
              The in-page Worker wrapper is off here, so nothing else instruments workers; the
              browser-level Fetch interceptor only answers /__webgpu_harness__/ requests.
"""

from __future__ import annotations

import itertools
import json
from urllib.parse import urlsplit

from harness.drive.inject import ChromiumInjector
from harness.serve.injection import PREFIX, InjectionCore
from harness.serve.rewrite import looks_like_module, prefix_worker_script

_DROPPED = {"content-length", "content-encoding", "etag", "last-modified", "cache-control"}


def attach_route(ctx, core: InjectionCore):
    ctx.add_init_script(script=core.bootstrap_js({"kind": "page"}))

    def handler(route):
        req = route.request
        parts = urlsplit(req.url)
        if parts.path.startswith(PREFIX):
            status, headers, body = core.handle(req.method, parts.path, parts.query, req.post_data_buffer or b"")
            route.fulfill(status=status, headers=headers, body=body)
            return
        if req.method == "GET" and core.is_registered(req.url):
            entry = core.take_worker(req.url)
            resp = route.fetch()
            raw = resp.body()
            kind = entry.get("type") or ("module" if looks_like_module(raw.decode("utf-8", "replace")) else "classic")
            hints = {"kind": entry.get("kind") or "worker", "type": kind, "wid": entry.get("wid") or ""}
            out = prefix_worker_script(raw, kind, core.bootstrap_url("", hints))
            headers = {k: v for k, v in resp.headers.items() if k.lower() not in _DROPPED}
            route.fulfill(status=resp.status, headers=headers, body=out)
            return
        route.continue_()

    ctx.route("**/*", handler)
    return None


class _PrefixOnly(ChromiumInjector):
    """Browser-level Fetch that only answers /__webgpu_harness__/ and rewrites nothing."""

    def attach_prefix_only(self, browser) -> None:
        self._cdp = browser.new_browser_cdp_session()
        self._cdp.on("Fetch.requestPaused", self._on_paused)
        self._cdp.send("Fetch.enable", {"patterns": [{"urlPattern": f"*{PREFIX}*", "requestStage": "Request"}]})


def attach_autoattach(browser, ctx, page, core: InjectionCore):
    core.config.wrap_workers = False
    ctx.add_init_script(script=core.bootstrap_js({"kind": "page"}))
    prefix = _PrefixOnly(core)
    prefix.attach_prefix_only(browser)
    cdp = ctx.new_cdp_session(page)
    ids = itertools.count(1)

    def send(session_id: str, method: str, params: dict | None = None) -> None:
        cdp.send("Target.sendMessageToTarget", {"sessionId": session_id, "message": json.dumps(
            {"id": next(ids), "method": method, "params": params or {}})})

    def attached(ev: dict) -> None:
        sid, info = ev["sessionId"], ev["targetInfo"]
        if info.get("type") == "worker":
            send(sid, "Runtime.evaluate", {"expression": core.bootstrap_js({"kind": "worker"})})
            # nested workers: attach without pausing (asking this session to pause them left
            # them paused for good here); the bootstrap is evaluated as soon as they attach
            send(sid, "Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": False})
        send(sid, "Runtime.runIfWaitingForDebugger")

    def nested(ev: dict) -> None:  # events of attached workers arrive wrapped
        try:
            msg = json.loads(ev.get("message", "{}"))
        except ValueError:
            return
        if msg.get("method") == "Target.attachedToTarget":
            # a nested worker: reach it through its parent's session (not flattened)
            parent, child = ev["sessionId"], msg["params"]
            if child["targetInfo"].get("type") == "worker":
                inner = json.dumps({"id": next(ids), "method": "Runtime.evaluate",
                                    "params": {"expression": core.bootstrap_js({"kind": "worker"})}})
                send(parent, "Target.sendMessageToTarget", {"sessionId": child["sessionId"], "message": inner})

    cdp.on("Target.attachedToTarget", attached)
    cdp.on("Target.receivedMessageFromTarget", nested)
    cdp.send("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": False})

    class Handle:
        def detach(self) -> None:
            prefix.detach()
            try:
                cdp.detach()
            except Exception:
                pass

    return Handle()
