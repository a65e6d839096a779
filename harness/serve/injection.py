"""What every injection path shares: the bootstrap script, the worker registry and the sample
endpoint under ``/__webgpu_harness__/`` on the app's own origin.

Both interceptors — the reverse proxy (``harness/serve/proxy.py``, any browser) and Chromium's
Fetch interception (``harness/drive/inject.py``) — hand requests for that path to
:meth:`InjectionCore.handle` and never pass them to the app's server:

  GET  /__webgpu_harness__/bootstrap.js?kind=&type=&wid=&fid=&created_url=
       the bundle ``web/inject/dist/bootstrap.iife.js`` wrapped as
       ``(function __webgpuHarnessBootstrap(config, scope) {…; WebGPUHarnessInject.install(config,
       scope, __webgpuHarnessBootstrap);})({…})`` (called again with a frame's global, it enters
       that frame: web/inject/frames.js); the query tells the new realm what it is (page, frame,
       worker, sharedworker, serviceworker; classic or module; the worker id the Worker wrapper
       gave it, or the frame id of a srcdoc; the blob: URL it was made from);
       it holds the run's token, so it is served only to loads that run it
       (:data:`SCRIPT_DESTS`: a ``<script>``, ``importScripts``, a module import, a worker's
       script), never to ``fetch``/XHR (``Sec-Fetch-Dest: empty``): the app's own scripts cannot
       read the token through this URL (403)
  POST /__webgpu_harness__/worker   {url, type, kind, wid}: a Worker wrapper announcing a worker
       script fetch (synchronous XHR, so it arrives before the fetch); answered 204
  POST /__webgpu_harness__/samples  {"samples": [...]}: batches from web/inject/transport.js;
       answered 204, 413 over MAX_BODY_BYTES, 400 when malformed

Samples are kept as received (dicts with ``kind``, ``t_ms``, ``realm``) plus ``received_s``
(seconds since the core was made, harness clock). Their shapes are listed in web/inject/README.md.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import parse_qs, urlsplit, urlunsplit

from harness import locations
from harness.plan import EMULATION_DEFAULTS

PREFIX = "/__webgpu_harness__/"
BOOTSTRAP_PATH = PREFIX + "bootstrap.js"
BUNDLE = locations.web_dir() / "inject" / "dist" / "bootstrap.iife.js"
#: Largest sample batch accepted (bytes); a step sample is ~1 KiB, a batch holds at most 32.
MAX_BODY_BYTES = 1 << 20
#: Most samples in one batch.
MAX_SAMPLES_PER_BATCH = 512
REALM_KINDS = ("page", "worker", "sharedworker", "serviceworker")
SCRIPT_TYPES = ("classic", "module")
WEBGPU_MODES = ("auto", "real", "emulated")
#: installEmulatedWebGPU options used unless the caller gives its own. onnxruntime-web's kernels
#: bind up to 9 storage buffers, more than the spec default limit of 8, so Safari's Apple-GPU
#: limits (web/emulation/README.md); the memory model keeps its own defaults (16 KiB per stage).
#: The emulation options of the run plan's defaults (one source: harness/plan.py).
DEFAULT_EMULATION_OPTIONS: dict[str, Any] = EMULATION_DEFAULTS

#: Request destinations (Fetch spec §3.3.8; the ``Sec-Fetch-Dest`` header, which a page cannot
#: set) that execute what they load without handing its text to the page: the bootstrap, which
#: holds the run's token, is served to these only.
SCRIPT_DESTS = frozenset({"script", "worker", "sharedworker", "serviceworker"})

_STEP_ON = re.compile(r"^(mapAsync|mapAsync:[1-9]\d*|mark:.+|console:.+|interval:\d+(\.\d+)?)$")
STEP_ON_FORMS = "mapAsync, mapAsync:N, mark:NAME, console:REGEX or interval:MS"


def check_step_on(spec: str) -> str:
    """Validate a --step-on spec (the forms web/inject/steps.js parses). Returns it; raises
    ValueError naming the valid forms."""
    if not _STEP_ON.match(spec or "") or spec == "interval:0":
        raise ValueError(f"--step-on must be {STEP_ON_FORMS}; got {spec!r}")
    if spec.startswith("console:"):
        try:
            re.compile(spec[len("console:"):])
        except re.error as exc:
            raise ValueError(f"--step-on console:REGEX has a bad regular expression: {exc}") from None
    return spec


@dataclass
class InjectConfig:
    """What every realm's bootstrap is told (web/inject/bootstrap.js ``install(config)``)."""

    step_on: str = "mapAsync"
    #: auto: the engine's WebGPU, emulated where it has none (WebKitGTK); real; emulated
    webgpu: str = "auto"
    emulation_options: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_EMULATION_OPTIONS))
    #: False: no counters installed (for overhead measurements); steps report zero counts
    probes: bool = True
    #: False: leave Worker/SharedWorker/serviceWorker.register alone (only for comparing paths)
    wrap_workers: bool = True

    def __post_init__(self) -> None:
        check_step_on(self.step_on)
        if self.webgpu not in WEBGPU_MODES:
            raise ValueError(f"webgpu must be one of {', '.join(WEBGPU_MODES)}; got {self.webgpu!r}")

    def to_js(self) -> dict[str, Any]:
        return {"stepOn": self.step_on, "webgpu": self.webgpu,
                "emulationOptions": self.emulation_options, "probes": self.probes,
                "wrapWorkers": self.wrap_workers}


