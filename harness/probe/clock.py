"""Round trips to the page's clock, so the realms' step times can be placed on the run's clock
(harness/store/timeline.py, "round-trip").

At the cell's start (once the page opened) and at its end, :data:`ROUND_TRIPS` times: the run
clock ``a`` (store.elapsed_s), the page's ``performance.timeOrigin + performance.now()`` (ms
since the Unix epoch; one clock for every realm of the browser, HR-Time §4), the run clock
``b``; recorded as one ``clock_sync`` sample ``{time_s: a, answered_s: b, browser_ms,
harness_epoch_ms, when}`` each (``harness_epoch_ms``: the harness's wall clock at ``a``, to say
how far the browser's clock is from it). The page's answer was read between ``a`` and ``b``: half
the round trip bounds the mapping. A session that cannot evaluate script in its page (a browser
we do not drive) records nothing; the timeline then falls back to delivery lags.
"""

from __future__ import annotations

import time

from harness.probe.base import Probe

#: Round trips each time: the tightest bounds the offset (a busy page answers some late).
ROUND_TRIPS = 3


class ClockProbe(Probe):
    """``clock_sync`` samples at the start and the end of each cell (module docstring)."""

    name = "clock"

    def start(self) -> None:
        self._sync("start")

    def stop(self) -> None:
        try:
            self._sync("end")
        except Exception:  # never hides the cell's outcome
            pass

    def _sync(self, when: str) -> None:
        out = []
        for _ in range(ROUND_TRIPS):
            a = self.ctx.store.elapsed_s()
            wall = time.time()
            v = self.ctx.session.read_clock()
            b = self.ctx.store.elapsed_s()
            if v is None:
                break
            out.append({"kind": "clock_sync", "time_s": round(a, 6), "answered_s": round(b, 6), "browser_ms": float(v),
                        "harness_epoch_ms": round(wall * 1000, 3), "when": when})
        self.ctx.record(out)
