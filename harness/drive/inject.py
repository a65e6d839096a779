"""Chromium: injection into an unmodified app without a proxy (``--inject cdp``).

Two DevTools mechanisms, both set up before the app's URL is opened:
  - pages: a Playwright init script (CDP ``Page.addScriptToEvaluateOnNewDocument``) holding the
    bootstrap; it runs in every frame before the document's own scripts and is not subject to
    the page's CSP;
  - workers: Fetch interception on the *browser* target (CDP ``Fetch.enable`` on
    ``Browser.newBrowserCDPSession``), which pauses every network request of every target —
    pages, dedicated workers at any depth, shared and service workers — before it is sent.
    The worker wrapper of the bootstrap announces each worker script with a synchronous POST to
    ``/__webgpu_harness__/worker``; that request is answered here (never sent), and when the
    browser then requests the announced URL its response is paused too
    (``Fetch.continueRequest(interceptResponse=true)``), read (``Fetch.getResponseBody``), given
    its first-line ``importScripts``/``import`` of the bootstrap (harness/serve/rewrite.py) and
    fulfilled. The worker keeps its URL. Nothing runs in the worker before that script, so the
    bootstrap sees the app's first WebGPU call by construction; ``blob:`` workers are handled
    in-page by the wrapper (web/inject/workers.js).
  - ``/__webgpu_harness__/samples`` POSTs from any realm are answered here too: samples never
    reach the app's server, whatever its COEP or CORS. Pages also get a DevTools binding
    ``__webgpuHarnessSend`` (Playwright ``expose_binding``, CDP ``Runtime.addBinding``), which
    no CSP can block; web/inject/transport.js prefers it, and workers whose POST is blocked
    (``connect-src``) relay their batches to the page over a BroadcastChannel.

Why not pause workers with ``Target.setAutoAttach(waitForDebuggerOnStart)``: Playwright's own
session auto-attaches to every worker and resumes it at once, and Chromium resumes a worker on
the first ``Runtime.runIfWaitingForDebugger`` of any session, so a second session cannot hold
it (measured in tests/apps/prove_injection.py, mechanism ``autoattach``). Playwright's
``context.route`` does not see the script fetch of a worker started by another worker (measured,
mechanism ``route``).

Requirement on the caller: Playwright's sync API delivers the Fetch events only while the
calling thread is inside a Playwright call (``page.wait_for_timeout``, ``goto``, ``evaluate``);
a page blocked in the wrapper's synchronous POST waits for that. The harness's runner pumps the
driver continuously, so this holds there.
"""

from __future__ import annotations

import base64
import threading
from urllib.parse import urlsplit

from harness.serve.injection import PREFIX, InjectionCore
from harness.serve.rewrite import is_javascript, looks_like_module, prefix_worker_script

#: response headers that no longer describe a rewritten worker script
_DROPPED = frozenset({"content-length", "content-encoding", "etag", "last-modified", "cache-control",
                      "expires", "digest", "content-md5"})