def strip_fragment(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, ""))


class InjectionCore:
    """Bootstrap text, worker registry and received samples of one run (thread-safe).

    ``on_samples(list_of_dicts)`` is called with each accepted batch (after ``received_s`` was
    added), e.g. to append them to a run folder; the batch is kept in ``samples`` either way."""

    def __init__(self, config: InjectConfig | None = None,
                 on_samples: Callable[[list[dict]], None] | None = None) -> None:
        self.config = config or InjectConfig()
        if not BUNDLE.exists():
            raise FileNotFoundError(f"{BUNDLE} is missing: run `npm run build:inject`")
        self._bundle = BUNDLE.read_text(encoding="utf-8")
        self._lock = threading.Lock()
        self._workers: dict[str, deque[dict]] = {}
        self._t0 = time.monotonic()
        self.on_samples = on_samples
        #: the run's token, in every realm's bootstrap; batches and registrations without it are refused (403)
        self.token = secrets.token_urlsafe(18)
        self.samples: list[dict] = []
        self.registrations: list[dict] = []

    # --- bootstrap ----------------------------------------------------------------------
    def bootstrap_js(self, hints: dict[str, str] | None = None) -> str:
        """The bootstrap for one realm; ``hints`` = {kind, type, wid, fid, created_url} (strings)."""
        realm = {k: v for k, v in (hints or {}).items() if k in ("kind", "type", "wid", "fid", "created_url") and v}
        config = {**self.config.to_js(), "realm": realm, "token": self.token}
        # </script> cannot occur in JSON from json.dumps of these values except inside strings
        # of created_url; escape '<' so the text is also safe inline in HTML
        payload = json.dumps(config).replace("<", "\\u003c")
        return (f"(function __webgpuHarnessBootstrap(config, scope) {{\n{self._bundle}\n"
                f"WebGPUHarnessInject.install(config, scope, __webgpuHarnessBootstrap);\n}})({payload});\n")

    @staticmethod
    def bootstrap_url(origin: str, hints: dict[str, str]) -> str:
        """Absolute URL of the bootstrap on ``origin`` (``http://host:port``) for ``hints``."""
        from urllib.parse import urlencode

        q = urlencode({k: v for k, v in hints.items() if v})
        return f"{origin}{BOOTSTRAP_PATH}" + (f"?{q}" if q else "")

    # --- worker registry ----------------------------------------------------------------
    def register_worker(self, entry: dict) -> None:
        """Record that a worker script will be fetched from ``entry['url']``."""
        url = strip_fragment(str(entry["url"]))
        clean = {"url": url, "type": entry.get("type") if entry.get("type") in SCRIPT_TYPES else None,
                 "kind": entry.get("kind") if entry.get("kind") in REALM_KINDS else "worker",
                 "wid": str(entry.get("wid") or "")[:32]}
        with self._lock:
            self._workers.setdefault(url, deque()).append(clean)
            self.registrations.append(clean)

    def is_registered(self, url: str) -> bool:
        with self._lock:
            return bool(self._workers.get(strip_fragment(url)))

    def take_worker(self, url: str) -> dict | None:
        """The oldest registration for ``url`` (removed), or None."""
        with self._lock:
            q = self._workers.get(strip_fragment(url))
            return q.popleft() if q else None

    # --- samples ------------------------------------------------------------------------
    def add_samples(self, body: bytes) -> int:
        """Parse and keep one batch; returns how many samples. Raises ValueError if malformed."""
        if len(body) > MAX_BODY_BYTES:
            raise OverflowError(f"body over {MAX_BODY_BYTES} bytes")
        data = json.loads(body)
        if not isinstance(data, dict) or not secrets.compare_digest(str(data.get("token", "")), self.token):
            raise PermissionError("samples without this run's token")
        samples = data.get("samples")
        if not isinstance(samples, list) or not 1 <= len(samples) <= MAX_SAMPLES_PER_BATCH:
            raise ValueError(f"expected {{\"samples\": [1..{MAX_SAMPLES_PER_BATCH} objects]}}")
        if not all(isinstance(s, dict) and isinstance(s.get("kind"), str) for s in samples):
            raise ValueError("every sample must be an object with a string 'kind'")
        received = round(time.monotonic() - self._t0, 6)
        for s in samples:
            s["received_s"] = received
        with self._lock:
            self.samples.extend(samples)
        if self.on_samples:
            self.on_samples(samples)
        return len(samples)

    # --- the path under /__webgpu_harness__/ ---------------------------------------------
    def handle(self, method: str, path: str, query: str, body: bytes,
               dest: str | None = "script") -> tuple[int, dict[str, str], bytes]:
        """Answer one request for PREFIX: (status, headers, body). Never raises. ``dest``: the
        request's destination (``Sec-Fetch-Dest``, or what the interceptor knows); the bootstrap
        goes only to :data:`SCRIPT_DESTS` (module docstring). A full disk is a 503 (the sender
        retries).

        The bootstrap carries COEP require-corp + CORP same-origin: WebKitGTK 2.50 refuses to
        evaluate a module a cross-origin-isolated module worker imports unless the module's own
        response has COEP (measured: the worker fails with an empty error event; Chromium does
        not need it, the HTML spec asks it only of the worker's main script)."""
        js = {"content-type": "text/javascript; charset=utf-8", "cache-control": "no-store",
              "cross-origin-resource-policy": "same-origin", "cross-origin-embedder-policy": "require-corp"}
        plain = {"content-type": "text/plain; charset=utf-8", "cache-control": "no-store"}
        try:
            if path == BOOTSTRAP_PATH and method in ("GET", "HEAD"):
                if dest not in SCRIPT_DESTS:
                    return 403, plain, (f"the bootstrap is served to script loads only (Sec-Fetch-Dest "
                                        f"{', '.join(sorted(SCRIPT_DESTS))}), not to {dest or 'a request without one'}").encode()
                hints = {k: v[0] for k, v in parse_qs(query).items()}
                return 200, js, self.bootstrap_js(hints).encode("utf-8")
            if path == PREFIX + "worker" and method == "POST":
                entry = json.loads(body or b"{}")
                if not isinstance(entry, dict) or not isinstance(entry.get("url"), str):
                    return 400, plain, b"expected {url, type, kind, wid, token}"
                if not secrets.compare_digest(str(entry.get("token", "")), self.token):
                    raise PermissionError("a worker registration without this run's token")
                self.register_worker(entry)
                return 204, plain, b""
            if path == PREFIX + "samples" and method == "POST":
                self.add_samples(body)
                return 204, plain, b""
        except OverflowError as exc:
            return 413, plain, str(exc).encode()
        except PermissionError as exc:
            return 403, plain, str(exc).encode()
        except (ValueError, KeyError) as exc:
            return 400, plain, f"malformed: {exc}".encode()
        except OSError as exc:  # the run folder's disk is full (harness/store/files.py DiskFull)
            return 503, plain, str(exc).encode()
        return 404, plain, f"no {method} {path} in the harness's injection path".encode()

    def worker_bootstrap_url(self, origin: str, entry: dict | None, dest: str | None) -> str:
        """Bootstrap URL for a worker script fetched from ``origin`` (its registration, if any)."""
        hints = {"kind": (entry or {}).get("kind") or (dest if dest in REALM_KINDS else "worker"),
                 "type": (entry or {}).get("type") or "", "wid": (entry or {}).get("wid") or ""}
        return self.bootstrap_url(origin, hints)
