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
      |      /  |      /  |      /  |      back), or MIN_RETURNS floors or more are back at its
      |    /    |    /    |    /    |      first value (the last, or none rising), or never rose but fell
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

from harness.stats.estimators import CONFIDENCE, stratified_theil_sen

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
    growth); ``falls``: positions where the series itself fell (by more than its noise for a
    measured series), ``collections``: positions where its own collected counter rose (both
    among ``events``); ``growth_per_token`` with ``growth_low``/``growth_high`` and
    ``growth_basis``: THE growth estimate of this series in this cell (:func:`growth_of`), the one
    every table, finding and file prints (``growth_why`` when there is none); ``reason``: the
    class in words, a template whose ``{name}`` fields are quantities in ``reason_values``
    (``name → [value, unit]``) for the report's formatter to write (:meth:`reason_text`)."""

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
    reason_values: dict = field(default_factory=dict)
    falls: list[float] = field(default_factory=list)
    collections: list[float] = field(default_factory=list)
    growth_per_token: float | None = None
    growth_low: float | None = None
    growth_high: float | None = None
    growth_basis: str = ""
    growth_why: str = ""

    def reason_text(self, fmt=None) -> str:
        """:attr:`reason` with its quantities written by ``fmt(value, unit)`` (the report's
        :func:`harness.report.format.value`; default: 4 significant digits and the unit)."""
        fmt = fmt or (lambda v, u: "—" if v is None else f"{v:.4g} {u}")
        return self.reason.format(**{k: fmt(v, u) for k, (v, u) in self.reason_values.items()})

    def to_dict(self) -> dict:
        """JSON-ready dict (non-finite numbers as None)."""
        def clean(v):
            if isinstance(v, (float, np.floating)):
                return float(v) if np.isfinite(v) else None
            if isinstance(v, dict):
                return {k: clean(x) for k, x in v.items()}
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
    three robust standard deviations (1.4826 × the median absolute deviation) of its changes
    that are not falls (rises and zeros). The falls are left out because they are what is being
    looked for: in a sawtooth (a JS heap collected every few tokens) a third of the changes are
    falls, and a spread taken over all of them is the size of the sawtooth itself, which would
    hide every collection. A fall larger than this is a drop."""
    d = np.diff(np.asarray(y, float))
    d = d[d >= 0]
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
    is fitted (see the module docstring for the rest). Its growth estimate: :func:`growth_of`."""
    t, y = np.asarray(t, float), np.asarray(y, float)
    ok = np.isfinite(t) & np.isfinite(y)
    t, y = per_token(t[ok], y[ok])
    if not len(t):
        return None
    lo_t, hi_t = t[0], t[-1]
    forced = sorted({int(f) for f in forced if lo_t <= f <= hi_t})
    collected = sorted({float(e) for e in events if lo_t <= e <= hi_t})
    falls = drops(t, y, tolerance)
    own = sorted(set(collected) | set(falls))
    ev = sorted(set(own) | {float(f) for f in forced})
    mc = MemoryClass(cell, series, label, unit, "too-few-samples", int(len(t)), float(y[0]), float(y[-1]),
                     float(y.max()), ev, forced, falls=falls, collections=collected)
    if len(t) < MIN_POINTS:
        mc.reason = f"{too_few(len(t))}: no slope, interval or class"
        growth_of(mc, t, y)
        return mc
    mc.floors = floors_of(t, y, ev)
    mc.rate = segment_rate(t, y, ev)
    ft, fy = thin(t, y, FIT_POINTS)
    s_slope, s_lo, _, _ = stratified_theil_sen([(ft, fy)])
    mc.series_slope = s_slope
    floors = mc.floors
    if len(floors) >= MIN_FLOORS:
        fx = np.array([f[0] for f in floors])
        fyy = np.array([f[1] for f in floors])
        mc.floor_slope, mc.floor_low, mc.floor_high = floor_slope(fx, fyy, mc.rate)
    rose = y.max() > y[0] + tolerance
    mc.reason_values = {"first": [float(y[0]), unit], "max": [float(y.max()), unit], "noise": [tolerance, unit]}
    moved = (" never rose above its first value" if y.max() <= y[0] else
             " rose no more than its noise ({noise}) above its first value")
    if not rose:
        if own and len(own) < MIN_RETURNS and len(floors) < MIN_FLOORS:
            # one fall of a series that never rose: flat until then; not "bounded" (that needs 3
            # floors or 2 drops that each brought it back), and a fall is no collection
            at = float(own[0])
            mc.kind = "flat"
            mc.reason_values["last"] = [float(y[-1]), unit]
            what = "a collection" if collected else "a fall, no collection seen"
            where = "its last position" if at == hi_t else f"token {at:.0f}"
            mc.reason = (f"stayed at or below its first value ({{first}}) until {where}, where it fell to {{last}} "
                         f"({what}): one drop, not enough to call it bounded")
        elif own:
            mc.kind = "bounded"
            mc.reason = f"{moved[1:]}; {_drops_words(mc)}"
            if mc.floor_slope is not None:
                mc.reason += f"; {_floor_words(mc)}"
        else:
            mc.kind = "flat"
            if np.all(y == y[0]):  # every value equal: its floor (and everything else) stays put
                mc.floor_slope, mc.floor_low, mc.floor_high = 0.0, 0.0, 0.0
            mc.reason = (f"{moved[1:]} and never fell" + (" by more than its noise" if tolerance else "") +
                         ": nothing new kept, nothing collected")
        growth_of(mc, t, y)
        return mc
    if len(floors) >= MIN_FLOORS:
        fx = np.array([f[0] for f in floors])
        fyy = np.array([f[1] for f in floors])
        one_token = max(mc.rate or 0.0, 0.0)
        came_back = fyy[-1] <= fyy[0] + one_token and fyy.max() > fyy[0] + one_token
        if mc.floor_low is not None and mc.floor_low > 0 and not came_back:
            mc.kind = "retained-growth"
            mc.reason_values["kept"] = [mc.floor_slope * (fx[-1] - fx[0]), unit]
            mc.reason = (f"its floor after each of {len(floors)} drops rises ({{kept}} over {fx[-1] - fx[0]:.0f} "
                         f"tokens; {_floor_words(mc)}): what the collections leave grows")
        elif came_back:
            mc.kind = "growing-until-collected"
            back = next(x for x, v in zip(fx, fyy) if x > fx[int(np.argmax(fyy))] and v <= fyy[0] + one_token)
            mc.reason_values.update(top=[float(fyy.max()), unit], back=[float(fyy[-1]), unit])
            mc.reason = (f"its floor rose to {{top}} over {len(floors)} drops, then the drop at token {back:.0f} "
                         "brought it back to {back}: growth that a later collection frees")
        else:
            mc.kind = "bounded"
            mc.reason = f"{_drops_words(mc)} bring it back: {_floor_words(mc)}; max {{max}}"
        growth_of(mc, t, y)
        return mc
    rising = (mc.rate or 0) > 0 and (bool(own) or (s_slope is not None and s_slope > 0 and (s_lo is None or s_lo > 0)))
    seen = "no collection seen" if not ev else f"{len(floors)} floor(s) ({too_few(len(floors), MIN_FLOORS, 'floors')})"
    one_token = max(mc.rate or 0.0, 0.0)
    mc.reason_values["rate"] = [mc.rate, f"{unit}/token"]
    if own and len(floors) >= MIN_RETURNS and all(v <= y[0] + one_token for _, v in floors) and (floors[-1][1] <= y[0]
            + tolerance or all(b[1] <= a[1] + tolerance for a, b in zip(floors, floors[1:]))):
        mc.kind = "bounded"  # seen, not fitted (floors above the start that each sit higher: a rise too short to fit)
        mc.reason = (f"each of its {len(floors)} drops brought it back to its first value or below (within one "
                     f"token's growth); no floor slope from {too_few(len(floors), MIN_FLOORS, 'floors')}")
    elif rising:
        mc.kind = "growing-until-collected"
        mc.reason = (f"{seen} in {len(t)} positions while it rose {{rate}}{' between drops' if own else ''}; "
                     "whether collections would bring it back is not known (--gc-checkpoints N forces some)")
    elif own:
        mc.kind = "bounded"
        mc.reason = f"{_drops_words(mc)} and no significant rise ({seen})"
    else:
        mc.kind = "flat"
        mc.reason = ("rose above its first value by more than its noise ({noise}) but with no significant trend "
                     "(series slope's 95% CI includes 0) and no drop")
    growth_of(mc, t, y)
    return mc


