"""Forced collections every N tokens (``--gc-checkpoints N``), so that what survives a full GC
shows (harness/stats/memory.py reads the floors after them).

Where the driver can (Chromium: the DevTools protocol's ``HeapProfiler.collectGarbage`` on the
workload worker's target, harness/drive/playwright.py), checkpoints fall after steps N-1, 2N-1,
3N-1…: each time the cell's last reported step passes the next of them the probe asks for a full
collection and, when the engine answers that it is done, records a ``gc_checkpoint`` sample
``{token, time_s, done_token, done_s, forced: true, due}`` (``token``/``time_s``: the last step
the harness had seen and the time when it asked; ``done_*``: the same when the answer came;
``due``: the checkpoints that ask stands for — more than 1 when the steps of several arrived
together, in one batch of the worker's sample sink, web/probes/sink.js: one collection then
serves them all, and the analysis says how many of the cadence's checkpoints were done,
harness/report/memory_findings.py ``gc_checkpoints``). The worker keeps
running meanwhile (the collection runs when its thread takes the request); the
FinalizationRegistry probe sees the wrappers it freed in the steps after. Where the driver cannot, one sample
``{forced: false, reason}`` says so and nothing else is recorded.
"""

from __future__ import annotations

import time

from harness.probe.base import Probe

#: How long the end of a cell waits for forced collections still unanswered (s).
ANSWER_WAIT_S = 10.0


class GcCheckpointProbe(Probe):
    """Every ``gc_checkpoints`` tokens (plan setting; 0 = off): one forced collection."""

    name = "gc_checkpoints"

    def __init__(self, ctx):
        super().__init__(ctx)
        self.every = int(getattr(ctx.settings, "gc_checkpoints", 0) or 0)
        self._next = self.every - 1  # after steps N-1, 2N-1, ...: every N tokens
        self._passed = 0  # checkpoints the cell's steps have passed (asked for, one ask or several)
        self._told = False

    @classmethod
    def enabled(cls, settings) -> bool:
        return int(getattr(settings, "gc_checkpoints", 0) or 0) > 0

    def _answered(self) -> None:
        for (token, asked_s, due), ok in self.ctx.session.collections_done():
            self.ctx.record([{"kind": "gc_checkpoint", "forced": ok, "token": token, "time_s": asked_s, "due": due,
                              "done_token": self.ctx.token(), "done_s": round(self.ctx.store.elapsed_s(), 4),
                              **({} if ok else {"reason": "the engine answered with an error"})}])

    def stop(self) -> None:
        # a request sent near the end (steps arrive in batches on a loaded machine) is answered
        # after the workload's last step: wait for its answer rather than lose the checkpoint
        deadline = time.monotonic() + ANSWER_WAIT_S
        while self.ctx.session.collections_pending() and time.monotonic() < deadline:
            self.ctx.session.pump(0.05)
        self._answered()
        if self.ctx.session.collections_pending():
            self.ctx.record([{"kind": "gc_checkpoint", "forced": False, "token": self.ctx.token(),
                              "time_s": round(self.ctx.store.elapsed_s(), 4),
                              "reason": f"no answer from the engine within {ANSWER_WAIT_S:.0f} s of the cell's end"}])

    def poll(self, now: float) -> None:
        self._answered()
        token = self.ctx.token()
        if token is None or token < self._next:
            return
        # every checkpoint passed since the last ask (steps arrive in batches): one ask for them
        passed = (token + 1) // self.every
        due, self._passed = passed - self._passed, passed
        self._next = (passed + 1) * self.every - 1
        asked = (token, round(self.ctx.store.elapsed_s(), 4), due)
        if self.ctx.session.collect_garbage(asked):
            pass
        elif not self._told:
            self._told = True
            why = self.ctx.session.no_devtools or "the worker's DevTools target was not found"
            self.ctx.record([{"kind": "gc_checkpoint", "forced": False, "token": token,
                              "time_s": round(self.ctx.store.elapsed_s(), 4), "reason": f"not available: {why}"}])
