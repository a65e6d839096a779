"""The page and worker globals (*realms*) of an app measured by injection, from the samples they
post (web/inject/README.md, "Samples"): which made a GPUDevice, how many steps each ended, which
workers never reported. Used by ``webgpu-harness app`` (harness/drive/app_runner.py) and the
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

    def describe(self) -> dict[str, Any]:
        e = self.env or {}
        return {"realm": self.id, "kind": e.get("realm_kind"), "url": e.get("realm_url"),
                "script_type": e.get("script_type"), "worker_id": e.get("worker_id"), "webgpu": e.get("webgpu"),
                "device": self.device is not None, "steps": self.steps}


class RealmWatch:
    """The realms of one app cell, from the samples they post (thread-safe: the proxy's thread
    and the driver's thread deliver batches)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.realms: dict[str, Realm] = {}
        self.workers: list[dict[str, Any]] = []
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
                elif kind == "device" and realm.device is None:
                    realm.device = s
                elif kind == "step":
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