def _drops_words(mc: MemoryClass) -> str:
    """``3 drops (2 collection events, 3 falls)``: a series' drops and what they were."""
    parts = [f"{len(mc.collections)} collection event(s)" if mc.collections else "",
             f"{len(mc.falls)} fall(s)" if mc.falls else "", f"{len(mc.forced)} forced" if mc.forced else ""]
    return f"{len(mc.events)} drop(s) ({', '.join(p for p in parts if p)})"


def _floor_words(mc: MemoryClass) -> str:
    """The floor slope with its interval and what the interval says (the sign, or that it holds 0)."""
    mc.reason_values.update(slope=[mc.floor_slope, f"{mc.unit}/token"], low=[mc.floor_low, f"{mc.unit}/token"],
                            high=[mc.floor_high, f"{mc.unit}/token"])
    if mc.floor_low is None:
        return "floor slope {slope} (no interval)"
    says = ("floors rise" if mc.floor_low > 0 else "floors fall" if mc.floor_high < 0 else
            "no trend in the floors: 95% CI includes 0")
    return f"floor slope {{slope}} [{{low}}, {{high}}], {says}"


def growth_fit(strata: list, res: float = 0.0, confidence: float = CONFIDENCE
               ) -> tuple[float | None, float | None, float | None]:
    """(slope, low, high) per token over ``strata`` (``(positions, values)`` pairs: one cell's
    floors, its stretches between drops, or those of several repetitions): the stratified
    Theil–Sen slope with Sen's 95% CI (:func:`harness.stats.estimators.stratified_theil_sen`,
    thinned by :func:`fit_strata`), widened to at least ± ``res`` (one token's growth over the
    floors' span). The one fit behind every growth per token: a cell's (:func:`growth_of`) and a
    group's pooled over repetitions (harness/stats/estimates.py), so one repetition gives the same
    numbers in both."""
    slope, lo, hi, _ = stratified_theil_sen(fit_strata(strata), confidence)
    if slope is None:
        return None, None, None
    if res:
        lo, hi = (slope - res, slope + res) if lo is None else (min(lo, slope - res), max(hi, slope + res))
    return slope, lo, hi


