"""The measured realm's step timeline on the run's clock, and what is placed on it by time.

Two clocks meet in a run folder. The harness's *run clock*: seconds since the sample store
opened (``time.monotonic()``), on which every harness-side sample is taken (``time_s`` of
``process_memory``, ``worker_heap``) and every posted sample arrives (``received_s``). And each
sender's own clock — a page's or worker's ``performance.now()`` (``t_ms`` of each sample it
posts), which starts at that global's ``performance.timeOrigin`` (``time_origin_ms`` of its
``env`` sample, ms since the Unix epoch; HR-Time §4 "time origin": one shared monotonic clock
per user agent, so every realm's ``timeOrigin + now()`` is the same clock).

**How a sender's clock is mapped** (:func:`fit_sender`), ``run_ms = sender_ms − offset_ms``:

- ``round-trip``: the sender has a time origin (``sender_ms = time_origin_ms + t_ms``: the
  browser's epoch clock) and the cell has ``clock_sync`` samples — the harness asked the page for
  ``performance.timeOrigin + performance.now()`` (harness/probe/clock.py); the answer ``v`` was
  read at some run time between the ask ``a`` and the answer ``b``, so
  ``offset ∈ [v − b, v − a]``. Every posted sample also bounds it: it arrived after it was
  made, ``received ≥ run(sent)``, so ``offset ≥ sender_ms − received_ms``. Every sender with a
  time origin reads the same clock, so they share one offset (:func:`fit_senders`): the middle of
  the intersection of all these intervals; the **uncertainty** is half its width (± ms, stated
  per cell), and the realms' steps keep their order among each other exactly. A sender whose
  deliveries contradict the round trips (its clock is not the page's) is fitted alone.
- ``delivery-lag``: no round trip (an older run, a browser we do not drive): the offset makes
  the fastest delivery take 0 ms (the smallest ``received − sender_ms``) — of all the senders
  that reported a time origin together (one clock: their steps keep their order exactly), of
  each other sender alone. A step is then placed up to that delivery's real lag early; that lag
  is not measured, so the uncertainty is unknown (None).

**Steps** (:func:`spans`): step k of the measured realm ends at its sample's ``t_ms`` (posted at
the boundary) mapped as above, and runs from the end of the step before (step 0 from its end
less its ``wall_ms``): steps are contiguous, as an app's are (web/inject/steps.js). **Placing a
time** ``t`` (:func:`place`): ``step`` is the step running at ``t`` and ``step_pos`` =
``step + (t − its start) / (its end − its start)``, so 12.5 is half-way through step 12; both
empty before step 0 began and after the last step ended. ``token`` is the last step ended at
``t`` (empty before the first ended) — the old meaning of memory.csv's ``token``, now by time
instead of by arrival.

**Other realms' calls** (:func:`attribute`): a realm that is not the measured one posts its own
steps and ``open_step`` samples (counts so far in its open step); as a cumulative count per
counter they form a step function of time, and measured step k gets what was reported before
its end and not before step k−1's: every call lands in exactly one measured step (the first
step that ends after the sample that reported it, a sample within the clocks' tick of an end
counting after it), calls after the last measured step end are left over and said so.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Iterable, Sequence

#: Methods of :class:`ClockFit` (module docstring).
ROUND_TRIP = "round-trip"
DELIVERY_LAG = "delivery-lag"


@dataclass(frozen=True)
class ClockSync:
    """One round trip: asked at run time ``a_s``, answered at ``b_s`` (s), the page's
    ``performance.timeOrigin + performance.now()`` ``browser_ms`` (ms since the epoch)."""

    a_s: float
    b_s: float
    browser_ms: float


@dataclass(frozen=True)
class ClockFit:
    """How one sender's times map onto the run clock: ``run_s = (sender_ms − offset_ms) / 1000``
    where ``sender_ms`` is ``time_origin_ms + t_ms`` when ``time_origin_ms`` is set, else
    ``t_ms``. ``uncertainty_ms``: half-width of the offset's interval (None: unbounded, see
    ``delivery-lag``); ``min_lag_ms``: the smallest delivery time after mapping (≥ 0 − the
    uncertainty when the fit is consistent); ``note``: why a sender fell back."""

    method: str
    offset_ms: float
    uncertainty_ms: float | None
    min_lag_ms: float
    time_origin_ms: float | None = None
    note: str = ""

    def run_s(self, t_ms: float) -> float:
        """A sample's ``t_ms`` (the sender's ``performance.now()``) on the run clock (s)."""
        return ((self.time_origin_ms or 0.0) + t_ms - self.offset_ms) / 1000.0

    def describe(self) -> str:
        """``round-trip ±0.8 ms`` / ``delivery-lag (uncertainty not measured)``."""
        if self.uncertainty_ms is None:
            return f"{self.method} (uncertainty not measured{': ' + self.note if self.note else ''})"
        return f"{self.method} ±{self.uncertainty_ms:.1f} ms"


def fit_sender(deliveries: Iterable[tuple[float, float]], time_origin_ms: float | None,
               syncs: Sequence[ClockSync] = ()) -> ClockFit | None:
    """The clock fit of one sender from its samples' ``(t_ms, received_s)`` pairs, its
    ``time_origin_ms`` (None if unknown) and the cell's round trips (module docstring).
    None when the sender posted no sample with a ``t_ms``."""
    pairs = [(float(t), float(r)) for t, r in deliveries if t is not None and r is not None]
    if not pairs:
        return None
    note = ""
    if time_origin_ms is not None and syncs:
        # offset ≥ sender_ms − received_ms for every sample (it arrived after it was made)
        floor = max(time_origin_ms + t - r * 1000 for t, r in pairs)
        lo = max(s.browser_ms - s.b_s * 1000 for s in syncs)
        hi = min(s.browser_ms - s.a_s * 1000 for s in syncs)
        if lo > hi:  # the round trips disagree among themselves (the clocks drifted): the tightest one
            best = min(syncs, key=lambda s: s.b_s - s.a_s)
            lo, hi = best.browser_ms - best.b_s * 1000, best.browser_ms - best.a_s * 1000
            note = "the round trips disagree (clock drift); the tightest one used"
        lo = max(lo, floor)
        if lo <= hi:
            offset = (lo + hi) / 2
            lag = min(r * 1000 - (time_origin_ms + t - offset) for t, r in pairs)
            return ClockFit(ROUND_TRIP, offset, (hi - lo) / 2, lag, time_origin_ms, note)
        note = (f"its samples arrived {lo - hi:.1f} ms before the page's clock says they were made: "
                "its clock is not the page's")
    elif time_origin_ms is not None:
        note = "no round trip with the page"
        offset = max(time_origin_ms + t - r * 1000 for t, r in pairs)
        return ClockFit(DELIVERY_LAG, offset, None, 0.0, time_origin_ms, note)
    else:
        note = "the sender reported no time origin"
    offset = max(t - r * 1000 for t, r in pairs)
    return ClockFit(DELIVERY_LAG, offset, None, 0.0, None, note)


def fit_senders(deliveries: dict[str, list[tuple[float, float]]], origins: dict[str, float],
                syncs: Sequence[ClockSync] = ()) -> dict[str, ClockFit | None]:
    """The clock fit of every sender of a cell. The senders that reported a time origin read one
    clock (the browser's epoch clock), so they get one offset — bounded by the round trips and by
    every one of their deliveries — and their steps keep their order relative to each other
    exactly (a page's call made right after a worker's step stays after it). A sender whose
    deliveries contradict the round trips (arrived before the page's clock says they were made)
    is fitted alone (:func:`fit_sender`); so is a sender without a time origin."""
    fits: dict[str, ClockFit | None] = {}
    epoch = {w: [(float(t), float(r)) for t, r in d if t is not None and r is not None]
             for w, d in deliveries.items() if w in origins}
    epoch = {w: d for w, d in epoch.items() if d}
    for w, d in deliveries.items():
        if w not in epoch:
            fits[w] = fit_sender(d, origins.get(w), syncs)
    if not epoch:
        return fits
    floor = {w: max(origins[w] + t - r * 1000 for t, r in d) for w, d in epoch.items()}
    note = ""
    if syncs:
        lo = max(x.browser_ms - x.b_s * 1000 for x in syncs)
        hi = min(x.browser_ms - x.a_s * 1000 for x in syncs)
        if lo > hi:
            best = min(syncs, key=lambda x: x.b_s - x.a_s)
            lo, hi = best.browser_ms - best.b_s * 1000, best.browser_ms - best.a_s * 1000
            note = "the round trips disagree (clock drift); the tightest one used"
        joint = [w for w in epoch if floor[w] <= hi]
        for w in epoch:
            if w not in joint:  # its clock is not the page's: alone, by its own deliveries
                fits[w] = fit_sender(epoch[w], origins[w], ())
        if joint:
            lo = max([lo] + [floor[w] for w in joint])
            offset, unc = (lo + hi) / 2, (hi - lo) / 2
            for w in joint:
                lag = min(r * 1000 - (origins[w] + t - offset) for t, r in epoch[w])
                fits[w] = ClockFit(ROUND_TRIP, offset, unc, lag, origins[w], note)
        return fits
    offset = max(floor.values())
    for w, d in epoch.items():
        lag = min(r * 1000 - (origins[w] + t - offset) for t, r in d)
        fits[w] = ClockFit(DELIVERY_LAG, offset, None, lag, origins[w],
                           "no round trip with the page" + ("; one offset for every realm's epoch clock" if len(epoch) > 1 else ""))
    return fits


@dataclass(frozen=True)
class Spans:
    """Contiguous step spans on the run clock (s), sorted by end: ``steps[i]`` runs from
    ``starts[i]`` to ``ends[i]``."""

    steps: list[int]
    starts: list[float]
    ends: list[float]


def spans(steps: Iterable[tuple[int, float, float | None]]) -> Spans:
    """``(step, end_s, wall_ms)`` of the measured realm's steps → their spans: each step runs
    from the previous step's end (step 0, or the first step kept, from its end less its
    ``wall_ms``). Steps are ordered by end time (one realm's steps end in order)."""
    rows = sorted(((int(k), float(e), w) for k, e, w in steps if e is not None), key=lambda x: (x[1], x[0]))
    out = Spans([], [], [])
    for i, (k, end, wall) in enumerate(rows):
        start = rows[i - 1][1] if i else end - (float(wall) / 1000 if wall is not None else 0.0)
        out.steps.append(k)
        out.starts.append(min(start, end))
        out.ends.append(end)
    return out


def place(time_s: float | None, sp: Spans) -> tuple[int | None, float | None, int | None]:
    """``(step, step_pos, token)`` of a sample taken at run time ``time_s`` (module docstring):
    the step running then and the fractional position in it (None outside every step), and the
    last step ended by then (None before the first ended)."""
    if time_s is None or not sp.ends:
        return None, None, None
    i = bisect.bisect_right(sp.ends, time_s)  # steps 0..i-1 ended at or before time_s
    token = sp.steps[i - 1] if i else None
    if i == len(sp.ends) or time_s < sp.starts[i]:
        return None, None, token
    width = sp.ends[i] - sp.starts[i]
    frac = (time_s - sp.starts[i]) / width if width > 0 else 0.0
    return sp.steps[i], round(sp.steps[i] + min(max(frac, 0.0), 0.999999), 6), token


@dataclass
class Attribution:
    """Another realm's counts per measured step: ``per_step[i]`` (counter → calls) for measured
    step ``spans.steps[i]``; ``live[i]`` its live-object (and emulation) values at that step's
    end; ``after`` the calls reported after the last measured step ended (on no step) and
    ``total`` every call it reported."""

    per_step: list[dict[str, int]]
    live: list[dict[str, float]]
    after: dict[str, int]
    total: dict[str, int]


def cumulative(points: Iterable[tuple[str, int, float, dict | None, dict | None]]) -> list[tuple[float, dict, dict]]:
    """One realm's ``(kind, step, time_s, counters, values)`` samples — ``step`` samples and
    ``open_step`` samples, ``counters`` the deltas of its (open) step, ``values`` its live
    objects and emulation values — in the order made → ``(time_s, cumulative counts, values)``
    points: each ``open_step`` adds its counts to the total of the steps before it."""
    done: dict[str, int] = {}  # the realm's closed steps, summed
    out = []
    for kind, _step, t, counters, values in sorted(points, key=lambda p: (p[2], p[0] == "step")):
        c = {k: v for k, v in (counters or {}).items() if isinstance(v, (int, float))}
        if kind == "step":
            for k, v in c.items():
                done[k] = done.get(k, 0) + v
            out.append((t, dict(done), values or {}))
        else:
            out.append((t, {k: done.get(k, 0) + c.get(k, 0) for k in set(done) | set(c)}, values or {}))
    return out


def resolution_ms(t_ms: Iterable[float]) -> float:
    """The tick of the clocks that made ``t_ms`` (ms): the coarsest of 1, 0.1, 0.01, 0.001 that
    every value is a multiple of (WebKitGTK's ``performance.now()`` and ``timeOrigin`` tick in
    whole ms; Chromium's in 0.1 ms, finer when cross-origin isolated)."""
    values = [float(t) for t in t_ms]
    for tick in (1.0, 0.1, 0.01, 0.001):
        if all(abs(v / tick - round(v / tick)) < 1e-4 for v in values):
            return tick
    return 0.0


def attribute(points: list[tuple[float, dict, dict]], sp: Spans, tolerance_s: float = 0.0) -> Attribution:
    """Place one realm's cumulative points (:func:`cumulative`) on the measured steps: step i
    gets what the realm reported after step i−1's cut up to step i's cut, a step's cut being its
    end less ``tolerance_s``. A point at a step's end, or within the two realms' clock ticks
    before it (``tolerance_s``: clocks that tick in whole ms cannot order two events in the
    same ms), counts in the next step: a realm that reacts to the measured realm's step (a page
    drawing each token the worker made) is then counted with the step that follows, as its
    calls are."""
    times = [p[0] for p in points]
    names = sorted({k for _, c, _ in points for k in c})

    def at(t: float) -> tuple[dict, dict]:
        j = bisect.bisect_left(times, t)  # points strictly before t
        return (points[j - 1][1], points[j - 1][2]) if j else ({}, {})

    per, live, before = [], [], {}
    for end in sp.ends:
        now, values = at(end - tolerance_s)
        per.append({k: int(now.get(k, 0) - before.get(k, 0)) for k in names})
        live.append(dict(values))
        before = now
    last = points[-1][1] if points else {}
    return Attribution(per, live, {k: int(last.get(k, 0) - before.get(k, 0)) for k in names},
                       {k: int(last.get(k, 0)) for k in names})
