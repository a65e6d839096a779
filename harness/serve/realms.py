"""The page and worker globals (*realms*) of an app measured by injection, from the samples they
post (web/inject/README.md, "Samples"): which made a GPUDevice (and how many), how many steps each
ended, which workers and frames never reported, and the app's errors and device losses. Used by ``webgpu-harness app`` (harness/drive/app_runner.py) and the
pytest plugin (harness/pytest_plugin.py).

The *measured realm* of an app is the one with a device and the most steps (the first device on
a tie): a decoder's worker, or the page for an app that does WebGPU on its main thread.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from harness.serve.samples import check_injected


def _calls(sample: dict) -> int:
    """Every counter of a step or open_step sample, summed (0 when the probes were off)."""
    return sum(v for v in (sample.get("counters") or {}).values() if isinstance(v, int))


@dataclass
class Realm:
    """One page or worker global of the app, as its samples describe it."""

    id: str
    env: dict[str, Any] | None = None
    device: dict[str, Any] | None = None
    steps: int = 0
    last_step: int | None = None
    last_step_monotonic: float | None = None
    triggers: set[str] = field(default_factory=set)
    #: GPUDevices the realm got (``device`` samples); more than one: made again
    devices: int = 0
    #: ``device_lost`` samples of the realm (web/probes/device-events.js)
    lost: list[dict[str, Any]] = field(default_factory=list)
    #: ``app_error`` samples of the realm (uncaught errors, unhandled rejections)
    errors: int = 0
    #: ``open_step`` samples: calls counted between the realm's own step boundaries
    open_steps: int = 0
    #: WebGPU calls counted in the realm's steps (sum of every counter), and in its open step so
    #: far (its last ``open_step``); None when the realm's probes were off (counters null)
    step_calls: int | None = 0
    open_calls: int = 0

    def describe(self) -> dict[str, Any]:
        e = self.env or {}
        return {"realm": self.id, "kind": e.get("realm_kind"), "url": e.get("realm_url"),
                "script_type": e.get("script_type"), "worker_id": e.get("worker_id"), "webgpu": e.get("webgpu"),
                "device": self.device is not None, "steps": self.steps, "devices": self.devices,
                "devices_lost": len(self.lost), "errors": self.errors, "open_steps": self.open_steps}


class RealmWatch:
    """The realms of one app cell, from the samples they post (thread-safe: the proxy's thread
    and the driver's thread deliver batches)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.realms: dict[str, Realm] = {}
        self.workers: list[dict[str, Any]] = []
        #: ``frame`` samples: frames the bootstrap entered late, could not enter, or could not reach
        self.frames: list[dict[str, Any]] = []
        #: ``app_error``, ``device_lost`` and ``uncaptured_error`` samples, in arrival order
        self.problems: list[dict[str, Any]] = []
        self.refused = 0
        #: second copies dropped (a batch both posted and relayed, web/inject/transport.js)
        self.duplicates = 0
        self._seen: dict[str, set[int]] = {}

    def accept(self, batch: list[dict]) -> list[dict]:
        """Check each sample of a batch (harness/serve/samples.py ``check_injected``) and note
        what it says; returns what to record: the samples as sent, a ``refused`` record (RESULTS.md)
        in place of each one that does not fit; a second copy of a realm's ``n`` is dropped."""
        out = []
        now = time.monotonic()
        with self._lock:
            for raw in batch:
                try:
                    s = check_injected(raw)
                except ValueError as exc:
                    self.refused += 1
                    n = raw.get("n") if isinstance(raw.get("n"), int) and not isinstance(raw.get("n"), bool) else None
                    out.append({"kind": "refused", "src": str(raw.get("realm"))[:40], "n": n,
                                "sample_kind": str(raw.get("kind"))[:40], "reason": " ".join(str(exc).split())[:500]})
                    continue
                seen = self._seen.setdefault(str(s.get("realm")), set())
                if s["n"] in seen:
                    self.duplicates += 1
                    continue
                seen.add(s["n"])
                out.append(s)
                kind, rid = s["kind"], s.get("realm") or "?"
                realm = self.realms.setdefault(rid, Realm(rid))
                if kind == "env":
                    realm.env = s
                elif kind == "device":
                    realm.devices += 1
                    realm.device = realm.device or s
                elif kind == "open_step":
                    realm.open_steps += 1
                    realm.open_calls = _calls(s)
                elif kind in ("app_error", "device_lost", "uncaptured_error"):
                    self.problems.append(s)
                    if kind == "app_error":
                        realm.errors += 1
                    elif kind == "device_lost":
                        realm.lost.append(s)
                elif kind == "frame":
                    self.frames.append(s)
                elif kind == "step":
                    if s.get("counters") is None:
                        realm.step_calls = None
                    elif realm.step_calls is not None:
                        realm.step_calls += _calls(s)
                    realm.open_calls = 0
                    realm.steps += 1
                    realm.last_step = s["step"]
                    realm.last_step_monotonic = now
                    realm.triggers.add(str((s.get("extra") or {}).get("trigger") or "?"))
                elif kind == "worker":
                    self.workers.append(s)
        return out

    def measured(self) -> Realm | None:
        """The realm with a device and the most steps (the first device on a tie), or None."""
        with self._lock:
            with_device = [r for r in self.realms.values() if r.device is not None]
            return max(with_device, key=lambda r: r.steps) if with_device else None

    def steps(self) -> int:
        m = self.measured()
        return m.steps if m else 0

    def last_step(self) -> int | None:
        m = self.measured()
        return m.last_step if m else None

    def last_step_monotonic(self) -> float | None:
        m = self.measured()
        return m.last_step_monotonic if m else None

    def not_instrumented(self) -> list[dict[str, Any]]:
        """Workers the app started whose realm never reported (``env`` with their worker id)."""
        with self._lock:
            seen = {(r.env or {}).get("worker_id") for r in self.realms.values()}
            return [{"url": w["url"], "worker_kind": w.get("worker_kind"), "script_type": w.get("script_type"),
                     "reason": w.get("reason") or "its realm never reported (the bootstrap did not run in it)"}
                    for w in self.workers if w.get("worker_id") not in seen]

    def frames_not_instrumented(self) -> list[dict[str, Any]]:
        """Frames the bootstrap missed (web/inject/frames.js): ``{url, instrumented, reason}`` for
        one it could not enter, one it entered late (``instrumented: "late"``: calls before that
        uncounted) and one it could not reach whose own document never reported (no ``frame``
        realm with that URL sent ``env``)."""
        with self._lock:
            urls = {str((r.env or {}).get("realm_url") or "") for r in self.realms.values()
                    if (r.env or {}).get("realm_kind") == "frame"}
            out = []
            for f in self.frames:
                if f.get("instrumented") is None and str(f.get("url") or "") in urls:
                    continue  # its own document had the bootstrap (Chromium's init script, the proxy's HTML)
                out.append({"url": f.get("url"), "instrumented": f.get("instrumented"),
                            "reason": f.get("reason") or "its realm never reported"})
            return out

    def calls(self) -> int | None:
        """WebGPU calls every realm counted (steps and open steps); None when the probes were off."""
        with self._lock:
            if any(r.step_calls is None for r in self.realms.values()):
                return None
            return sum((r.step_calls or 0) + r.open_calls for r in self.realms.values())

    def first_problem(self) -> dict[str, Any] | None:
        """The first ``app_error``, ``device_lost`` or ``uncaptured_error`` received, else None."""
        with self._lock:
            return self.problems[0] if self.problems else None

    def realm_of(self, realm_id: str | None) -> Realm | None:
        with self._lock:
            return self.realms.get(str(realm_id)) if realm_id is not None else None


# ----------------------------------------------------------------------------------------------
# a realm and its problems in words (an app cell's reasons and warnings: harness/drive/app_runner.py)

#: ``instrumented`` of a frame the bootstrap entered only at its load (web/inject/frames.js).
LATE = "late"


def short_url(url: str | None, n: int = 80) -> str:
    """A URL for a one-line reason: ``data:`` URLs cut to their start (they hold whole scripts)."""
    url = str(url or "")
    if url.startswith("data:"):
        return url[:40] + "…" if len(url) > 40 else url
    return url if len(url) <= n else url[: n - 1] + "…"


def realm_name(realm) -> str:
    """``worker http://…/worker.js`` / ``page`` / ``frame about:blank``: a realm as a reason names it."""
    e = (realm.env if realm is not None else None) or {}
    kind = e.get("realm_kind") or "realm"
    return kind if kind == "page" else f"{kind} {short_url(e.get('realm_url'))}"


def describe_problem(sample: dict | None) -> str:
    """One line for an ``app_error``/``device_lost``/``uncaptured_error`` sample."""
    if not sample:
        return ""
    kind = sample.get("kind")
    if kind == "app_error":
        where = f" at {sample['source']}" if sample.get("source") else ""
        return f"{sample.get('error_kind', 'error')}: {sample.get('message', '')}{where}"[:500]
    if kind == "device_lost":
        return f"GPUDevice lost ({sample.get('reason')}: {sample.get('message', '')})"[:500]
    return f"uncaptured WebGPU error ({sample.get('error_type')}): {sample.get('message', '')}"[:500]


def measurement_warnings(watch: RealmWatch) -> list[str]:
    """One line per thing that makes the measurement partial or eventful: a worker or frame the
    probes could not enter (or entered late), a realm that made more than one GPUDevice or lost
    one, the app's errors (counted, the first quoted). The report, summary.md and the console
    show them with the cell."""
    out = [f"not measured: {w.get('worker_kind') or 'worker'} {short_url(w['url'])} ({w['reason']})"
           for w in watch.not_instrumented()]
    for f in watch.frames_not_instrumented():
        what = "measured only after its load" if f.get("instrumented") == LATE else "not measured"
        out.append(f"{what}: frame {short_url(f['url'])} ({f['reason']})")
    for r in list(watch.realms.values()):
        if r.lost:
            first = r.lost[0]
            out.append(f"{realm_name(r)}: GPUDevice lost at step {first.get('step')} ({first.get('reason')}: "
                       f"{str(first.get('message') or '')[:200]})" + (f"; {len(r.lost)} losses" if len(r.lost) > 1 else ""))
        if r.devices > 1:
            out.append(f"{realm_name(r)}: made {r.devices} GPUDevices (a device made again: counts span all of them)")
    errors = [p for p in watch.problems if p.get("kind") == "app_error"]
    if errors:
        out.append(f"{len(errors)} app error(s) (uncaught errors, unhandled rejections); first: {describe_problem(errors[0])}")
    uncaptured = [p for p in watch.problems if p.get("kind") == "uncaptured_error"]
    if uncaptured:
        out.append(f"{len(uncaptured)} uncaptured WebGPU error(s); first: {describe_problem(uncaptured[0])}")
    return out
