"""Forced collections every N tokens (``--gc-checkpoints N``), so that what survives a full GC
shows (harness/stats/memory.py reads the floors after them).

Where the driver can (Chromium: the DevTools protocol's ``HeapProfiler.collectGarbage`` on the
workload worker's target, harness/drive/playwright.py), each time the cell's last reported step
reaches a multiple of N the probe asks for a full collection and records a ``gc_checkpoint``
sample ``{token, time_s, forced: true}`` (``token``: the last step the harness had seen). The
worker keeps running meanwhile; the collection lands in one of the next steps, where the
FinalizationRegistry probe sees the wrappers it freed. Where the driver cannot, one sample
``{forced: false, reason}`` says so and nothing else is recorded.
"""

from __future__ import annotations

from harness.probe.base import Probe


class GcCheckpointProbe(Probe):
    """Every ``gc_checkpoints`` tokens (plan setting; 0 = off): one forced collection."""

    name = "gc_checkpoints"

    def __init__(self, ctx):
        super().__init__(ctx)
        self.every = int(getattr(ctx.settings, "gc_checkpoints", 0) or 0)
        self._next = self.every - 1  # after steps N-1, 2N-1, ...: every N tokens
        self._told = False

    @classmethod
    def enabled(cls, settings) -> bool:
        return int(getattr(settings, "gc_checkpoints", 0) or 0) > 0

    def poll(self, now: float) -> None:
        token = self.ctx.token()
        if token is None or token < self._next:
            return
        self._next = token + self.every
        sent = self.ctx.session.collect_garbage()
        if sent:
            self.ctx.record([{"kind": "gc_checkpoint", "forced": True, "token": token,
                              "time_s": round(self.ctx.store.elapsed_s(), 4)}])
        elif not self._told:
            self._told = True
            why = self.ctx.session.no_devtools or "the worker's DevTools target was not found"
            self.ctx.record([{"kind": "gc_checkpoint", "forced": False, "token": token,
                              "time_s": round(self.ctx.store.elapsed_s(), 4), "reason": f"not available: {why}"}])
