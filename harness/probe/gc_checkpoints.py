"""Forced collections every N tokens (``--gc-checkpoints N``), so that what survives a full GC
shows (harness/stats/memory.py reads the floors after them).

Where the driver can (Chromium: the DevTools protocol's ``HeapProfiler.collectGarbage`` on the
workload worker's target, harness/drive/playwright.py), checkpoints fall after steps N-1, 2N-1,
3N-1…: each time the cell's last reported step passes the next of them the probe asks for a full
collection and, when the engine answers that it is done, records a ``gc_checkpoint`` sample
``{token, time_s, done_token, done_s, forced: true, due}`` (``token``/``time_s``: the last step
the harness had seen and the time when it asked; ``done_*``: the same when the answer came;
``due``: the checkpoints that ask stands for, more than 1 when the steps of several arrived
together: one collection then serves them all, and the analysis says how many of the cadence's
checkpoints were done, harness/report/memory_findings.py ``gc_checkpoints``).

The worker waits at each checkpoint for that collection: a workload awaits
``ctx.probe.checkpoint(i)`` after ``endStep(i)`` (web/probes/step.js), which at a checkpoint
sends the steps it holds at once (its sample sink, web/probes/sink.js, otherwise batches them
every 100 ms, while a token takes a few ms: the worker ran ~20 tokens ahead of what the harness
had seen and a 20-token run with N=4 got 1 or 2 of its 5 checkpoints) and waits until the
harness, as soon as the engine's answer arrives, evaluates ``globalThis.__webgpuHarnessGcDone(i)``
in the worker (:data:`GC_DONE_EXPRESSION`, Runtime.evaluate on the same target session). So
each checkpoint is asked for and done once (``due`` 1, ``token`` N-1, 2N-1…) and the collection
falls between step i and step i+1, outside both steps' times. The worker waits only where the
driver can force a collection (harness/drive/runner.py ``gc_checkpoint_settings``) and at most
``gc_checkpoint_wait_s`` (10 s, at most half the step timeout): an unanswered checkpoint is a
``log`` sample of the worker and the workload goes on; a workload that never calls
``checkpoint`` is not waited for (the probe then asks as its steps arrive, as before). Where
the driver cannot, one sample ``{forced: false, reason}`` says so and nothing else is recorded.
"""

from __future__ import annotations

import time

from harness.probe.base import Probe

#: How long the end of a cell waits for forced collections still unanswered (s).
ANSWER_WAIT_S = 10.0
#: Evaluated in the worker once the collection asked at its step ``{step}`` is done: lets a
#: worker waiting at that checkpoint go on (web/probes/step.js GC_DONE_GLOBAL; a no-op in a
#: worker that does not wait, or an app's worker).
GC_DONE_EXPRESSION = "globalThis.__webgpuHarnessGcDone?.({step})"


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
        for (token, asked_s, due), ok, answered in self.ctx.session.collections_done():
            # when the answer arrived (recorded by the driver's listener), not this later poll: a
            # worker released at once has run on meanwhile; its step then (never before the ask's)
            done_s = max(asked_s, self.ctx.store.elapsed_s() - (time.monotonic() - answered))
            seen = self.ctx.token()
            at = self.ctx.token_at(done_s)
            done_token = seen if at is None or seen is None else min(seen, max(token, at))
            self.ctx.record([{"kind": "gc_checkpoint", "forced": ok, "token": token, "time_s": asked_s, "due": due,
                              "done_token": done_token, "done_s": round(done_s, 4),
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
        if self.ctx.session.collect_garbage(asked, then=GC_DONE_EXPRESSION.format(step=int(token))):
            pass
        elif not self._told:
            self._told = True
            why = self.ctx.session.no_devtools or "the worker's DevTools target was not found"
            self.ctx.record([{"kind": "gc_checkpoint", "forced": False, "token": token,
                              "time_s": round(self.ctx.store.elapsed_s(), 4), "reason": f"not available: {why}"}])
