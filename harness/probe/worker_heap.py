"""The workload worker's JS heap, read through the driver where it can (Chromium: the DevTools
protocol's ``Runtime.getHeapUsage`` on the worker target; see harness/drive/playwright.py).

Sampled on every step the cell reports (and every ``heap_interval_s`` between steps), recorded
as ``worker_heap`` samples (RESULTS.md, memory.csv ``source=cdp``); the answer arrives
asynchronously: a sample is recorded for each new answer, at the time the worker read its
heap (the middle of the question and the answer, on the run clock; placed on the step timeline
by that time, harness/store/timeline.py). Where the driver
cannot read it (WebKitGTK, Safari: no DevTools protocol) one ``worker_heap`` sample with
``js_heap_bytes: null`` and ``available: false`` says why: the heap is "not available", never 0.
"""

from __future__ import annotations

import time

from harness.probe.base import PollingProbe


class WorkerHeapProbe(PollingProbe):
    """On each new step and every ``heap_interval_s`` (plan setting, default 1 s): one
    ``worker_heap`` sample with ``js_heap_bytes`` (used) and ``js_heap_total_bytes`` (bytes)."""

    name = "worker_heap"

    def __init__(self, ctx):
        super().__init__(ctx)
        self.interval_s = float(getattr(ctx.settings, "heap_interval_s", 1.0) or 0)
        self._last_token = None
        self._last_at = None

    @classmethod
    def enabled(cls, settings) -> bool:
        return float(getattr(settings, "heap_interval_s", 1.0) or 0) > 0

    def start(self) -> None:
        super().start()
        why = self.ctx.session.no_devtools
        if why:
            self.ctx.record([{"kind": "worker_heap", "source": "none", "process_type": "worker", "js_heap_bytes": None,
                              "available": False, "reason": f"not available: {why}",
                              "time_s": round(self.ctx.store.elapsed_s(), 4), "token": None}])
            self.interval_s = 0  # nothing more to ask

    def poll(self, now: float) -> None:
        token = self.ctx.token()
        if self.interval_s > 0 and token is not None and token != self._last_token:
            self._last_token = token
            self.sample(now)
            return
        super().poll(now)

    def sample(self, now: float) -> None:
        heap = self.ctx.session.worker_heap()
        if not heap:
            return
        at = heap.get("at_monotonic")
        if at is not None and at == self._last_at:
            return  # no new answer since the last sample: the same reading is not a new point
        self._last_at = at
        # the time the worker read its heap (between the question and the answer), run clock
        time_s = self.ctx.store.elapsed_s() - (time.monotonic() - at if at is not None else 0.0)
        self.ctx.record([{
            "kind": "worker_heap", "source": "cdp", "process_type": "worker",
            "js_heap_bytes": heap["used_bytes"], "js_heap_total_bytes": heap["total_bytes"],
            "time_s": round(time_s, 4), "token": self.ctx.token_at(time_s)}])