class ChromiumInjector:
    """Installs the bootstrap into a Playwright Chromium ``browser`` and ``context``.

    Use: ``inj = ChromiumInjector(core); inj.attach(browser, context)`` before ``page.goto``;
    ``inj.detach()`` when done. ``rewritten`` lists the worker scripts injected
    ``(url, script type)``; ``errors`` what failed (a failed request is let through unchanged)."""

    def __init__(self, core: InjectionCore) -> None:
        self.core = core
        self.rewritten: list[tuple[str, str]] = []
        self.errors: list[str] = []
        self._cdp = None
        self._lock = threading.Lock()

    def attach(self, browser, context) -> None:
        """Add the page init script to ``context`` and start Fetch interception on ``browser``.
        Raises RuntimeError if the browser is not Chromium (no browser CDP session)."""
        # the binding first: its init script then runs before the bootstrap's first send
        context.expose_binding("__webgpuHarnessSend", self._on_binding)
        context.add_init_script(script=self.core.bootstrap_js({"kind": "page"}))
        try:
            self._cdp = browser.new_browser_cdp_session()
        except Exception as exc:
            raise RuntimeError(f"--inject cdp needs Chromium's DevTools protocol: {str(exc).splitlines()[0]}") from exc
        self._cdp.on("Fetch.requestPaused", self._on_paused)
        self._cdp.send("Fetch.enable", {"patterns": [{"urlPattern": "*", "requestStage": "Request"}]})

    def detach(self) -> None:
        if self._cdp is not None:
            try:
                self._cdp.send("Fetch.disable")
                self._cdp.detach()
            except Exception:
                pass
            self._cdp = None

    def _on_binding(self, _source, body: str) -> None:
        try:
            self.core.add_samples(str(body).encode("utf-8"))
        except (ValueError, OverflowError, PermissionError, OSError) as exc:  # OSError: a full disk
            if len(self.errors) < 100:  # a page that floods the binding with junk: a few said, not all kept
                self.errors.append(f"binding: {exc}")

    # ------------------------------------------------------------------------------------
    def _on_paused(self, ev: dict) -> None:
        rid = ev["requestId"]
        try:
            if "responseStatusCode" in ev or "responseErrorReason" in ev:
                self._on_response(ev)
            else:
                self._on_request(ev)
        except Exception as exc:  # never leave a request paused
            self.errors.append(f"{ev.get('request', {}).get('url', '?')}: {type(exc).__name__}: {exc}")
            try:
                self._cdp.send("Fetch.continueRequest", {"requestId": rid})
            except Exception:
                pass

    def _on_request(self, ev: dict) -> None:
        req = ev["request"]
        url = req["url"]
        parts = urlsplit(url)
        if parts.path.startswith(PREFIX):
            status, headers, body = self.core.handle(req["method"], parts.path, parts.query, _post_data(req),
                                                     _dest(ev, req))
            self._cdp.send("Fetch.fulfillRequest", {
                "requestId": ev["requestId"], "responseCode": status,
                "responseHeaders": [{"name": k, "value": v} for k, v in headers.items()],
                "body": base64.b64encode(body).decode("ascii")})
            return
        if req["method"] == "GET" and self.core.is_registered(url):
            self._cdp.send("Fetch.continueRequest", {"requestId": ev["requestId"], "interceptResponse": True})
            return
        self._cdp.send("Fetch.continueRequest", {"requestId": ev["requestId"]})

    def _on_response(self, ev: dict) -> None:
        url = ev["request"]["url"]
        entry = self.core.take_worker(url)
        status = int(ev.get("responseStatusCode") or 0)
        headers = ev.get("responseHeaders") or []
        ctype = next((h["value"] for h in headers if h["name"].lower() == "content-type"), None)
        if entry is None or not 200 <= status < 300 or not (is_javascript(ctype) or not ctype):
            self._cdp.send("Fetch.continueRequest", {"requestId": ev["requestId"]})
            return
        got = self._cdp.send("Fetch.getResponseBody", {"requestId": ev["requestId"]})
        raw = base64.b64decode(got["body"]) if got.get("base64Encoded") else got["body"].encode("utf-8")
        kind = entry.get("type") or ("module" if looks_like_module(raw.decode("utf-8", "replace")) else "classic")
        hints = {"kind": entry.get("kind") or "worker", "type": kind, "wid": entry.get("wid") or ""}
        out = prefix_worker_script(raw, kind, self.core.bootstrap_url("", hints))
        kept = [h for h in headers if h["name"].lower() not in _DROPPED]
        kept.append({"name": "Cache-Control", "value": "no-store"})
        self._cdp.send("Fetch.fulfillRequest", {
            "requestId": ev["requestId"], "responseCode": status, "responseHeaders": kept,
            "body": base64.b64encode(out).decode("ascii")})
        with self._lock:
            self.rewritten.append((url, kind))


#: CDP ``Network.ResourceType`` → the Fetch destination it stands for (what Sec-Fetch-Dest would say).
#: A worker's own script loads (its ``importScripts``, a module worker's ``import``) are reported as
#: ``Other`` at the Request stage, without a Sec-Fetch-Dest header yet (measured, Chromium 156): they
#: run what they load, as a script does; what a page can read the body of (fetch, XHR,
#: EventSource) is ``Fetch``/``XHR``/``EventSource``.
_DESTS = {"Script": "script", "Other": "script", "Document": "document", "Fetch": "empty", "XHR": "empty",
          "EventSource": "empty", "WebSocket": "websocket", "Stylesheet": "style", "Image": "image", "Font": "font",
          "Media": "video"}


def _dest(ev: dict, req: dict) -> str | None:
    """The request's destination: its Sec-Fetch-Dest header when the browser set it by now, else
    from the paused request's resource type (CDP Fetch.requestPaused ``resourceType``)."""
    for k, v in (req.get("headers") or {}).items():
        if k.lower() == "sec-fetch-dest":
            return v
    return _DESTS.get(ev.get("resourceType") or "", "empty")


def _post_data(req: dict) -> bytes:
    """The request body as CDP reports it (``postDataEntries`` base64 chunks, else ``postData``)."""
    entries = req.get("postDataEntries")
    if entries:
        return b"".join(base64.b64decode(e.get("bytes", "")) for e in entries)
    data = req.get("postData")
    return data.encode("utf-8") if isinstance(data, str) else b""
