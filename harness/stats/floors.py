"""Drops, floors and the class of one memory-like series — *flat*, *bounded*, *growing until
collected*, *retained growth* — with the evidence each needs (used by harness/stats/memory.py,
the one memory analysis of a cell).

A series' *drops* are its own: the steps in which its own collected counter rose (bind groups,
buffer wrappers), or in which it fell — an exact count by any amount, a measured series by more
than its noise (:func:`noise`: three robust standard deviations of its step-to-step changes) —
and the forced collections. A *floor* is the series' own minimum between one drop and the next
(or the end): what that collection left. Floors are never read at another series' collections.

Classes (:func:`classify`)::

    value
      |        /|        /|        /|      bounded: the floors stay flat (collections bring it
      |      /  |      /  |      /  |      back), or each of MIN_RETURNS or more floors is back at
      |    /    |    /    |    /    |      its first value, or it never rose above it but fell
      |  /      |  /      |  /      |      retained growth: at least MIN_FLOORS floors that rise
      |/________|/________|/________|___   (Sen's 95% CI of their slope above 0, more than one
                ^         ^         ^      token's growth over their span): a leak
                 drops (a floor after each)

    flat: it never rose and never fell (nothing new kept, nothing collected), or rose by no
    more than noise without a drop. growing until collected: it rises and the run shows fewer
    than MIN_FLOORS floors (no collection seen, or too few to tell), or the floors rose and a
    later collection brought them back (within one token's growth). retained wrappers: GPUBuffer
    wrappers whose floors rise while the buffers themselves were destroyed (their GPU memory
    freed): references kept in JS, not GPU memory. too few samples: fewer than MIN_POINTS
    positions — no slope, no interval, no class.

The *rate between drops* is the Theil–Sen slope within the stretches between drops (pairs of
positions in one stretch only).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from harness.stats.estimators import stratified_theil_sen, theil_sen

#: Fewest positions a series needs for a slope, an interval or a class: Sen's interval for a
#: Theil–Sen slope rests on the normal approximation of Kendall's S, which is tabulated exactly
#: up to about 10 points because the approximation is poor below that. Fewer: "too few samples (n=K)".
MIN_POINTS = 10
#: Fewest floors a floor slope (and so "retained growth") is fitted to: with 3 floors Sen's
#: interval is the range of their 3 pairwise slopes, so "rising" means every pair rises.
MIN_FLOORS = 3
#: Longest series a slope is fitted to whole (Theil–Sen takes every pair, O(n²)): longer ones
#: (or all the stretches of one series together) are thinned evenly to this many positions, so
#: a fit costs the same however long the run (45,000 pairs; its interval is that of these points).
FIT_POINTS = 300

#: Fewest drops that each brought a series back to its first value (within one token's growth)
#: for it to be called bounded without a floor slope: one is a single observation.
MIN_RETURNS = 2

KINDS = ("too-few-samples", "flat", "bounded", "growing-until-collected", "retained-wrappers", "retained-growth")


def too_few(n: int, needed: int = MIN_POINTS, what: str = "samples") -> str:
    """The statement made instead of a slope, interval or class: ``too few samples (n=4)``."""
    return f"too few {what} (n={n}; needs {needed})"


@dataclass
class MemoryClass:
    """One series of one cell, classified. ``points``: positions; ``events``: its drops (own
    collections, falls, forced collections: positions), ``forced``: those from --gc-checkpoints;
    ``floors``: ``[position, value]``, its minimum after each drop; ``floor_slope`` with its 95%
    CI (units per token; only from :data:`MIN_FLOORS` floors); ``rate``: the Theil–Sen slope
    between drops; ``series_slope``: through every point (shown for contrast, never called
    growth); ``reason``: the class in words."""

    cell: str
    series: str
    label: str
    unit: str
    kind: str
    points: int
    first: float
    last: float
    max: float
    events: list[float] = field(default_factory=list)
    forced: list[int] = field(default_factory=list)
    floors: list[list[float]] = field(default_factory=list)
    floor_slope: float | None = None
    floor_low: float | None = None
    floor_high: float | None = None
    rate: float | None = None
    series_slope: float | None = None
    reason: str = ""

    def to_dict(self) -> dict:
        """JSON-ready dict (non-finite numbers as None)."""
        def clean(v):
            if isinstance(v, (float, np.floating)):
                return float(v) if np.isfinite(v) else None
            return [clean(x) for x in v] if isinstance(v, list) else v

        return {k: clean(v) for k, v in asdict(self).items()}

    @property
    def growth(self) -> tuple[float | None, str]:
        """(bytes or objects per token, which slope) a projection uses: the floor slope for retained
        growth, the rate between drops for growing-until-collected, (None, why not) otherwise."""
        if self.kind == "retained-growth":
            return self.floor_slope, "floor slope"
        if self.kind == "growing-until-collected":
            return self.rate, "rate between collections"
        if self.kind == "too-few-samples":
            return None, too_few(self.points)
        return None, "not projected"


def per_token(t: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One value per position (the last one seen there), positions ascending."""
    if not len(t):
        return np.asarray(t, float), np.asarray(y, float)
    s = pd.Series(np.asarray(y, float), index=np.asarray(t, float))
    s = s[~s.index.duplicated(keep="last")].sort_index()
    return s.index.to_numpy(float), s.to_numpy(float)