def growth_strata(mc: MemoryClass, t: np.ndarray, y: np.ndarray) -> tuple[str, list, float, str]:
    """What a series' growth per token is fitted to: ``(basis, strata, res, why)``. ``floors``:
    its :data:`MIN_FLOORS` or more floors (``res``: one token's growth over their span);
    ``flat``: a flat series, every position (0 when every value is equal); ``series``: the
    stretches between drops (the rate between drops; the whole series without a drop);
    ``too-few`` (``why`` says what is missing): fewer than :data:`MIN_POINTS` positions, or a
    bounded series with fewer than :data:`MIN_FLOORS` floors."""
    if mc.kind == "too-few-samples":
        return "too-few", [], 0.0, too_few(mc.points)
    if len(mc.floors) >= MIN_FLOORS:
        fx = np.array([f[0] for f in mc.floors])
        fy = np.array([f[1] for f in mc.floors])
        span = fx.max() - fx.min()
        return "floors", [(fx, fy)], (max(mc.rate or 0.0, 0.0) / span if span else 0.0), ""
    if mc.kind == "flat":
        return "flat", [(t, y)], 0.0, ""
    if mc.kind == "bounded":  # brought back by too few collections to fit floors: no growth slope
        return "too-few", [], 0.0, too_few(len(mc.floors), MIN_FLOORS, "floors")
    return "series", segments(t, y, mc.events), 0.0, ""


def growth_of(mc: MemoryClass, t: np.ndarray, y: np.ndarray) -> None:
    """Sets ``mc``'s growth per token (:func:`growth_strata`, :func:`growth_fit`), computed once."""
    basis, strata, res, why = growth_strata(mc, t, y)
    mc.growth_basis, mc.growth_why = basis, why
    if strata:
        mc.growth_per_token, mc.growth_low, mc.growth_high = growth_fit(strata, res)


def floor_slope(fx: np.ndarray, fy: np.ndarray, rate: float | None
                ) -> tuple[float | None, float | None, float | None]:
    """(slope, low, high) of floors at positions ``fx``: :func:`growth_fit` of the floors, the
    interval widened to at least ± one token's growth (``rate``, units per token) over the
    floors' span, because where in a token a collection lands moves a floor by up to that much.
    ``(None, None, None)`` with fewer than :data:`MIN_FLOORS` floors or a zero span."""
    fx, fy = np.asarray(fx, float), np.asarray(fy, float)
    if len(fx) < MIN_FLOORS or fx.max() == fx.min():
        return None, None, None
    return growth_fit([(fx, fy)], max(rate or 0.0, 0.0) / (fx.max() - fx.min()))
