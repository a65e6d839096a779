"""The workload worker's JS heap, read through the driver where it can (Chromium: the DevTools
protocol's ``Runtime.getHeapUsage`` on the worker target; see harness/drive/playwright.py).
Recorded as ``worker_heap`` samples (RESULTS.md, memory.csv ``source=cdp``); drivers that
cannot read it return None and nothing is recorded."""

from __future__ import annotations

from harness.probe.base import PollingProbe


class WorkerHeapProbe(PollingProbe):
    """Every ``heap_interval_s`` (plan setting, default 1 s): one ``worker_heap`` sample with
    ``js_heap_bytes`` (used) and ``js_heap_total_bytes`` (bytes) when the session knows them."""

    name = "worker_heap"

    def __init__(self, ctx):
        super().__init__(ctx)
        self.interval_s = float(getattr(ctx.settings, "heap_interval_s", 1.0) or 0)

    @classmethod
    def enabled(cls, settings) -> bool:
        return float(getattr(settings, "heap_interval_s", 1.0) or 0) > 0

    def sample(self, now: float) -> None:
        heap = self.ctx.session.worker_heap()
        if heap:
            self.ctx.record([{
                "kind": "worker_heap", "source": "cdp", "process_type": "worker",
                "js_heap_bytes": heap["used_bytes"], "js_heap_total_bytes": heap["total_bytes"],
                "time_s": round(self.ctx.store.elapsed_s(), 4), "token": self.ctx.token()}])