def segments(t: np.ndarray, y: np.ndarray, events) -> list[tuple[np.ndarray, np.ndarray]]:
    """The stretches of a series between drops (a drop's position starts the next one):
    ``[(positions, values), ...]``, the drops between them."""
    t, y = np.asarray(t, float), np.asarray(y, float)
    seg = np.searchsorted(np.asarray(sorted(events), float), t, side="right")
    return [(t[seg == k], y[seg == k]) for k in np.unique(seg)]


def thin(x: np.ndarray, y: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """At most ``n`` evenly spaced points of a series (first and last kept)."""
    if len(x) <= n:
        return x, y
    idx = np.linspace(0, len(x) - 1, n).round().astype(int)
    return x[idx], y[idx]


def fit_strata(strata: list[tuple[np.ndarray, np.ndarray]], points: int | None = None) -> list:
    """``strata`` thinned evenly so that together they hold at most ``points`` positions
    (default :data:`FIT_POINTS`; each keeps its share, at least 2), for a Theil–Sen fit whose
    cost does not grow with the run."""
    points = FIT_POINTS if points is None else points
    total = sum(len(x) for x, _ in strata)
    if total <= points:
        return strata
    return [thin(np.asarray(x), np.asarray(y), max(2, int(round(points * len(x) / total)))) for x, y in strata]


def segment_rate(t: np.ndarray, y: np.ndarray, events) -> float | None:
    """Rate between drops (units per token): the Theil–Sen slope within the stretches between
    drops (:func:`harness.stats.estimators.stratified_theil_sen`); None without a stretch of two
    positions."""
    return stratified_theil_sen(fit_strata(segments(t, y, events)))[0]


def noise(y: np.ndarray) -> float:
    """How far a measured series moves from one position to the next without a collection:
    three robust standard deviations (1.4826 × the median absolute deviation) of its changes.
    A fall larger than this is a drop."""
    d = np.diff(np.asarray(y, float))
    if len(d) < 2:
        return 0.0
    return float(3 * 1.4826 * np.median(np.abs(d - np.median(d))))


def drops(t: np.ndarray, y: np.ndarray, tolerance: float = 0.0) -> list[float]:
    """Positions at which a series fell by more than ``tolerance`` from the position before."""
    t, y = np.asarray(t, float), np.asarray(y, float)
    if len(y) < 2:
        return []
    return [float(p) for p in t[1:][np.diff(y) < -tolerance]]


def floors_of(t: np.ndarray, y: np.ndarray, events) -> list[list[float]]:
    """``[[position, value], ...]``: the series' minimum in each stretch that starts at a drop
    (from it to the next drop or the end); stretches with no position are skipped."""
    t, y = np.asarray(t, float), np.asarray(y, float)
    ev = np.asarray(sorted(set(float(e) for e in events)), float)
    if not len(ev) or not len(t):
        return []
    stretch = np.searchsorted(ev, t, side="right") - 1   # -1: before the first drop, not a floor
    keep = stretch >= 0
    t, y, stretch = t[keep], y[keep], stretch[keep]
    order = np.lexsort((np.arange(len(y)), y, stretch))   # by stretch, then value, then position
    first = order[np.r_[True, stretch[order][1:] != stretch[order][:-1]]] if len(order) else order
    return [[float(t[k]), float(y[k])] for k in first]


def classify(cell: str, series: str, label: str, unit: str, t: np.ndarray, y: np.ndarray,
             events=(), forced=(), tolerance: float = 0.0) -> MemoryClass | None:
    """:class:`MemoryClass` of one series (``t`` positions, ``y`` values; any order, several per
    position allowed: the last counts), or None without a point. ``events``: positions of the
    series' own collections (its collected counter rose); ``forced``: forced collections; its
    falls by more than ``tolerance`` (0 for exact counts, :func:`noise` for measured series) are
    drops too. Below :data:`MIN_POINTS` positions the kind is ``too-few-samples`` and nothing
    is fitted (see the module docstring for the rest)."""
    t, y = np.asarray(t, float), np.asarray(y, float)
    ok = np.isfinite(t) & np.isfinite(y)
    t, y = per_token(t[ok], y[ok])
    if not len(t):
        return None
    lo_t, hi_t = t[0], t[-1]
    forced = sorted({int(f) for f in forced if lo_t <= f <= hi_t})
    own = sorted({float(e) for e in events if lo_t <= e <= hi_t} | set(drops(t, y, tolerance)))
    ev = sorted(set(own) | {float(f) for f in forced})
    mc = MemoryClass(cell, series, label, unit, "too-few-samples", int(len(t)), float(y[0]), float(y[-1]),
                     float(y.max()), ev, forced)
    if len(t) < MIN_POINTS:
        mc.reason = f"{too_few(len(t))}: no slope, interval or class"
        return mc
    mc.floors = floors_of(t, y, ev)
    mc.rate = segment_rate(t, y, ev)
    ft, fy = thin(t, y, FIT_POINTS)
    s_slope, s_lo, _, _ = theil_sen(ft, fy)
    mc.series_slope = s_slope
    rose = y.max() > y[0] + tolerance
    if not rose:
        mc.floor_slope, mc.floor_low, mc.floor_high = 0.0, 0.0, 0.0
        if own:
            mc.kind = "bounded"
            mc.reason = f"never rose above its first value; fell at {len(own)} drop(s)"
        else:
            mc.kind = "flat"
            mc.reason = "never rose above its first value and never fell: nothing new kept, nothing collected"
        return mc
    floors = mc.floors
    if len(floors) >= MIN_FLOORS:
        fx = np.array([f[0] for f in floors])
        fy = np.array([f[1] for f in floors])
        mc.floor_slope, mc.floor_low, mc.floor_high = floor_slope(fx, fy, mc.rate)
        slope = mc.floor_slope
        one_token = max(mc.rate or 0.0, 0.0)
        came_back = fy[-1] <= fy[0] + one_token and fy.max() > fy[0] + one_token
        if mc.floor_low is not None and mc.floor_low > 0 and not came_back:
            mc.kind = "retained-growth"
            mc.reason = (f"its floor after each of {len(floors)} drops rises ({slope * (fx[-1] - fx[0]):.4g} {unit} "
                         f"over {fx[-1] - fx[0]:.0f} tokens): what the collections leave grows")
        elif came_back:
            mc.kind = "growing-until-collected"
            back = next(x for x, v in zip(fx, fy) if x > fx[int(np.argmax(fy))] and v <= fy[0] + one_token)
            mc.reason = (f"its floor rose to {fy.max():.4g} {unit} over {len(floors)} drops, then the drop at token "
                         f"{back:.0f} brought it back to {fy[-1]:.4g}: growth that a later collection frees")
        else:
            mc.kind = "bounded"
            mc.reason = (f"{len(floors)} drops bring it back to a flat floor (floor slope {slope:.4g} {unit}/token, "
                         f"95% CI includes 0); max {mc.max:.4g}")
        return mc
    rising = (mc.rate or 0) > 0 and (bool(own) or (s_slope is not None and s_slope > 0 and (s_lo is None or s_lo > 0)))
    seen = "no collection seen" if not ev else f"{len(floors)} floor(s) ({too_few(len(floors), MIN_FLOORS, 'floors')})"
    one_token = max(mc.rate or 0.0, 0.0)
    if own and len(floors) >= MIN_RETURNS and all(v <= y[0] + one_token for _, v in floors):
        mc.kind = "bounded"  # seen, not fitted: each collection brought it back to where it started
        mc.reason = (f"each of its {len(floors)} drops brought it back to its first value or below (within one "
                     f"token's growth); no floor slope from {too_few(len(floors), MIN_FLOORS, 'floors')}")
    elif rising:
        mc.kind = "growing-until-collected"
        mc.reason = (f"{seen} in {len(t)} positions while it rose {mc.rate:.4g} {unit}/token between drops; whether "
                     "collections would bring it back is not known (--gc-checkpoints N forces some)")
    elif own:
        mc.kind = "bounded"
        mc.reason = f"falls at {len(own)} drop(s) and does not rise significantly ({seen})"
    else:
        mc.kind = "flat"
        mc.reason = "no significant rise (series slope's 95% CI includes 0) and no drop"
    return mc


def floor_slope(fx: np.ndarray, fy: np.ndarray, rate: float | None
                ) -> tuple[float | None, float | None, float | None]:
    """(slope, low, high) of floors at positions ``fx``: Theil–Sen with Sen's 95% CI, the
    interval widened to at least ± one token's growth (``rate``, units per token) over the
    floors' span, because where in a token a collection lands moves a floor by up to that much.
    ``(None, None, None)`` with fewer than :data:`MIN_FLOORS` floors or a zero span."""
    fx, fy = np.asarray(fx, float), np.asarray(fy, float)
    if len(fx) < MIN_FLOORS or fx.max() == fx.min():
        return None, None, None
    slope, lo, hi, _ = theil_sen(*thin(fx, fy, FIT_POINTS))
    if slope is None or rate is None:
        return slope, lo, hi
    res = max(rate or 0.0, 0.0) / (fx.max() - fx.min())
    lo = slope - res if lo is None else min(lo, slope - res)
    hi = slope + res if hi is None else max(hi, slope + res)
    return slope, lo, hi
